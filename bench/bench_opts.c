/* SPDX-License-Identifier: Apache-2.0 */
/* The shared size sweep options (bench_opts.h). */
#include "config.h"

#include <stdio.h>

#include "bench_opts.h"
#include "parse.h"

int bench_sweep_option(int c, const char *arg, bench_sweep_t *s, int *bad)
{
    switch (c) {
    case 'b': *bad = ddl_parse_size(arg, &s->min_bytes); return 1;
    case 'e': *bad = ddl_parse_size(arg, &s->max_bytes); return 1;
    case 'f': *bad = ddl_parse_long(arg, 2, 1 << 20, &s->factor); return 1;
    case 'n': *bad = ddl_parse_long(arg, 1, 1 << 24, &s->iters); return 1;
    default: return 0;
    }
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
