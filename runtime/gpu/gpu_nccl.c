/* SPDX-License-Identifier: Apache-2.0 */
/* NCCL as a lane transport (gpu_nccl.h), loaded at run time.  Uses core's
 * node waits and the log. */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpu_nccl.h"
#include "log.h"
#include "poll.h"

#ifndef DDL_HAVE_NCCL
/* Built without nccl.h: the transport is never available. */
int ddl_nccl_load(char *why, size_t len)
{
    snprintf(why, len, "libddl was built without NCCL (configure found no nccl.h)");
    return 0;
}
ddl_status_t ddl_nccl_create(MPI_Comm lane_comm, double timeout, ddl_nccl_t **out)
{
    (void)lane_comm, (void)timeout, (void)out;
    return ddl_error(DDL_ERR_NOT_SUPPORTED, "libddl was built without NCCL");
}
ddl_status_t ddl_nccl_allreduce(ddl_nccl_t *n, void *buf, size_t count, ddl_dtype_t dtype, ddl_redop_t op,
                                cudaStream_t stream)
{
    (void)n, (void)buf, (void)count, (void)dtype, (void)op, (void)stream;
    return ddl_error(DDL_ERR_NOT_SUPPORTED, "libddl was built without NCCL");
}
ddl_status_t ddl_nccl_check(ddl_nccl_t *n)
{
    (void)n;
    return DDL_OK;
}
void ddl_nccl_free(ddl_nccl_t *n, int abort)
{
    (void)n, (void)abort;
}
#else
#include <nccl.h>

/* The functions the transport calls, looked up in the library. */
static struct {
    ncclResult_t (*get_unique_id)(ncclUniqueId *);
    ncclResult_t (*init_rank_config)(ncclComm_t *, int, ncclUniqueId, int, ncclConfig_t *);
    ncclResult_t (*all_reduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
    ncclResult_t (*get_async_error)(ncclComm_t, ncclResult_t *);
    ncclResult_t (*destroy)(ncclComm_t);
    ncclResult_t (*abort)(ncclComm_t);
    const char *(*error_string)(ncclResult_t);
} api;
static char load_error[256];
static int loaded;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

struct ddl_nccl {
    ncclComm_t comm;
    double timeout;
};

static void load(void)
{
    /* The dynamic linker's path first, then the toolkit found at configure time. */
    static const char *const names[] = {DDL_NCCL_LIBRARY, DDL_CUDA_LIBDIR "/" DDL_NCCL_LIBRARY};
    void *h = NULL;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !h; i++)
        h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(load_error, sizeof(load_error), "cannot load libnccl.so.2 (%s)", dlerror());
        return;
    }
    struct {
        void **fn;
        const char *name;
    } syms[] = {{(void **)&api.get_unique_id, "ncclGetUniqueId"},
                {(void **)&api.init_rank_config, "ncclCommInitRankConfig"},
                {(void **)&api.all_reduce, "ncclAllReduce"},
                {(void **)&api.get_async_error, "ncclCommGetAsyncError"},
                {(void **)&api.destroy, "ncclCommDestroy"},
                {(void **)&api.abort, "ncclCommAbort"},
                {(void **)&api.error_string, "ncclGetErrorString"}};
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
        if (!(*syms[i].fn = dlsym(h, syms[i].name))) {
            snprintf(load_error, sizeof(load_error), "libnccl.so.2 lacks %s (NCCL 2.14 or later is needed)",
                     syms[i].name);
            return;
        }
    loaded = 1;
}

int ddl_nccl_load(char *why, size_t len)
{
    pthread_once(&load_once, load);
    if (!loaded)
        snprintf(why, len, "%s", load_error);
    return loaded;
}

static ddl_status_t nccl_error(ncclResult_t rc, const char *what)
{
    return ddl_error(DDL_ERR_DEVICE, "NCCL %s failed: %s", what, api.error_string(rc));
}

struct settle_arg {
    ncclComm_t comm;
    ncclResult_t rc, state;
};

static int settled(void *arg)
{
    struct settle_arg *a = arg;
    if ((a->rc = api.get_async_error(a->comm, &a->state)) != ncclSuccess)
        return DDL_ERR_DEVICE;
    return a->state == ncclSuccess ? 1 : a->state == ncclInProgress ? 0 : DDL_ERR_DEVICE;
}

/* A non-blocking communicator's calls may return while still in progress:
 * poll its state until it settles, or until the deadline. */
