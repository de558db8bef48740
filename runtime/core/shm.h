/* SPDX-License-Identifier: Apache-2.0 */
/* POSIX shared-memory segments: created 0600 under an unpredictable name that
 * holds the user, job and creating process, mapped by the node's ranks, then
 * unlinked at once; a name left by a rank that died before that is reaped by
 * the next communicator on the node. */
#ifndef DDL_SHM_H
#define DDL_SHM_H

#include <stddef.h>
#include "ddl.h"

typedef struct {
    void *base;
    size_t size;
    int fd; /* kept by the creator, to reserve and release memory */
    char name[128];
} ddl_shm_t;

#define DDL_SHM_PREFIX "ddl-"

/* A fresh name "/ddl-<uid>-<job>.<step>-<pid>-<seq>-<random>-<what>": <job> and
 * <step> are Slurm's when there is one, <pid> the creator's. */
void ddl_shm_make_name(char *buf, size_t len, const char *what);
/* Create a segment under a fresh name for `what` (retrying names that exist). */
ddl_status_t ddl_shm_create(const char *what, size_t size, ddl_shm_t *seg);
/* Unlink this user's segments whose creator has exited (a rank that died
 * before the names were unlinked); returns how many. */
int ddl_shm_reap_stale(void);
ddl_status_t ddl_shm_attach(const char *name, size_t size, ddl_shm_t *seg);
void ddl_shm_unlink(ddl_shm_t *seg);
void ddl_shm_detach(ddl_shm_t *seg);
/* Back [off, off+len) with memory now, so that running out of /dev/shm is an
 * error here rather than a SIGBUS later; release gives it back. */
ddl_status_t ddl_shm_reserve(ddl_shm_t *seg, size_t off, size_t len);
void ddl_shm_release(ddl_shm_t *seg, size_t off, size_t len);

#endif
