/* The system MPI_Allreduce over the owners: the fast path for small messages.
 * MPI has no 16-bit float types, so f16 and bf16 use our kernels as user ops. */
#include "config.h"

#include <limits.h>
#include <string.h>

#include "comm.h"
#include "log.h"

static MPI_Datatype mpi_type(ddl_dtype_t dtype)
{
    switch (dtype) {
    case DDL_DTYPE_F32: return MPI_FLOAT;
    case DDL_DTYPE_F64: return MPI_DOUBLE;
    case DDL_DTYPE_I8: return MPI_INT8_T;
    case DDL_DTYPE_U8: return MPI_UINT8_T;
    case DDL_DTYPE_I32: return MPI_INT32_T;
    case DDL_DTYPE_U32: return MPI_UINT32_T;
    case DDL_DTYPE_I64: return MPI_INT64_T;
    case DDL_DTYPE_U64: return MPI_UINT64_T;
    default: return MPI_UINT16_T; /* f16, bf16: with a user op */
    }
}

#define HALF_OP(name, dtype, op)                                                                   \
    static void name(void *in, void *inout, int *len, MPI_Datatype *dt)                            \
    {                                                                                              \
        (void)dt;                                                                                  \
        ddl_reduce_fn(dtype, op)(inout, in, inout, (size_t)*len);                                  \
    }
HALF_OP(f16_sum, DDL_DTYPE_F16, DDL_REDOP_SUM)
HALF_OP(f16_prod, DDL_DTYPE_F16, DDL_REDOP_PROD)
HALF_OP(f16_min, DDL_DTYPE_F16, DDL_REDOP_MIN)
HALF_OP(f16_max, DDL_DTYPE_F16, DDL_REDOP_MAX)
HALF_OP(bf16_sum, DDL_DTYPE_BF16, DDL_REDOP_SUM)
HALF_OP(bf16_prod, DDL_DTYPE_BF16, DDL_REDOP_PROD)
HALF_OP(bf16_min, DDL_DTYPE_BF16, DDL_REDOP_MIN)
HALF_OP(bf16_max, DDL_DTYPE_BF16, DDL_REDOP_MAX)

static MPI_User_function *const half_fns[2][4] = {
    {f16_sum, f16_prod, f16_min, f16_max},
    {bf16_sum, bf16_prod, bf16_min, bf16_max},
};
static MPI_Op half_ops[2][4]; /* created on first use, kept for the process */

static MPI_Op mpi_op(ddl_dtype_t dtype, ddl_redop_t op)
{
    if (op == DDL_REDOP_AVG)
        op = DDL_REDOP_SUM;
    if (dtype == DDL_DTYPE_F16 || dtype == DDL_DTYPE_BF16) {
        int h = dtype == DDL_DTYPE_BF16;
        if (half_ops[h][op] == MPI_OP_NULL || half_ops[h][op] == 0)
            MPI_Op_create(half_fns[h][op], 1, &half_ops[h][op]);
        return half_ops[h][op];
    }
    static const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
    return ops[op];
}

ddl_status_t ddl_allreduce_mpi(const void *sendbuf, void *recvbuf, size_t count, ddl_dtype_t dtype, ddl_redop_t op,
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
