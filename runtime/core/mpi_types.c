/* SPDX-License-Identifier: Apache-2.0 */
/* The system MPI's datatypes and ops for ddl's types and ops (mpi_types.h).
 * MPI has no 16-bit float types, Open MPI 4.1.4's vectorised MPI_SUM on
 * 8-bit integers saturates instead of wrapping, and MPICH 4.0.2's MPI_MIN and
 * MPI_MAX order unsigned integers as signed; those use our kernels as user ops
 * on a datatype of their own. */
#include "config.h"

#include <stdint.h>

#include "mpi_types.h"
#include "reduce.h"

/* Whether MPI's own MPI_MIN or MPI_MAX is right on an unsigned type: checked
 * once per pair with MPI_Reduce_local, on values that a signed comparison
 * orders the other way.  MPICH 4.0.2 (Debian 12's) compares unsigned
 * integers as signed in both, MPI_UNSIGNED and MPI_UINT64_T alike, and gave
 * the MPI path wrong results; where the check fails, our kernel runs as a
 * user op instead, as for the types MPI lacks. */
static int native_order_ok(ddl_dtype_t t, ddl_redop_t op)
{
    static int known[DDL_DTYPE_COUNT][DDL_REDOP_COUNT]; /* 0 not checked, 1 right, -1 wrong */
    if (!known[t][op]) {
        int max = op == DDL_REDOP_MAX;
        uint64_t got, want;
        if (t == DDL_DTYPE_U64) {
            uint64_t high = 0x8000000000000005ull, io = 1; /* high into 1: MAX gives high, MIN keeps 1 */
            MPI_Reduce_local(&high, &io, 1, MPI_UINT64_T, max ? MPI_MAX : MPI_MIN);
            got = io, want = max ? high : 1;
        } else {
            uint32_t high = 0x80000005u, io = 1;
            MPI_Reduce_local(&high, &io, 1, MPI_UINT32_T, max ? MPI_MAX : MPI_MIN);
            got = io, want = max ? high : 1;
        }
        known[t][op] = got == want ? 1 : -1;
    }
    return known[t][op] == 1;
}

static int via_user_op(ddl_dtype_t t, ddl_redop_t op)
{
    if (t == DDL_DTYPE_F16 || t == DDL_DTYPE_BF16 || t == DDL_DTYPE_I8 || t == DDL_DTYPE_U8)
        return 1;
    if ((t == DDL_DTYPE_U32 || t == DDL_DTYPE_U64) && (op == DDL_REDOP_MIN || op == DDL_REDOP_MAX))
        return !native_order_ok(t, op);
    return 0;
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

MPI_Datatype ddl_mpi_type(ddl_dtype_t dtype, ddl_redop_t op)
{
    if (op == DDL_REDOP_AVG)
        op = DDL_REDOP_SUM;
    if (via_user_op(dtype, op)) {
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

MPI_Op ddl_mpi_op(ddl_dtype_t dtype, ddl_redop_t op)
{
    if (op == DDL_REDOP_AVG)
        op = DDL_REDOP_SUM; /* then divided locally */
    if (via_user_op(dtype, op)) {
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
    if (via_user_op(dtype, op == DDL_REDOP_AVG ? DDL_REDOP_SUM : op))
        return 0;
    *type = ddl_mpi_type(dtype, op);
    *mop = ddl_mpi_op(dtype, op);
    return 1;
}
