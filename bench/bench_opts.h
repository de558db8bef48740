/* SPDX-License-Identifier: Apache-2.0 */
/* The size sweep options ddl-bench and ddl-gpu-bench share, with nccl-tests'
 * names: -b/--minbytes, -e/--maxbytes, -f/--stepfactor, -i/--stepbytes,
 * -n/--iters; and nccl-tests' -t/--nthreads, -g/--ngpus and -G/--cudagraph,
 * which ask for what these tools do not do (one thread and one GPU per
 * process, host calls): accepted with their neutral value, else refused with
 * what to do instead. */
#ifndef DDL_BENCH_OPTS_H
#define DDL_BENCH_OPTS_H

#include <getopt.h>
#include <stddef.h>

typedef struct {
    size_t min_bytes, max_bytes;
    long factor, iters;
    size_t step_bytes; /* -i: sizes grow by this many bytes (0: by factor) */
} bench_sweep_t;

/* Their getopt_long entries and short letters. */
#define BENCH_SWEEP_LONGOPTS                                                                                           \
    {"minbytes", required_argument, 0, 'b'}, {"maxbytes", required_argument, 0, 'e'},                                  \
        {"stepfactor", required_argument, 0, 'f'}, {"stepbytes", required_argument, 0, 'i'},                           \
        {"iters", required_argument, 0, 'n'}, {"nthreads", required_argument, 0, 't'},                                 \
        {"ngpus", required_argument, 0, 'g'}, { "cudagraph", required_argument, 0, 'G' }
#define BENCH_SWEEP_SHORTOPTS "b:e:f:i:n:t:g:G:"

/* Option c with its argument: 1 when it is one of these (*bad: nonzero when
 * the value is malformed, BENCH_OPT_REFUSED when it was refused with a
 * message on stderr), 0 when it is another. */
#define BENCH_OPT_REFUSED 2
int bench_sweep_option(int c, const char *arg, bench_sweep_t *s, int *bad);
/* The size after bytes (0 when past the end or on overflow). */
size_t bench_sweep_next(const bench_sweep_t *s, size_t bytes);
/* After the options: refuses stray arguments and an empty sweep (sizes of at
 * least min_bytes), naming them on stderr; 0 when all is well. */
int bench_sweep_check(const char *tool, int argc, char **argv, const bench_sweep_t *s, size_t min_bytes);

#endif
