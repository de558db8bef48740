/* SPDX-License-Identifier: Apache-2.0 */
/* A process's identity and liveness from /proc/<pid>/stat, shared by the SPANK
 * plugin (which finds a helper's owner) and ddl-helper (which watches it).
 * A pid alone can be reused: (pid, start time) names one process. */
#ifndef DDL_PROCSTAT_H
#define DDL_PROCSTAT_H

#include <sys/types.h>

typedef struct {
    char state;                   /* 'R', 'S', ..., 'Z' (ended, not yet reaped) */
    pid_t ppid;
    unsigned long long start;     /* clock ticks after boot */
} ddl_procstat_t;

/* Parse the text of a /proc/<pid>/stat file.  Returns 0, or -1 when malformed. */
int ddl_procstat_parse(const char *text, ddl_procstat_t *st);
/* Read /proc/<pid>/stat.  Returns 0, or -1 when the process does not exist. */
int ddl_procstat_read(pid_t pid, ddl_procstat_t *st);
/* 1 while the process (pid, start) runs; 0 once it has ended, been reaped or
 * its pid names another process. */
int ddl_process_alive(pid_t pid, unsigned long long start);

#endif
