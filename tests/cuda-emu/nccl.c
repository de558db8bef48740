/* SPDX-License-Identifier: Apache-2.0 */
/* Emulated NCCL over emulated devices on one host.
 *
 * A communicator is a shared-memory segment that its ranks find by the unique
 * id's name: each rank's pid, device and state, a barrier, and a slot per rank
 * through which an allreduce moves the data in pieces.  ncclAllReduce is queued
 * on the caller's stream; its worker copies the rank's piece into its slot,
 * meets the others, and reduces every slot in rank order (the same bits on
 * every rank), with libddl's host reduction kernels.
 *
 * As NCCL: two ranks of one communicator on one GPU are refused ("Duplicate
 * GPU detected"), host pointers are refused, a non-blocking communicator's
 * calls return ncclInProgress, a peer's death is an asynchronous
 * ncclRemoteError, and a peer that stalls leaves the collective waiting until
 * ncclCommAbort.  Unlike NCCL, every rank must be on this host. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <nccl.h>

#include "emu.h"
#include "reduce.h"

#define SLOT_BYTES (1u << 20)  /* each rank's piece of an allreduce, at a time */
#define MAX_RANKS 256
#define INIT_WAIT_S 120.0       /* a blocking communicator's init gives up */

typedef struct {
    _Atomic int joined, attached, gone_any;
    _Atomic unsigned arrived, generation;
    struct {
        _Atomic int pid; /* 0 until joined */
        _Atomic int gone; /* the rank aborted or destroyed its communicator */
        int phys;
    } rank[MAX_RANKS];
} shared_t;

struct ncclComm {
    shared_t *sh;
    size_t map_bytes;
    char name[NCCL_UNIQUE_ID_BYTES];
    int nranks, rank, phys, blocking;
    _Atomic int state;  /* ncclResult_t: InProgress while joining, then the async error */
    _Atomic int aborted;
    char error[256];
};

static const char *result_names[] = {"no error", "unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
                                     "unhandled system error (run with NCCL_DEBUG=INFO for details)",
                                     "internal error - please report this issue to the NCCL developers",
                                     "invalid argument (run with NCCL_DEBUG=WARN for details)",
                                     "invalid usage (run with NCCL_DEBUG=WARN for details)",
                                     "remote process exited or there was a network error",
                                     "NCCL operation in progress"};

const char *ncclGetErrorString(ncclResult_t result)
{
    return (unsigned)result < sizeof(result_names) / sizeof(result_names[0]) ? result_names[result] : "unknown result code";
}

static ncclResult_t warn(ncclComm_t comm, ncclResult_t rc, const char *msg)
{
    if (comm)
        snprintf(comm->error, sizeof(comm->error), "%s", msg);
    char host[64] = "";
    if (getenv("NCCL_DEBUG") && gethostname(host, sizeof(host)) == 0)
        fprintf(stderr, "%s:%d NCCL WARN %s\n", host, (int)getpid(), msg);
    return rc;
}

const char *ncclGetLastError(ncclComm_t comm)
{
    return comm ? comm->error : "";
}

ncclResult_t ncclGetVersion(int *version)
{
    if (!version)
        return ncclInvalidArgument;
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    if (!id)
        return ncclInvalidArgument;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    memset(id, 0, sizeof(*id));
    snprintf(id->internal, sizeof(id->internal), "/ddl-cuda-emu-nccl.%d.%ld.%ld", (int)getpid(), (long)t.tv_sec,
             t.tv_nsec);
    return ncclSuccess;
}

static size_t segment_bytes(int nranks)
{
    return sizeof(shared_t) + (size_t)nranks * SLOT_BYTES;
}

static char *slot(ncclComm_t c, int r)
{
    return (char *)(c->sh + 1) + (size_t)r * SLOT_BYTES;
}

/* Joined by all?  Then the duplicate-GPU check, and the name is dropped by
 * the last rank to see everyone (nothing is left in /dev/shm). */
