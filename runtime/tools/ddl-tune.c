/* SPDX-License-Identifier: Apache-2.0 */
/* ddl-tune: the offline form of online selection (select/online.h).  For each
 * size class from -b to -e it makes calls until the online selection has timed
 * its candidates (the system MPI path, each lane algorithm, the multiring with
 * a grid, half and twice the model's chunk) and every rank has agreed on the
 * fastest, exactly as a job's first calls do, then writes those decisions as
 * tuning-file bands with the cost model's measured numbers: each link class's
 * latency and bandwidth (a ping-pong between two owners along the lane ring
 * and along every grid dimension) and the host reduction's speed.  Every call
 * is checked against the serial sum.  Run it like the application (one
 * process per lane), then point DDL_TUNING_FILE at the file.  It asks the
 * library through select/tune.h, its tool interface, and nothing else
 * inside. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_opts.h"
#include "parse.h"
#include "tool.h"
#include "tune.h"

#define MAX_SIZES 40

static void usage(FILE *f)
{
    fprintf(f, "usage: ddl-tune [-b|--minbytes MIN] [-e|--maxbytes MAX] [-f|--stepfactor FACTOR] [-n|--iters ROUNDS]\n"
               "                [-o|--output FILE] [--dry-run] [-h|--help] [--version]\n"
               "Run online selection on sizes from MIN to MAX bytes (default 1K to 64M, factor 2: every size\n"
               "class), f32 sum in shared buffers: the system MPI path, each lane algorithm, the multiring\n"
               "(with DDL_TOPOLOGY), half and twice the model's chunk, ROUNDS rounds of each (default: as\n"
               "online selection, 5 for small sizes down to 1 for the largest); measure the links and the\n"
               "host reduction of the cost model; write the decisions to FILE (default ddl-tuning.conf).\n"
               "--dry-run checks the options, says what would run, and exits (no MPI).\n");
}

/* Values whose sum over the owners is exact in float: owner r's element i is
 * i mod 1024 + r. */
static void fill(float *buf, size_t n, int r)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (float)(i % 1024 + (size_t)r);
}

/* The first element that is not the serial sum over `owners` owners, or -1. */
static long long first_wrong(const float *buf, size_t n, int owners, double *want)
{
    for (size_t i = 0; i < n; i++) {
        *want = (double)owners * (double)(i % 1024) + (double)owners * (owners - 1) / 2;
        if ((double)buf[i] != *want)
            return (long long)i;
    }
    return -1;
}

/* Calls of `bytes` until the online selection has decided the size's class.
 * The decision is agreed, so every rank stops after the same call.  Returns
 * the calls made; 0 when the size is not chosen online (below a
 * DDL_MPI_THRESHOLD the job set). */
