/* SPDX-License-Identifier: Apache-2.0 */
/* The size sweep options ddl-bench and ddl-gpu-bench share, with nccl-tests'
 * names: -b/--minbytes, -e/--maxbytes, -f/--stepfactor, -n/--iters. */
#ifndef DDL_BENCH_OPTS_H
#define DDL_BENCH_OPTS_H

#include <getopt.h>
#include <stddef.h>

typedef struct {
    size_t min_bytes, max_bytes;
    long factor, iters;
} bench_sweep_t;

/* Their getopt_long entries and short letters. */
#define BENCH_SWEEP_LONGOPTS                                                                                           \
    {"minbytes", required_argument, 0, 'b'}, {"maxbytes", required_argument, 0, 'e'},                                  \
        {"stepfactor", required_argument, 0, 'f'}, { "iters", required_argument, 0, 'n' }
#define BENCH_SWEEP_SHORTOPTS "b:e:f:n:"

/* Option c with its argument: 1 when it is a sweep option (*bad set when the
 * value is malformed), 0 when it is another. */
int bench_sweep_option(int c, const char *arg, bench_sweep_t *s, int *bad);
/* After the options: refuses stray arguments and an empty sweep (sizes of at
 * least min_bytes), naming them on stderr; 0 when all is well. */
int bench_sweep_check(const char *tool, int argc, char **argv, const bench_sweep_t *s, size_t min_bytes);

#endif
