/* SPDX-License-Identifier: Apache-2.0 */
/* State shared by the plugin's contexts: the site policy and the user's
 * --ddl-lanes value.  Each context keeps the rest of its state to itself. */
#ifndef DDL_SPANK_DDL_H
#define DDL_SPANK_DDL_H

#include <stdint.h> /* spank.h uses uint32_t without including it */
#include <slurm/spank.h>
#include <sys/types.h>

#include "options.h"

typedef struct {
    ddl_spank_policy_t policy;
    int lanes;         /* from --ddl-lanes; 0 when not given */
} ddl_spank_t;

extern ddl_spank_t ddl_spank;

/* srun tells slurmstepd, in the step's environment, that its --ddl-lanes is
 * the job's (inherited from sbatch or salloc), not the step's own. */
#define DDL_SPANK_LANES_FROM_JOB "DDL_LANES_FROM_JOB"

/* srun */
int ddl_local_init_post_opt(spank_t sp);
/* sbatch, salloc */
int ddl_alloc_option(const char *value);
/* slurmstepd */
int ddl_remote_user_init(spank_t sp);
int ddl_remote_task_init(spank_t sp);
void ddl_remote_exit(void);
int ddl_remote_task_post_fork(spank_t sp);
/* The step's task pids, for helpers that follow their owner (spank_owner.c):
 * slurmstepd makes the table before forking (user_init) and records each task
 * (task_post_fork); a helper's task looks its owner up (task_init).  Lookup
 * returns 0, or -1 when the task was not recorded. */
int ddl_owner_table_create(int ntasks);
void ddl_owner_record(spank_t sp);
int ddl_owner_lookup(int task, pid_t *pid, unsigned long long *start);
void ddl_owner_table_free(void);

#endif