static void try_finish_init(ncclComm_t c)
{
    if (atomic_load(&c->state) != ncclInProgress || atomic_load(&c->sh->joined) < c->nranks)
        return;
    for (int r = 0; r < c->nranks; r++)
        if (r != c->rank && c->sh->rank[r].phys == c->phys) {
            char msg[200];
            snprintf(msg, sizeof(msg), "Duplicate GPU detected : rank %d and rank %d both on CUDA device %s", c->rank, r,
                     emu_pci_bus_id(c->phys));
            atomic_store(&c->state, warn(c, ncclInvalidUsage, msg));
            break;
        }
    if (atomic_fetch_add(&c->sh->attached, 1) + 1 == c->nranks)
        shm_unlink(c->name);
    int expected = ncclInProgress;
    atomic_compare_exchange_strong(&c->state, &expected, ncclSuccess);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t *config)
{
    if (!comm || nranks < 1 || nranks > MAX_RANKS || rank < 0 || rank >= nranks)
        return warn(NULL, ncclInvalidArgument, "ncclCommInitRank: invalid rank or rank count");
    int phys = emu_physical(emu_current());
    if (phys < 0)
        return ncclUnhandledCudaError;
    ncclComm_t c = calloc(1, sizeof(*c));
    if (!c)
        return ncclSystemError;
    snprintf(c->name, sizeof(c->name), "%s", commId.internal);
    c->nranks = nranks;
    c->rank = rank;
    c->phys = phys;
    c->blocking = !config || config->blocking == NCCL_CONFIG_UNDEF_INT ? 1 : config->blocking;
    c->map_bytes = segment_bytes(nranks);
    int fd = shm_open(c->name, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)c->map_bytes) != 0 ||
        (c->sh = mmap(NULL, c->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
        if (fd >= 0)
            close(fd);
        free(c);
        return warn(NULL, ncclSystemError, "ncclCommInitRank: cannot create the communicator's shared memory");
    }
    close(fd);
    c->sh->rank[rank].phys = phys;
    atomic_store(&c->sh->rank[rank].pid, (int)getpid());
    atomic_fetch_add(&c->sh->joined, 1);
    atomic_store(&c->state, ncclInProgress);
    *comm = c;
    if (!c->blocking) {
        try_finish_init(c);
        return atomic_load(&c->state) == ncclInProgress ? ncclInProgress : (ncclResult_t)atomic_load(&c->state);
    }
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        try_finish_init(c);
        if (atomic_load(&c->state) != ncclInProgress)
            return (ncclResult_t)atomic_load(&c->state);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > INIT_WAIT_S)
            return warn(c, ncclSystemError, "ncclCommInitRank: the other ranks did not join");
        usleep(1000);
    }
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
    return ncclCommInitRankConfig(comm, nranks, commId, rank, NULL);
}

/* A peer that died or left: the communicator's asynchronous error. */
static int peer_lost(ncclComm_t c)
{
    for (int r = 0; r < c->nranks; r++) {
        int pid = atomic_load(&c->sh->rank[r].pid);
        if (r != c->rank && (atomic_load(&c->sh->rank[r].gone) || (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH))) {
            char msg[128];
            snprintf(msg, sizeof(msg), "rank %d (pid %d) of the communicator is gone", r, pid);
            warn(c, ncclRemoteError, msg);
            atomic_store(&c->state, ncclRemoteError);
            return 1;
        }
    }
    return 0;
}

/* Every rank here; 0 when the communicator was aborted or a peer is gone. */
static int barrier(ncclComm_t c)
{
    unsigned gen = atomic_load(&c->sh->generation);
    if (atomic_fetch_add(&c->sh->arrived, 1) + 1 == (unsigned)c->nranks) {
        atomic_store(&c->sh->arrived, 0);
        atomic_fetch_add(&c->sh->generation, 1);
        return 1;
    }
    for (unsigned spins = 0; atomic_load(&c->sh->generation) == gen; spins++) {
        if (atomic_load(&c->aborted) || ((spins & 1023) == 1023 && peer_lost(c)))
            return 0;
        if (spins > 64)
            sched_yield();
        if (spins > 4096)
            usleep(50);
    }
    return 1;
}

static size_t type_size(ddl_dtype_t t)
{
    static const unsigned char bytes[DDL_DTYPE_COUNT] = {4, 8, 2, 2, 1, 1, 4, 4, 8, 8}; /* ddl.h's order */
    return bytes[t];
}

typedef struct {
    ncclComm_t comm;
    const void *send;
    void *recv;
    size_t count;
    ddl_dtype_t dtype;
    ddl_redop_t op;
    int avg;
} allreduce_t;

