/* POSIX shared-memory segments: created 0600 with a name unique per user, job,
 * creating process and sequence, mapped by the node's ranks, then unlinked at
 * once so that nothing is left in /dev/shm even after kill -9. */
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

/* A fresh name "/ddl-<uid>-<job>-<pid>-<seq>-<what>": <job> is the Slurm job and
 * step when there is one. */
void ddl_shm_make_name(char *buf, size_t len, const char *what);
ddl_status_t ddl_shm_create(const char *name, size_t size, ddl_shm_t *seg);
ddl_status_t ddl_shm_attach(const char *name, size_t size, ddl_shm_t *seg);
void ddl_shm_unlink(ddl_shm_t *seg);
void ddl_shm_detach(ddl_shm_t *seg);
/* Back [off, off+len) with memory now, so that running out of /dev/shm is an
 * error here rather than a SIGBUS later; release gives it back. */
ddl_status_t ddl_shm_reserve(ddl_shm_t *seg, size_t off, size_t len);
void ddl_shm_release(ddl_shm_t *seg, size_t off, size_t len);

#endif
