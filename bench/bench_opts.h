/* SPDX-License-Identifier: Apache-2.0 */
/* The size sweep options ddl-bench, ddl-gpu-bench, ddl-tune and ddl-sim
 * share, with nccl-tests' names: -b/--minbytes, -e/--maxbytes, -f/--stepfactor,
 * -n/--iters; and for the benchmarks nccl-tests' -i/--stepbytes and its
 * -t/--nthreads, -g/--ngpus and -G/--cudagraph, which ask for what these
 * tools do not do (one thread and one GPU per process, host calls): accepted
 * with their neutral value, else refused with what to do instead. */
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
        {"stepfactor", required_argument, 0, 'f'}, { "iters", required_argument, 0, 'n' }
#define BENCH_SWEEP_SHORTOPTS "b:e:f:n:"

/* Option c with its argument: 1 when it is a sweep option (*bad set when the
 * value is malformed), 0 when it is another. */
int bench_sweep_option(int c, const char *arg, bench_sweep_t *s, int *bad);

/* The rest of nccl-tests' options that the benchmarks (ddl-bench,
 * ddl-gpu-bench; not ddl-sim, whose -g, -t and -i are its own) take with
 * nccl-tests' letters: -i/--stepbytes, and -t/--nthreads, -g/--ngpus,
 * -G/--cudagraph with their neutral values. */
#define BENCH_NCCL_LONGOPTS                                                                                            \
    {"stepbytes", required_argument, 0, 'i'}, {"nthreads", required_argument, 0, 't'},                                 \
        {"ngpus", required_argument, 0, 'g'}, { "cudagraph", required_argument, 0, 'G' }
#define BENCH_NCCL_SHORTOPTS "i:t:g:G:"
/* As bench_sweep_option for these; *bad is BENCH_OPT_REFUSED when a value
 * was refused with a message on stderr. */
int bench_nccl_option(int c, const char *arg, bench_sweep_t *s, int *bad);
#define BENCH_OPT_REFUSED 2

/* The size after bytes (0 when past the end or on overflow). */
size_t bench_sweep_next(const bench_sweep_t *s, size_t bytes);
/* After the options: refuses stray arguments and an empty sweep (sizes of at
 * least min_bytes), naming them on stderr; 0 when all is well. */
int bench_sweep_check(const char *tool, int argc, char **argv, const bench_sweep_t *s, size_t min_bytes);

#endif