static long tune_size(ddl_comm_t *c, float *buf, size_t bytes)
{
    ddl_comm_info_t in;
    ddl_comm_info(c, &in);
    int owner = in.role == DDL_ROLE_OWNER;
    size_t count = bytes / sizeof(float);
    long calls = 0;
    do {
        if (owner)
            fill(buf, count, in.owner_rank);
        if (ddl_allreduce(owner ? DDL_IN_PLACE : NULL, owner ? buf : NULL, (int64_t)count, DDL_DTYPE_F32,
                          DDL_REDOP_SUM, c) != DDL_OK) {
            fprintf(stderr, "ddl-tune: rank %d: %s\n", in.rank, ddl_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        double want = 0;
        long long bad = owner ? first_wrong(buf, count, in.owner_size, &want) : -1;
        if (bad >= 0) {
            fprintf(stderr, "ddl-tune: rank %d: call %ld of %zu bytes: element %lld is %g where the serial sum is "
                    "%g; a wrong result, so no file is written (DDL_DEBUG=INFO names the candidates)\n",
                    in.rank, calls + 1, bytes, bad, (double)buf[bad], want);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        calls++;
        if (ddl_tune_state(c, bytes) == DDL_TUNE_NOT_ONLINE)
            return 0;
    } while (ddl_tune_state(c, bytes) != DDL_TUNE_DECIDED);
    return calls;
}

/* The rest of the run, from the sizes done: calls up to 256 KiB are taken to
 * cost what the last one did (latency), larger ones in proportion to size. */
static double time_left(const size_t *sizes, int nsizes, int done, double last)
{
    const double flat = 256 << 10;
    double base = (double)sizes[done] > flat ? (double)sizes[done] : flat, left = 0;
    for (int j = done + 1; j < nsizes; j++)
        left += last * ((double)sizes[j] > base ? (double)sizes[j] / base : 1);
    return left;
}

int main(int argc, char **argv)
{
    size_t min = 1024, max = 64u << 20;
    long factor = 2, rounds = 0;
    const char *path = "ddl-tuning.conf";
    int opt;
    /* Options first: --help, --version and mistakes answer at once, without MPI. */
    if (ddl_tool_info(argc, argv, "ddl-tune", usage))
        return 0;
    /* The benchmarks' names for the sweep; ddl-tune's own bounds below. */
    enum { OPT_DRY = 256 };
    int dry_run = 0;
    static const struct option longopts[] = {BENCH_SWEEP_LONGOPTS, {"output", required_argument, 0, 'o'},
                                             {"dry-run", no_argument, 0, OPT_DRY}, {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    while ((opt = getopt_long(argc, argv, BENCH_SWEEP_SHORTOPTS "o:h", longopts, NULL)) != -1) {
        int bad = 0;
        switch (opt) {
        case 'b': bad = ddl_parse_size(optarg, &min) || min < 4; break;
        case 'e': bad = ddl_parse_size(optarg, &max); break;
        case 'f': bad = ddl_parse_long(optarg, 2, 64, &factor); break;
        case 'n': bad = ddl_parse_long(optarg, 1, 1000, &rounds); break;
        case 'o': path = optarg; break;
        case OPT_DRY: dry_run = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
        if (bad) {
            fprintf(stderr, "ddl-tune: invalid value '%s' for -%c\n", optarg, opt);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ddl-tune: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (min > max) { /* no size to measure */
        fprintf(stderr, "ddl-tune: -b %zu and -e %zu: need min <= max\n", min, max);
        return 2;
    }
    if (dry_run) {
        printf("ddl-tune: would tune %zu to %zu bytes (factor %ld, %s rounds) and write %s\n", min, max, factor,
               rounds ? "the given" : "the default", path);
        return 0;
    }
    MPI_Init(&argc, &argv);
    /* Measure the algorithms themselves, not an earlier tuning file, and
     * choose as online selection does; the variables that fix a choice
     * (DDL_ALGO, DDL_LANE_ALGO, DDL_CHUNK_SIZE, DDL_MPI_THRESHOLD) fix it here too. */
    setenv("DDL_TUNING_FILE", "none", 1);
    setenv("DDL_SELECT", "online", 1);
    ddl_config_t cfg;
    ddl_comm_t *c = NULL; /* MPI_Abort below does not return */
    if (ddl_config_init(&cfg) != DDL_OK || ddl_comm_create(MPI_COMM_WORLD, &cfg, &c) != DDL_OK) {
        fprintf(stderr, "ddl-tune: %s\n", ddl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    ddl_comm_info_t in;
    ddl_comm_info(c, &in);
    int talk = in.rank == 0; /* progress on stderr: a tuning run takes minutes */
    ddl_tune_role_t role = ddl_tune_role(c);
    if (role == DDL_TUNE_NOTHING) {
        if (talk)
            fprintf(stderr, "ddl-tune: DDL_ALGO=mpi leaves nothing to choose: unset it\n");
        ddl_comm_destroy(c);
        MPI_Finalize();
        return 2;
    }
    if (role == DDL_TUNE_SERVE) {
        ddl_status_t st = ddl_serve(c);
        ddl_comm_destroy(c);
        MPI_Finalize();
        return st == DDL_OK ? 0 : 1;
    }
    int owner = in.role == DDL_ROLE_OWNER;
    float *buf = NULL;
    if (owner && ddl_malloc(c, max, (void **)&buf) != DDL_OK) {
        fprintf(stderr, "ddl-tune: %s\n", ddl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* The cost model's numbers, first: the links' latency is measured best while
     * no earlier transfer still fills their queues.  The model then uses them
     * for the candidates' chunks, as a job reading the file will. */
    if (ddl_tune_measure_model(c) != DDL_OK) {
        fprintf(stderr, "%s\n", ddl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    ddl_tune_set_rounds(c, (int)rounds);
    size_t sizes[MAX_SIZES];
    int nsizes = 0;
    for (size_t s = min; s <= max && nsizes < MAX_SIZES; s *= (size_t)factor)
        sizes[nsizes++] = s / 4 * 4;
    double started = MPI_Wtime(), last = started;
    if (talk)
        fprintf(stderr, "ddl-tune: online selection on %d sizes (%zu to %zu bytes), %s rounds of each candidate\n",
                nsizes, sizes[0], sizes[nsizes - 1], rounds ? "given" : "the default");
    for (int i = 0; i < nsizes; i++) {
        long calls = tune_size(c, buf, sizes[i]);
        double now = MPI_Wtime();
        if (talk) {
            char chosen[64] = "the MPI path (below DDL_MPI_THRESHOLD)", timed[512] = "";
            if (calls)
                ddl_tune_describe(c, sizes[i], chosen, sizeof(chosen), timed, sizeof(timed));
            fprintf(stderr, "ddl-tune: [%d/%d] %zu bytes: %s%s%s%s; %.0f s so far, about %.0f s to go\n", i + 1,
                    nsizes, sizes[i], chosen, timed[0] ? " (" : "", timed, timed[0] ? ")" : "", now - started,
                    time_left(sizes, nsizes, i, now - last));
        }
        last = now;
    }
    if (talk) {
        FILE *f = fopen(path, "w");
        if (!f) {
            fprintf(stderr, "ddl-tune: cannot write %s\n", path);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        printf("ddl-tune: chosen, per size band (bytes, algorithm, chunk):\n");
        int bands = ddl_tune_write(c, sizes, nsizes, f, stdout);
        fclose(f);
        printf("ddl-tune: wrote %s, %d band(s) (%.0f s)\n", path, bands, MPI_Wtime() - started);
    }
    if (owner)
        ddl_free(c, buf);
    ddl_comm_destroy(c);
    MPI_Finalize();
    return 0;
}