static void run_allreduce(void *p)
{
    allreduce_t *a = p;
    ncclComm_t c = a->comm;
    size_t esize = type_size(a->dtype), bytes = a->count * esize;
    const char *send = emu_view(a->send, bytes);
    char *recv = emu_view(a->recv, bytes);
    if (!send || !recv) {
        emu_fault(cudaErrorIllegalAddress, "ncclAllReduce", send ? a->recv : a->send);
        return;
    }
    ddl_reduce_fn_t reduce = ddl_reduce_fn(a->dtype, a->op);
    size_t per = SLOT_BYTES / esize * esize;
    for (size_t off = 0; off < bytes; off += per) {
        size_t n = bytes - off < per ? bytes - off : per;
        memcpy(slot(c, c->rank), send + off, n);
        if (!barrier(c))
            return;
        memcpy(recv + off, slot(c, 0), n);
        for (int r = 1; r < c->nranks; r++)
            reduce(recv + off, recv + off, slot(c, r), n / esize);
        if (a->avg)
            ddl_avg_finish(recv + off, n / esize, a->dtype, c->nranks);
        if (!barrier(c)) /* nobody overwrites a slot another rank still reads */
            return;
    }
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream)
{
    static const int types[ncclNumTypes] = {
        [ncclInt8] = DDL_DTYPE_I8,     [ncclUint8] = DDL_DTYPE_U8,   [ncclInt32] = DDL_DTYPE_I32,
        [ncclUint32] = DDL_DTYPE_U32,  [ncclInt64] = DDL_DTYPE_I64,  [ncclUint64] = DDL_DTYPE_U64,
        [ncclFloat16] = DDL_DTYPE_F16, [ncclFloat32] = DDL_DTYPE_F32, [ncclFloat64] = DDL_DTYPE_F64,
        [ncclBfloat16] = DDL_DTYPE_BF16, [ncclFloat8e4m3] = -1, [ncclFloat8e5m2] = -1};
    static const int ops[ncclNumOps] = {[ncclSum] = DDL_REDOP_SUM, [ncclProd] = DDL_REDOP_PROD,
                                        [ncclMax] = DDL_REDOP_MAX, [ncclMin] = DDL_REDOP_MIN,
                                        [ncclAvg] = DDL_REDOP_SUM};
    if (!comm)
        return warn(NULL, ncclInvalidArgument, "ncclAllReduce: comm is NULL");
    if ((unsigned)datatype >= ncclNumTypes || types[datatype] < 0 || (unsigned)op >= ncclNumOps)
        return warn(comm, ncclInvalidArgument, "ncclAllReduce: invalid type or operation");
    int st = atomic_load(&comm->state);
    if (st != ncclSuccess)
        return st == ncclInProgress ? warn(comm, ncclInvalidUsage, "ncclAllReduce: the communicator is not ready")
                                    : (ncclResult_t)st;
    size_t bytes = count * type_size((ddl_dtype_t)types[datatype]);
    if (count && (emu_device_of(sendbuff) < 0 || emu_device_of(recvbuff) < 0 || !emu_view(sendbuff, bytes) ||
                  !emu_view(recvbuff, bytes)))
        return warn(comm, ncclInvalidArgument, "ncclAllReduce: a buffer is not device memory of this size "
                                                "(host pointers are not valid here)");
    if (emu_physical(emu_current()) != comm->phys)
        return warn(comm, ncclInvalidUsage, "ncclAllReduce: the current device is not the communicator's");
    allreduce_t *a = malloc(sizeof(*a));
    if (!a)
        return ncclSystemError;
    *a = (allreduce_t){comm, sendbuff, recvbuff, count, (ddl_dtype_t)types[datatype], (ddl_redop_t)ops[op],
                       op == ncclAvg};
    if (emu_enqueue(emu_stream(stream, comm->phys), run_allreduce, a, free) != cudaSuccess)
        return ncclUnhandledCudaError;
    return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)
{
    if (!comm || !asyncError)
        return ncclInvalidArgument;
    try_finish_init(comm);
    if (atomic_load(&comm->state) == ncclSuccess)
        (void)peer_lost(comm);
    *asyncError = (ncclResult_t)atomic_load(&comm->state);
    return ncclSuccess;
}

static void leave(ncclComm_t comm)
{
    atomic_store(&comm->sh->rank[comm->rank].gone, 1);
    if (atomic_load(&comm->sh->attached) < comm->nranks)
        shm_unlink(comm->name); /* some never joined: nobody else will drop the name */
    munmap(comm->sh, comm->map_bytes);
    free(comm);
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    if (!comm)
        return ncclInvalidArgument;
    emu_device_drain(comm->phys); /* the queued collectives finish first */
    leave(comm);
    return ncclSuccess;
}

/* Stops this rank's collectives where they wait; the peers see it gone. */
ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    if (!comm)
        return ncclSuccess;
    atomic_store(&comm->aborted, 1);
    emu_device_drain(comm->phys);
    leave(comm);
    return ncclSuccess;
}