static ddl_status_t settle(ncclComm_t comm, double timeout, const char *what)
{
    struct settle_arg a = {comm, ncclSuccess, ncclSuccess};
    char whole[160];
    snprintf(whole, sizeof(whole), "NCCL %s", what);
    ddl_wait_how_t w = {whole, timeout, NULL, NULL, NULL};
    ddl_status_t st = ddl_wait_until(&w, settled, &a);
    if (st == DDL_ERR_TIMED_OUT)
        return st;
    return st == DDL_OK ? DDL_OK : nccl_error(a.rc != ncclSuccess ? a.rc : a.state, what);
}

ddl_status_t ddl_nccl_create(MPI_Comm lane_comm, double timeout, ddl_nccl_t **out)
{
    int rank, size;
    MPI_Comm_rank(lane_comm, &rank);
    MPI_Comm_size(lane_comm, &size);
    ncclUniqueId id;
    ncclResult_t rc = ncclSuccess;
    if (rank == 0)
        rc = api.get_unique_id(&id);
    /* Everyone learns whether the root got an id before anyone waits in NCCL. */
    int ok = rc == ncclSuccess;
    MPI_Bcast(&ok, 1, MPI_INT, 0, lane_comm);
    if (!ok)
        return rank == 0 ? nccl_error(rc, "ncclGetUniqueId")
                         : ddl_error(DDL_ERR_DEVICE, "NCCL: the lane's first rank could not make a unique id");
    MPI_Bcast(&id, (int)sizeof(id), MPI_BYTE, 0, lane_comm);
    ddl_nccl_t *n = calloc(1, sizeof(*n));
    if (!n)
        return ddl_error(DDL_ERR_NO_MEMORY, "out of memory");
    n->timeout = timeout;
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0; /* so that a missing peer ends in our timeout, not a hang */
    rc = api.init_rank_config(&n->comm, size, id, rank, &config);
    ddl_status_t st = rc == ncclSuccess || rc == ncclInProgress ? settle(n->comm, timeout, "ncclCommInitRank")
                                                                : nccl_error(rc, "ncclCommInitRank");
    if (st != DDL_OK) {
        if (rc == ncclSuccess || rc == ncclInProgress)
            api.abort(n->comm);
        free(n);
        return st;
    }
    *out = n;
    return DDL_OK;
}

static ncclDataType_t nccl_type(ddl_dtype_t t)
{
    static const ncclDataType_t map[DDL_DTYPE_COUNT] = {
        [DDL_DTYPE_F32] = ncclFloat32, [DDL_DTYPE_F64] = ncclFloat64, [DDL_DTYPE_F16] = ncclFloat16,
        [DDL_DTYPE_BF16] = ncclBfloat16, [DDL_DTYPE_I8] = ncclInt8,    [DDL_DTYPE_U8] = ncclUint8,
        [DDL_DTYPE_I32] = ncclInt32,     [DDL_DTYPE_U32] = ncclUint32, [DDL_DTYPE_I64] = ncclInt64,
        [DDL_DTYPE_U64] = ncclUint64};
    return map[t];
}

ddl_status_t ddl_nccl_allreduce(ddl_nccl_t *n, void *buf, size_t count, ddl_dtype_t dtype, ddl_redop_t op,
                                cudaStream_t stream)
{
    static const ncclRedOp_t ops[DDL_REDOP_COUNT] = {[DDL_REDOP_SUM] = ncclSum, [DDL_REDOP_PROD] = ncclProd,
                                                     [DDL_REDOP_MIN] = ncclMin, [DDL_REDOP_MAX] = ncclMax,
                                                     [DDL_REDOP_AVG] = ncclSum};
    ncclResult_t rc = api.all_reduce(buf, buf, count, nccl_type(dtype), ops[op], n->comm, stream);
    if (rc == ncclInProgress)
        return settle(n->comm, n->timeout, "ncclAllReduce");
    return rc == ncclSuccess ? DDL_OK : nccl_error(rc, "ncclAllReduce");
}

ddl_status_t ddl_nccl_check(ddl_nccl_t *n)
{
    ncclResult_t state;
    ncclResult_t rc = api.get_async_error(n->comm, &state);
    if (rc != ncclSuccess)
        return nccl_error(rc, "ncclCommGetAsyncError");
    return state == ncclSuccess || state == ncclInProgress ? DDL_OK : nccl_error(state, "allreduce");
}

void ddl_nccl_free(ddl_nccl_t *n, int abort)
{
    if (!n)
        return;
    if (abort)
        api.abort(n->comm);
    else
        api.destroy(n->comm);
    free(n);
}
#endif
