/* SPDX-License-Identifier: Apache-2.0 */
/* POSIX shared-memory segments, named, mapped and unlinked (shm.h).  Uses the
 * log. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "node.h"
#include "shm.h"

/* A name nobody can guess ahead: another local user who creates it first
 * would block set-up (O_EXCL), so the creator retries with fresh names. */
void ddl_shm_make_name(char *buf, size_t len, const char *what)
{
    static unsigned seq;
    const char *job = getenv("SLURM_JOB_ID");
    const char *step = getenv("SLURM_STEP_ID");
    uint64_t nonce = 0;
    if (getrandom(&nonce, sizeof(nonce), GRND_NONBLOCK) != (ssize_t)sizeof(nonce))
        nonce = (uint64_t)(ddl_now() * 1e9) ^ ((uint64_t)getpid() << 32) ^ seq;
    snprintf(buf, len, "/" DDL_SHM_PREFIX "%u-%.20s.%.20s-%d-%u-%016llx-%s", (unsigned)getuid(), job ? job : "x",
             step ? step : "x", (int)getpid(), seq++, (unsigned long long)nonce, what);
}

/* "ddl-<uid>-<job>.<step>-<pid>-..." -> pid, or 0 when the name is not ours. */
static pid_t creator_of(const char *name, uid_t uid)
{
    char prefix[32];
    int n = snprintf(prefix, sizeof(prefix), DDL_SHM_PREFIX "%u-", (unsigned)uid);
    if (strncmp(name, prefix, (size_t)n) != 0)
        return 0;
    const char *dash = strchr(name + n, '-'); /* after <job>.<step> */
    if (!dash)
        return 0;
    char *end;
    long pid = strtol(dash + 1, &end, 10);
    return *end == '-' && pid > 0 && pid <= INT_MAX ? (pid_t)pid : 0;
}

int ddl_shm_reap_stale(void)
{
    DIR *dir = opendir("/dev/shm");
    if (!dir)
        return 0;
    uid_t uid = getuid();
    int reaped = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        pid_t pid = creator_of(e->d_name, uid);
        struct stat sb;
        if (pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH)
            continue;
        /* Only what this user owns: a name can be made to look like ours. */
        if (fstatat(dirfd(dir), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || sb.st_uid != uid || !S_ISREG(sb.st_mode))
            continue;
        char name[300];
        snprintf(name, sizeof(name), "/%s", e->d_name);
        if (shm_unlink(name) == 0) {
            reaped++;
            DDL_INFO(DDL_SUBSYS_SHM, "removed %s, left behind by pid %d, which has exited", name, (int)pid);
        }
    }
    closedir(dir);
    return reaped;
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

ddl_status_t ddl_shm_create(const char *what, size_t size, ddl_shm_t *seg)
{
    memset(seg, 0, sizeof(*seg));
    seg->fd = -1;
    int fd = -1;
    for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
        ddl_shm_make_name(seg->name, sizeof(seg->name), what);
        fd = shm_open(seg->name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    const char *name = seg->name;
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
    /* Every name comes from its creator; an empty one means the ranks of a
     * node disagree on who creates what, and must never reach shm_open. */
    if (strncmp(name, "/" DDL_SHM_PREFIX, strlen("/" DDL_SHM_PREFIX)) != 0)
        return ddl_error(DDL_ERR_LAYOUT, "no shared memory to open: its creator on this node sent %s name; the "
                         "node's ranks disagree on the layout (give every rank the same DDL_LANES, "
                         "DDL_GPUS_PER_NODE and DDL_NODE_SIZE)", name[0] ? "a foreign" : "an empty");
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
