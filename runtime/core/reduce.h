/* SPDX-License-Identifier: Apache-2.0 */
/* Elementwise reduction kernels, one per (type, op). */
#ifndef DDL_REDUCE_H
#define DDL_REDUCE_H

#include <stddef.h>
#include "ddl.h"

/* dst[i] = a[i] op b[i]; dst may be the same pointer as a or b. */
typedef void (*ddl_reduce_fn_t)(void *dst, const void *a, const void *b, size_t n);

/* The kernel for (dtype, op); DDL_REDOP_AVG gets the sum kernel (see ddl_avg_finish). */
ddl_reduce_fn_t ddl_reduce_fn(ddl_dtype_t dtype, ddl_redop_t op);

/* Turn n sums into averages over `divisor` contributions: floating types divide
 * and round as the type does, integer types take the floor of sum / divisor. */
void ddl_avg_finish(void *buf, size_t n, ddl_dtype_t dtype, int divisor);

#endif
