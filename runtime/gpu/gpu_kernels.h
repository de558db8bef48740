/* SPDX-License-Identifier: Apache-2.0 */
/* The device reduction, callable from C.  Same results as the host kernels of
 * reduce.c: operands combined in source order, 16-bit floats widened to f32 and
 * rounded back after every operation, integers wrapping, AVG as a sum divided
 * at the end (floating types divide and round, integers take the floor). */
#ifndef DDL_GPU_KERNELS_H
#define DDL_GPU_KERNELS_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "ddl.h"

#include "ddl_limits.h"
#define DDL_GPU_MAX_SRCS DDL_MAX_GPUS

#ifdef __cplusplus
extern "C" {
#endif

/* dst[i] = srcs[0][i] op srcs[1][i] op ... for i < n, then divided by divisor
 * when op is AVG (divisor 1 leaves sums).  nsrc 1 with dst == srcs[0] only
 * divides.  dst may be one of the sources.  Queued on stream. */
cudaError_t ddl_gpu_reduce(void *dst, const void *const *srcs, int nsrc, size_t n, ddl_dtype_t dtype,
                           ddl_redop_t op, int divisor, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
