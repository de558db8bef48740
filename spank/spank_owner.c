/* SPDX-License-Identifier: Apache-2.0 */
/* A helper follows its owner: the helper's task learns the pid of the task that
 * owns its GPU, so that ddl-helper can leave as soon as that task ends instead
 * of waiting out DDL_TIMEOUT.
 *
 * Slurm's pid items work only once the tasks exist (task_post_fork, in
 * slurmstepd), and slurmstepd runs every task's post_fork before it lets any
 * task go on to task_init and exec.  So slurmstepd records each task's pid in a
 * shared mapping made before the tasks were forked (user_init), and a helper's
 * task reads its owner's entry there in task_init. */
#include "config.h"

#include <stdint.h>
#include <sys/mman.h>

#include "procstat.h"
#include "spank_ddl.h"

typedef struct {
    pid_t pid; /* 0: not recorded */
    unsigned long long start;
} task_proc_t;

static task_proc_t *table;
static int table_len;

int ddl_owner_table_create(int ntasks)
{
    ddl_owner_table_free();
    void *m = mmap(NULL, (size_t)ntasks * sizeof(*table), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    table = m; /* zero-filled: nothing recorded */
    table_len = ntasks;
    return 0;
}

void ddl_owner_record(spank_t sp)
{
    int task = -1;
    pid_t pid = 0;
    ddl_procstat_t st;
    if (!table || spank_get_item(sp, S_TASK_ID, &task) != ESPANK_SUCCESS || task < 0 || task >= table_len ||
        spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS || ddl_procstat_read(pid, &st) != 0)
        return;
    table[task].start = st.start;
    table[task].pid = pid;
}

int ddl_owner_lookup(int task, pid_t *pid, unsigned long long *start)
{
    if (!table || task < 0 || task >= table_len || table[task].pid <= 0)
        return -1;
    *pid = table[task].pid;
    *start = table[task].start;
    return 0;
}

void ddl_owner_table_free(void)
{
    if (table)
        munmap(table, (size_t)table_len * sizeof(*table));
    table = NULL;
    table_len = 0;
}
