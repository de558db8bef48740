/* SPDX-License-Identifier: Apache-2.0 */
/* A process's identity and liveness from /proc (procstat.h).  Pure; shared
 * with the SPANK plugin and ddl-helper. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procstat.h"

int ddl_procstat_parse(const char *text, ddl_procstat_t *st)
{
    /* "pid (comm) state ppid ...": comm may hold spaces and parentheses, so the
     * fields start after the last ')'. */
    const char *p = strrchr(text, ')');
    if (!p)
        return -1;
    char state;
    long ppid;
    int used = 0;
    if (sscanf(p + 1, " %c %ld%n", &state, &ppid, &used) != 2)
        return -1;
    /* starttime is field 22; state and ppid were fields 3 and 4. */
    p += 1 + used;
    for (int field = 5;; field++) {
        p += strspn(p, " ");
        if (!*p)
            return -1;
        if (field == 22)
            break;
        p += strcspn(p, " ");
    }
    char *end;
    unsigned long long start = strtoull(p, &end, 10);
    if (end == p)
        return -1;
    st->state = state;
    st->ppid = (pid_t)ppid;
    st->start = start;
    return 0;
}

int ddl_procstat_read(pid_t pid, ddl_procstat_t *st)
{
    char path[64], text[1024];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    return ddl_procstat_parse(text, st);
}

int ddl_process_alive(pid_t pid, unsigned long long start)
{
    ddl_procstat_t st;
    return ddl_procstat_read(pid, &st) == 0 && st.start == start && st.state != 'Z' && st.state != 'X';
}
