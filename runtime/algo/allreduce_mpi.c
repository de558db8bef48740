/* SPDX-License-Identifier: Apache-2.0 */
/* The system MPI_Allreduce over the owners: the fast path for small messages.
 * MPI has no 16-bit float types, and Open MPI 4.1.4's vectorised MPI_SUM on
 * 8-bit integers saturates instead of wrapping; those types use our kernels as
 * user ops on a datatype of their own. */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "gpu.h"
#include "log.h"
#include "reduce.h"

static int via_user_op(ddl_dtype_t t)
{
    return t == DDL_DTYPE_F16 || t == DDL_DTYPE_BF16 || t == DDL_DTYPE_I8 || t == DDL_DTYPE_U8;
}

/* One committed datatype per user-op type, created on first use and kept for
 * the process; the user functions find the ddl type from it. */
static MPI_Datatype user_types[DDL_DTYPE_COUNT];
static int user_types_made[DDL_DTYPE_COUNT];
static MPI_Op user_ops[DDL_REDOP_COUNT];
static int user_ops_made[DDL_REDOP_COUNT];

static void user_apply(ddl_redop_t op, void *in, void *inout, const int *len, const MPI_Datatype *dt)
{
    for (int t = 0; t < DDL_DTYPE_COUNT; t++)
        if (user_types_made[t] && user_types[t] == *dt)
            ddl_reduce_fn((ddl_dtype_t)t, op)(inout, in, inout, (size_t)*len);
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt) { user_apply(DDL_REDOP_SUM, in, inout, len, dt); }
static void user_prod(void *in, void *inout, int *len, MPI_Datatype *dt) { user_apply(DDL_REDOP_PROD, in, inout, len, dt); }
static void user_min(void *in, void *inout, int *len, MPI_Datatype *dt) { user_apply(DDL_REDOP_MIN, in, inout, len, dt); }
static void user_max(void *in, void *inout, int *len, MPI_Datatype *dt) { user_apply(DDL_REDOP_MAX, in, inout, len, dt); }

static MPI_User_function *const user_fns[] = {user_sum, user_prod, user_min, user_max};

static MPI_Datatype mpi_type(ddl_dtype_t dtype)
{
    if (via_user_op(dtype)) {
        if (!user_types_made[dtype]) {
            MPI_Type_contiguous((int)ddl_dtype_size(dtype), MPI_BYTE, &user_types[dtype]);
            MPI_Type_commit(&user_types[dtype]);
            user_types_made[dtype] = 1;
        }
        return user_types[dtype];
    }
    switch (dtype) {
    case DDL_DTYPE_F32: return MPI_FLOAT;
    case DDL_DTYPE_F64: return MPI_DOUBLE;
    case DDL_DTYPE_I32: return MPI_INT32_T;
    case DDL_DTYPE_U32: return MPI_UINT32_T;
    case DDL_DTYPE_I64: return MPI_INT64_T;
    default: return MPI_UINT64_T;
    }
}

static MPI_Op mpi_op(ddl_dtype_t dtype, ddl_redop_t op)
{
    if (op == DDL_REDOP_AVG)
        op = DDL_REDOP_SUM; /* then divided locally */
    if (via_user_op(dtype)) {
        if (!user_ops_made[op]) {
            MPI_Op_create(user_fns[op], 1, &user_ops[op]);
            user_ops_made[op] = 1;
        }
        return user_ops[op];
    }
    static const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
    return ops[op];
}

int ddl_mpi_native(ddl_dtype_t dtype, ddl_redop_t op, MPI_Datatype *type, MPI_Op *mop)
{
    if (via_user_op(dtype))
        return 0;
    *type = mpi_type(dtype);
    *mop = mpi_op(dtype, op);
    return 1;
}

/* MPI_Allreduce over the owners on host buffers. */
static ddl_status_t mpi_host(const void *sendbuf, void *recvbuf, size_t count, ddl_dtype_t dtype, ddl_redop_t op,
                             ddl_comm_t *c)
{
    MPI_Datatype type = mpi_type(dtype);
    MPI_Op mop = mpi_op(dtype, op);
    size_t esize = ddl_dtype_size(dtype);
    /* MPI counts are int: go through in pieces of at most 2^30 elements. */
    for (size_t done = 0; done < count;) {
        size_t n = count - done < (1u << 30) ? count - done : (1u << 30);
        const void *s = sendbuf == recvbuf ? MPI_IN_PLACE : (const char *)sendbuf + done * esize;
        int rc = MPI_Allreduce(s, (char *)recvbuf + done * esize, (int)n, type, mop, c->owners);
        if (rc != MPI_SUCCESS)
            return ddl_comm_fail(c, ddl_error(DDL_ERR_MPI, "MPI_Allreduce of %zu elements failed", n));
        done += n;
    }
    if (op == DDL_REDOP_AVG)
        ddl_avg_finish(recvbuf, count, dtype, c->info.owner_size);
    return DDL_OK;
}

/* Device buffers go through a host copy: the system MPI may not be CUDA-aware,
 * and its user ops (f16, bf16) run on the host. */
ddl_status_t ddl_allreduce_system_mpi(const ddl_call_t *call, ddl_comm_t *c)
{
    const void *sendbuf = call->sendbuf;
    void *recvbuf = call->recvbuf;
    size_t count = (size_t)call->count;
    ddl_dtype_t dtype = call->dtype;
    ddl_redop_t op = call->op;
    if (call->mem != DDL_MEM_DEVICE)
        return mpi_host(sendbuf, recvbuf, count, dtype, op, c);
    size_t bytes = count * ddl_dtype_size(dtype);
    if (c->bounce_bytes < bytes) {
        void *p = realloc(c->bounce, bytes);
        if (!p)
            return ddl_error(DDL_ERR_NO_MEMORY, "out of memory for a %zu-byte host copy of a device buffer", bytes);
        c->bounce = p;
        c->bounce_bytes = bytes;
    }
    ddl_status_t st = ddl_gpu_memcpy(c->bounce, sendbuf, bytes, c->set.timeout);
    if (st == DDL_OK)
        st = mpi_host(c->bounce, c->bounce, count, dtype, op, c);
    if (st == DDL_OK)
        st = ddl_gpu_memcpy(recvbuf, c->bounce, bytes, c->set.timeout);
    return st;
}

