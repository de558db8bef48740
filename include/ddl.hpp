/* SPDX-License-Identifier: Apache-2.0 */
/* IBM PowerAI DDL 1.x's API over DDL lanes, for programs and frameworks
 * (Horovod's DDL backend) written for it.  Valid C and C++.
 *
 *   ddl_init(options)                 options as in DDL_OPTIONS ("-mode r:4x2
 *                                     -dump_iter 100 -dbg_level 1"); NULL reads
 *                                     DDL_OPTIONS.  Starts MPI unless it runs.
 *   ddl_allreduce(buf, count)         in place, float sum
 *   ddl_allreduce(buf, count, type, op)
 *   ddl_malloc((void **)&buf, align, bytes)
 *                                     device memory of this process's GPU when
 *                                     there is one, host memory otherwise; the
 *                                     size is padded to a multiple of align and
 *                                     the padding zeroed (reducing it is
 *                                     harmless); returns the padded size in
 *                                     bytes.  Free it with cudaFree or free.
 *   ddl_rank, ddl_size, ddl_local_rank, ddl_local_size
 *                                     one rank per GPU (helper lanes are not
 *                                     counted); before ddl_init, from MPI.
 *   ddl_finalize()                    ends MPI if ddl_init started it.
 *   ddl_allreduce_mpi(...)            in <ddl_mpi.hpp>.
 *
 * Buffers may be host or device memory (device buffers take the device path).
 * Every call returns DDL_SUCCESS (0) or a negative status that
 * ddl_status_string names, with ddl_last_error's message.
 *
 * Using the native API too: include <ddl.h> as well, in either order.  Then
 * ddl_allreduce with 2 or 4 arguments is PowerAI's and with 6 the native one,
 * and ddl_malloc with a void ** first argument is PowerAI's and with a
 * communicator the native one (C++ overloads; in C, macros that pick by
 * argument count and by _Generic). */
#ifndef DDL_HPP
#define DDL_HPP

#include <stddef.h>

#include <ddl/status.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DDL_SUCCESS 0

/* The values are the native ddl_dtype_t and ddl_redop_t ones. */
typedef enum { DDL_TYPE_FLOAT = 0, DDL_TYPE_HALF = 2 } DDL_Type;
typedef enum { DDL_OP_SUM = 0, DDL_OP_PROD = 1, DDL_OP_MIN = 2, DDL_OP_MAX = 3 } DDL_Op;
#define DDL_OP_PRODUCT DDL_OP_PROD
typedef DDL_Type ddl_type; /* this header's earlier names */
typedef DDL_Op ddl_op;

int ddl_init(const char *options);
int ddl_finalize(void);
int ddl_rank(int *rank);
int ddl_size(int *size);
int ddl_local_rank(int *rank);
int ddl_local_size(int *size);
/* What ddl_allreduce and ddl_malloc call. */
int ddl_powerai_allreduce(void *buf, size_t count, DDL_Type type, DDL_Op op);
int ddl_powerai_allreduce_float(void *buf, size_t count);
int ddl_powerai_malloc(void **ptr, int align, size_t bytes);

#ifdef __cplusplus
}

inline int ddl_allreduce(void *buf, size_t count) { return ddl_powerai_allreduce_float(buf, count); }
inline int ddl_allreduce(void *buf, size_t count, DDL_Type type, DDL_Op op)
{
    return ddl_powerai_allreduce(buf, count, type, op);
}
inline int ddl_malloc(void **ptr, int align, size_t bytes) { return ddl_powerai_malloc(ptr, align, bytes); }

#elif !defined(DDL_POWERAI_NO_RENAME) /* defined only by the library's implementation */

#define DDL_POWERAI_PICK_(a1, a2, a3, a4, a5, a6, name, ...) name
#define ddl_allreduce(...)                                                                                      \
    DDL_POWERAI_PICK_(__VA_ARGS__, (ddl_allreduce), ddl_allreduce_takes_2_4_or_6_arguments,                     \
                      ddl_powerai_allreduce, ddl_allreduce_takes_2_4_or_6_arguments, ddl_powerai_allreduce_float, \
                      ddl_allreduce_takes_2_4_or_6_arguments)(__VA_ARGS__)
/* <ddl.h> redefines DDL_NATIVE_MALLOC as its ddl_malloc. */
#ifndef DDL_NATIVE_MALLOC
#define DDL_NATIVE_MALLOC ddl_powerai_malloc
#endif
#define ddl_malloc(ptr, a, b) _Generic((ptr), void **: ddl_powerai_malloc, default: DDL_NATIVE_MALLOC)(ptr, a, b)

#endif

#endif
