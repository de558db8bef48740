/* SPDX-License-Identifier: Apache-2.0 */
/* The sizes and names of the public types and ops (ddl.h's ddl_dtype_size,
 * ddl_dtype_name, ddl_redop_name).  Uses nothing. */
#include "config.h"

#include "ddl.h"

static const struct {
    const char *name;
    size_t size;
} dtypes[DDL_DTYPE_COUNT] = {
    [DDL_DTYPE_F32] = {"float", 4}, [DDL_DTYPE_F64] = {"double", 8}, [DDL_DTYPE_F16] = {"half", 2},
    [DDL_DTYPE_BF16] = {"bfloat16", 2}, [DDL_DTYPE_I8] = {"int8", 1}, [DDL_DTYPE_U8] = {"uint8", 1},
    [DDL_DTYPE_I32] = {"int32", 4}, [DDL_DTYPE_U32] = {"uint32", 4}, [DDL_DTYPE_I64] = {"int64", 8},
    [DDL_DTYPE_U64] = {"uint64", 8},
};

static const char *const redops[DDL_REDOP_COUNT] = {"sum", "prod", "min", "max", "avg"};

const char *ddl_dtype_name(ddl_dtype_t dtype)
{
    return (unsigned)dtype < DDL_DTYPE_COUNT ? dtypes[dtype].name : "unknown";
}

size_t ddl_dtype_size(ddl_dtype_t dtype)
{
    return (unsigned)dtype < DDL_DTYPE_COUNT ? dtypes[dtype].size : 0;
}

const char *ddl_redop_name(ddl_redop_t op)
{
    return (unsigned)op < DDL_REDOP_COUNT ? redops[op] : "unknown";
}

const char *ddl_status_string(ddl_status_t status)
{
    switch (status) {
    case DDL_OK: return "success";
    case DDL_ERR_INVALID_ARG: return "invalid argument";
    case DDL_ERR_NO_MEMORY: return "out of memory";
    case DDL_ERR_NOT_SUPPORTED: return "not supported";
    case DDL_ERR_TIMED_OUT: return "timed out";
    case DDL_ERR_PEER_FAILED: return "peer failed";
    case DDL_ERR_SYSTEM: return "system error";
    case DDL_ERR_MPI: return "MPI error";
    case DDL_ERR_MISMATCH: return "arguments differ between ranks";
    case DDL_ERR_LAYOUT: return "invalid layout";
    case DDL_ERR_DEVICE: return "CUDA or NCCL failure";
    case DDL_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}
