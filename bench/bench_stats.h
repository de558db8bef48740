/* SPDX-License-Identifier: Apache-2.0 */
/* Small statistics for ddl-bench. */
#ifndef DDL_BENCH_STATS_H
#define DDL_BENCH_STATS_H

#include <stddef.h>

/* Median of n samples (sorts them in place). */
double bench_median(double *v, size_t n);

#endif
