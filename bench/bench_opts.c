/* SPDX-License-Identifier: Apache-2.0 */
/* The shared size sweep options (bench_opts.h). */
#include "config.h"

#include <errno.h> /* program_invocation_short_name */
#include <stdio.h>

#include "bench_opts.h"
#include "parse.h"

/* nccl-tests' options for what this tool does not do: the neutral value is
 * accepted, another refused with what to do instead. */
static int only(const char *arg, long neutral, const char *opt, const char *why, int *bad)
{
    long v;
    if (ddl_parse_long(arg, 0, 1 << 20, &v) != 0) {
        *bad = 1;
    } else if (v != neutral) {
        fprintf(stderr, "%s: %s %ld: %s\n", program_invocation_short_name, opt, v, why);
        *bad = BENCH_OPT_REFUSED;
    }
    return 1;
}

int bench_sweep_option(int c, const char *arg, bench_sweep_t *s, int *bad)
{
    switch (c) {
    case 'b': *bad = ddl_parse_size(arg, &s->min_bytes); return 1;
    case 'e': *bad = ddl_parse_size(arg, &s->max_bytes); return 1;
    case 'f': /* the last of -f and -i counts */
        s->step_bytes = 0;
        *bad = ddl_parse_long(arg, 2, 1 << 20, &s->factor);
        return 1;
    case 'n': *bad = ddl_parse_long(arg, 1, 1 << 24, &s->iters); return 1;
    default: return 0;
    }
}

int bench_nccl_option(int c, const char *arg, bench_sweep_t *s, int *bad)
{
    switch (c) {
    case 'i': *bad = ddl_parse_size(arg, &s->step_bytes) || s->step_bytes == 0; return 1;
    case 't':
        return only(arg, 1, "-t", "one thread per process here: run more processes (lanes) instead", bad);
    case 'g':
        return only(arg, 1, "-g", "one GPU per process here: the GPUs come from the layout (srun --gpus-per-node, "
                    "DDL_GPUS_PER_NODE)", bad);
    case 'G': return only(arg, 0, "-G", "no CUDA graphs: the collective is timed as the host calls it", bad);
    default: return 0;
    }
}

size_t bench_sweep_next(const bench_sweep_t *s, size_t bytes)
{
    size_t next;
    if (s->step_bytes ? __builtin_add_overflow(bytes, s->step_bytes, &next)
                      : __builtin_mul_overflow(bytes, (size_t)s->factor, &next))
        return 0;
    return next <= s->max_bytes ? next : 0;
}

int bench_sweep_check(const char *tool, int argc, char **argv, const bench_sweep_t *s, size_t min_bytes)
{
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", tool, argv[optind]);
        return -1;
    }
    if (s->min_bytes < min_bytes || s->min_bytes > s->max_bytes) {
        fprintf(stderr, "%s: -b %zu and -e %zu: need %zu <= min <= max\n", tool, s->min_bytes, s->max_bytes,
                min_bytes);
        return -1;
    }
    return 0;
}
