#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "shm.h"

void ddl_shm_make_name(char *buf, size_t len, const char *what)
{
    static unsigned seq;
    const char *job = getenv("SLURM_JOB_ID");
    const char *step = getenv("SLURM_STEP_ID");
    snprintf(buf, len, "/ddl-%u-%s.%s-%d-%u-%s", (unsigned)getuid(), job ? job : "x",
             step ? step : "x", (int)getpid(), seq++, what);
}

static ddl_status_t map_fd(int fd, size_t size, ddl_shm_t *seg)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    if (p == MAP_FAILED)
        return ddl_error(DDL_ERR_NO_MEMORY, "cannot map %zu bytes of shared memory %s: %s", size,
                         seg->name, strerror(errno));
    seg->base = p;
    seg->size = size;
    return DDL_OK;
}

ddl_status_t ddl_shm_create(const char *name, size_t size, ddl_shm_t *seg)
{
    memset(seg, 0, sizeof(*seg));
    seg->fd = -1;
    snprintf(seg->name, sizeof(seg->name), "%s", name);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return ddl_error(DDL_ERR_SYSTEM, "cannot create shared memory %s: %s", name, strerror(errno));
    if (ftruncate(fd, (off_t)size) != 0) {
        int err = errno;
        close(fd);
        shm_unlink(name);
        return ddl_error(DDL_ERR_NO_MEMORY, "cannot size shared memory %s to %zu bytes: %s", name,
                         size, strerror(err));
    }
    ddl_status_t st = map_fd(fd, size, seg);
    if (st != DDL_OK) {
        close(fd);
        shm_unlink(name);
        return st;
    }
    seg->fd = fd;
    DDL_TRACE(DDL_SUBSYS_SHM, "created %s (%zu bytes)", name, size);
    return DDL_OK;
}

ddl_status_t ddl_shm_attach(const char *name, size_t size, ddl_shm_t *seg)
{
    memset(seg, 0, sizeof(*seg));
    seg->fd = -1;
    snprintf(seg->name, sizeof(seg->name), "%s", name);
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0)
        return ddl_error(DDL_ERR_SYSTEM, "cannot open shared memory %s: %s", name, strerror(errno));
    ddl_status_t st = map_fd(fd, size, seg);
    close(fd);
    return st;
}

void ddl_shm_unlink(ddl_shm_t *seg)
{
    if (seg->fd >= 0 && seg->name[0]) {
        shm_unlink(seg->name);
        DDL_TRACE(DDL_SUBSYS_SHM, "unlinked %s", seg->name);
    }
}

void ddl_shm_detach(ddl_shm_t *seg)
{
    if (seg->base)
        munmap(seg->base, seg->size);
    if (seg->fd >= 0)
        close(seg->fd);
    seg->base = NULL;
    seg->fd = -1;
}

ddl_status_t ddl_shm_reserve(ddl_shm_t *seg, size_t off, size_t len)
{
    int rc = posix_fallocate(seg->fd, (off_t)off, (off_t)len);
    if (rc != 0)
        return ddl_error(DDL_ERR_NO_MEMORY,
                         "cannot reserve %zu bytes of shared memory (%s): /dev/shm is too small or "
                         "full; enlarge it or use smaller buffers",
                         len, strerror(rc));
    return DDL_OK;
}

void ddl_shm_release(ddl_shm_t *seg, size_t off, size_t len)
{
    fallocate(seg->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len);
}
