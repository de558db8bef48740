/* SPDX-License-Identifier: Apache-2.0 */
/* ddl-tune: time every candidate algorithm on the allocation it runs in, for a
 * range of sizes, and write the tuning file that picks the fastest per size
 * band, with the chunk size that was fastest for the lane algorithms, and the
 * cost model's measured numbers: each link class's latency and bandwidth (a
 * ping-pong between two owners along the lane ring and along every grid
 * dimension) and the host reduction's speed.  Run it like the application (one
 * process per lane), then point DDL_TUNING_FILE at the file. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "algo.h"
#include "bench_opts.h"
#include "bench_stats.h"
#include "comm.h"
#include "grid.h"
#include "inter.h"
#include "parse.h"
#include "reduce.h"
#include "tool.h"

#define MAX_SIZES 40

typedef struct {
    int algo, lane_algo;
    const char *name;
} candidate_t;

/* mpi, then every lane algorithm of the table (algo/inter.h), then the
 * multiring (only with a grid, DDL_TOPOLOGY): filled by list_candidates. */
#define NCAND (2 + DDL_INTER_ALGOS)
static candidate_t candidates[NCAND];
static char lane_names[DDL_INTER_ALGOS][32];

static void list_candidates(void)
{
    candidates[0] = (candidate_t){DDL_ALGO_MPI, DDL_INTER_AUTO, "mpi"};
    for (int i = 0; i < DDL_INTER_ALGOS; i++) {
        snprintf(lane_names[i], sizeof(lane_names[i]), "lane/%s", ddl_inter_algo_names[ddl_inter_algos[i].id]);
        candidates[1 + i] = (candidate_t){DDL_ALGO_LANE, (int)ddl_inter_algos[i].id, lane_names[i]};
    }
    candidates[NCAND - 1] = (candidate_t){DDL_ALGO_MULTIRING, DDL_INTER_AUTO, "multiring"};
}

static const size_t chunk_candidates[] = {256u << 10, 512u << 10, 1u << 20, 2u << 20, 4u << 20};
#define NCHUNK (int)(sizeof(chunk_candidates) / sizeof(chunk_candidates[0]))

/* Round trip of `bytes` between owners a and b (median of 20), in seconds,
 * returned on every owner.  The other owners sleep meanwhile: on an
 * oversubscribed node their spinning would be what is measured. */
static double ping_pong(ddl_comm_t *c, int a, int b, char *buf, size_t bytes)
{
    int me;
    MPI_Comm_rank(c->owners, &me);
    double t[20] = {0};
    MPI_Barrier(c->owners);
    for (int i = -5; i < 20 && (me == a || me == b); i++) {
        double t0 = MPI_Wtime();
        if (me == a) {
            MPI_Send(buf, (int)bytes, MPI_BYTE, b, 7, c->owners);
            MPI_Recv(buf, (int)bytes, MPI_BYTE, b, 7, c->owners, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, a, 7, c->owners, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)bytes, MPI_BYTE, a, 7, c->owners);
        }
        if (i >= 0)
            t[i] = MPI_Wtime() - t0;
    }
    MPI_Request done_req;
    MPI_Ibarrier(c->owners, &done_req);
    for (int done = 0; !done;) {
        MPI_Test(&done_req, &done, MPI_STATUS_IGNORE);
        if (!done)
            nanosleep(&(struct timespec){0, 200000}, NULL);
    }
    double med = bench_median(t, 20);
    MPI_Bcast(&med, 1, MPI_DOUBLE, a, c->owners);
    return med;
}

/* The model's links for dimensions 0..ndims-1: between owner 0 of node 0 and
 * of its neighbour along d (the next node for the lane ring, d = 0).  Every
 * latency is measured before any bandwidth: a link that has just carried
 * megabytes answers small messages late for a while. */
static void measure_links(ddl_comm_t *c, int ndims, ddl_link_t *links)
{
    const size_t big = 1u << 20;
    char *buf = calloc(1, big);
    int peer[DDL_GRID_MAX_DIMS];
    double small_rt[DDL_GRID_MAX_DIMS];
    for (int d = 0; d < ndims; d++) {
        peer[d] = (d == 0 ? 1 : ddl_grid_peer(&c->set.grid, 0, d, 1)) * c->info.gpus_per_node;
        small_rt[d] = ping_pong(c, 0, peer[d], buf, 8);
    }
    for (int d = 0; d < ndims; d++) {
        double big_rt = ping_pong(c, 0, peer[d], buf, big);
        links[d] = (ddl_link_t){small_rt[d] / 2, (big_rt - small_rt[d]) / 2 / (double)big};
        if (links[d].beta <= 0)
            links[d].beta = 1e-12;
    }
    free(buf);
}

/* Seconds per byte of the host f32 sum, on 16 MiB operands: out of cache, as
 * the node's buffers are. */
static double measure_gamma(void)
{
    const size_t n = (16u << 20) / sizeof(float);
    float *a = calloc(n, sizeof(float)), *b = calloc(n, sizeof(float));
    ddl_reduce_fn_t fn = ddl_reduce_fn(DDL_DTYPE_F32, DDL_REDOP_SUM);
    double t[11];
    for (int i = 0; i < 11; i++) {
        double t0 = MPI_Wtime();
        fn(a, a, b, n); /* reads 2 and writes 1 operand, as a reduction of 2 GPUs' buffers does */
        t[i] = MPI_Wtime() - t0;
    }
    free(a);
    free(b);
    return bench_median(t, 11) / (double)(n * sizeof(float));
}

static void usage(FILE *f)
{
    fprintf(f, "usage: ddl-tune [-b|--minbytes MIN] [-e|--maxbytes MAX] [-f|--stepfactor FACTOR] [-n|--iters ITERS]\n"
               "                [-o|--output FILE] [-h|--help] [--version]\n"
               "Time mpi, lane/ring, lane/rd, lane/rab and (with DDL_TOPOLOGY) multiring (f32 sum, shared\n"
               "buffers) from MIN to MAX bytes\n"
               "(default 1K to 64M, factor 4, 10 iterations), chunks of 256K to 4M for the lane\n"
               "algorithms from 1M up, and the links and the host reduction of the cost model; write\n"
               "FILE (default ddl-tuning.conf).\n");
}

/* The slowest owner's median time of `iters` calls, in microseconds. */
static double time_size(ddl_comm_t *c, float *buf, size_t count, long iters)
{
    int owner = c->info.role == DDL_ROLE_OWNER;
    double *t = calloc((size_t)iters, sizeof(double)), med = 0, worst = 0;
    for (long i = -1; i < iters; i++) { /* one warm-up call */
        if (owner)
            MPI_Barrier(c->owners);
        double t0 = MPI_Wtime();
        if (ddl_allreduce(owner ? DDL_IN_PLACE : NULL, owner ? buf : NULL, (int64_t)count, DDL_DTYPE_F32,
                          DDL_REDOP_SUM, c) != DDL_OK) {
            fprintf(stderr, "ddl-tune: rank %d: %s\n", c->info.rank, ddl_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (i >= 0)
            t[i] = MPI_Wtime() - t0;
    }
    med = bench_median(t, (size_t)iters) * 1e6;
    if (owner)
        MPI_Allreduce(&med, &worst, 1, MPI_DOUBLE, MPI_MAX, c->owners);
    free(t);
    return worst;
}

int main(int argc, char **argv)
{
    size_t min = 1024, max = 64u << 20;
    long factor = 4, iters = 10;
    const char *path = "ddl-tuning.conf";
    int opt;
    /* Options first: --help, --version and mistakes answer at once, without MPI. */
    if (ddl_tool_info(argc, argv, "ddl-tune", usage))
        return 0;
    list_candidates();
    /* The benchmarks' names for the sweep; ddl-tune's own bounds below. */
    static const struct option longopts[] = {BENCH_SWEEP_LONGOPTS, {"output", required_argument, 0, 'o'},
                                             {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    while ((opt = getopt_long(argc, argv, BENCH_SWEEP_SHORTOPTS "o:h", longopts, NULL)) != -1) {
        int bad = 0;
        switch (opt) {
        case 'b': bad = ddl_parse_size(optarg, &min) || min < 4; break;
        case 'e': bad = ddl_parse_size(optarg, &max); break;
        case 'f': bad = ddl_parse_long(optarg, 2, 64, &factor); break;
        case 'n': bad = ddl_parse_long(optarg, 1, 100000, &iters); break;
        case 'o': path = optarg; break;
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
    MPI_Init(&argc, &argv);
    /* Measure the algorithms themselves, not an earlier tuning file. */
    setenv("DDL_TUNING_FILE", "none", 1);
    ddl_config_t cfg;
    ddl_comm_t *c = NULL; /* MPI_Abort below does not return */
    if (ddl_config_init(&cfg) != DDL_OK || ddl_comm_create(MPI_COMM_WORLD, &cfg, &c) != DDL_OK) {
        fprintf(stderr, "ddl-tune: %s\n", ddl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int owner = c->info.role == DDL_ROLE_OWNER;
    if (!owner && c->helper_mode == DDL_HELPERS_SERVE) {
        ddl_status_t st = ddl_serve(c);
        ddl_comm_destroy(c);
        MPI_Finalize();
        return st == DDL_OK ? 0 : 1;
    }
    float *buf = NULL;
    if (owner && ddl_malloc(c, max, (void **)&buf) != DDL_OK) {
        fprintf(stderr, "ddl-tune: %s\n", ddl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* The cost model's numbers, first: the links' latency is measured best while
     * no earlier transfer still fills their queues. */
    int ndims = c->set.grid.ndims > 1 ? c->set.grid.ndims : 1;
    ddl_link_t links[DDL_GRID_MAX_DIMS];
    if (owner && c->info.nnodes > 1)
        measure_links(c, ndims, links);
    double gamma = measure_gamma();
    size_t sizes[MAX_SIZES];
    int nsizes = 0;
    for (size_t s = min; s <= max && nsizes < MAX_SIZES; s *= (size_t)factor)
        sizes[nsizes++] = s / 4 * 4;
    /* On one node the lane algorithms between nodes do not run: lane/ring stands
     * for all; the multiring needs a grid. */
    int ncand = c->info.nnodes == 1 ? 2 : c->set.grid.ndims > 1 ? NCAND : NCAND - 1;
    double t[NCAND][MAX_SIZES], started = MPI_Wtime();
    int talk = c->info.rank == 0; /* progress on stderr: a tuning run takes minutes */
    if (talk)
        fprintf(stderr, "ddl-tune: %d candidates x %d sizes (%zu to %zu bytes), median of %ld calls each\n", ncand,
                nsizes, sizes[0], sizes[nsizes - 1], iters);
    for (int k = 0; k < ncand; k++) {
        c->set.algo = candidates[k].algo;
        c->set.lane_algo = candidates[k].lane_algo;
        for (int i = 0; i < nsizes; i++) {
            if (owner)
                memset(buf, 0, sizes[i]);
            t[k][i] = time_size(c, buf, sizes[i] / 4, iters);
        }
        double spent = MPI_Wtime() - started;
        if (talk)
            fprintf(stderr, "ddl-tune: [%d/%d] %-14s measured; %.0f s so far, about %.0f s to go for the candidates\n",
                    k + 1, ncand, candidates[k].name, spent, spent / (k + 1) * (ncand - k - 1));
    }
    /* The winners among the lane algorithms from 1 MiB up, with each chunk size:
     * every rank needs the winners, and the owners' times decide. */
    int best[MAX_SIZES];
    for (int i = 0; i < nsizes; i++) {
        best[i] = 0;
        for (int k = 1; k < ncand; k++)
            if (t[k][i] < t[best[i]][i])
                best[i] = k;
    }
    MPI_Bcast(best, nsizes, MPI_INT, 0, c->world);
    size_t chunk[MAX_SIZES] = {0};
    for (int i = 0; i < nsizes; i++) {
        if (candidates[best[i]].algo == DDL_ALGO_MPI || sizes[i] < (1u << 20) || c->info.nnodes == 1)
            continue;
        c->set.algo = candidates[best[i]].algo;
        c->set.lane_algo = candidates[best[i]].lane_algo;
        if (talk)
            fprintf(stderr, "ddl-tune: %zu bytes: %s is fastest; trying its chunk sizes\n", sizes[i],
                    candidates[best[i]].name);
        double fastest = t[best[i]][i];
        for (int k = 0; k < NCHUNK; k++) {
            if (chunk_candidates[k] > c->scratch_bytes)
                continue;
            c->set.chunk_size = chunk_candidates[k];
            double tk = time_size(c, buf, sizes[i] / 4, iters);
            MPI_Bcast(&tk, 1, MPI_DOUBLE, 0, c->world);
            if (tk < fastest) {
                fastest = tk;
                chunk[i] = chunk_candidates[k];
            }
        }
        c->set.chunk_size = 0;
        t[best[i]][i] = fastest;
    }
    if (c->info.rank == 0) {
        FILE *f = fopen(path, "w");
        if (!f) {
            fprintf(stderr, "ddl-tune: cannot write %s\n", path);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        time_t now = time(NULL);
        fprintf(f, "# ddl-tune: %d nodes x %d GPUs x %d lanes, f32 sum, median of %ld calls, %s", c->info.nnodes,
                c->info.gpus_per_node, c->info.lanes, iters, ctime(&now));
        fprintf(f, "# %12s", "bytes");
        for (int k = 0; k < ncand; k++)
            fprintf(f, " %12s", candidates[k].name);
        fprintf(f, "   (us)\n");
        for (int i = 0; i < nsizes; i++) {
            fprintf(f, "# %12zu", sizes[i]);
            for (int k = 0; k < ncand; k++)
                fprintf(f, " %12.1f", t[k][i]);
            if (chunk[i])
                fprintf(f, "   (%s fastest with chunk=%zuK)", candidates[best[i]].name, chunk[i] >> 10);
            fprintf(f, "\n");
        }
        /* The cost model: latency and bandwidth per link class, host reduction speed. */
        if (c->info.nnodes > 1)
            for (int d = 0; d < ndims; d++)
                ddl_tuning_write_link(f, d, &links[d]);
        ddl_tuning_write_reduce(f, gamma);
        /* A band from each measured size to the next where the winner or its chunk changes. */
        printf("ddl-tune: chosen, per size band (bytes, algorithm, chunk):\n");
        for (int i = 0; i < nsizes;) {
            int j = i;
            while (j + 1 < nsizes && best[j + 1] == best[i] && chunk[j + 1] == chunk[i])
                j++;
            size_t lo = i == 0 ? 0 : sizes[i], hi = j + 1 < nsizes ? sizes[j + 1] : SIZE_MAX;
            ddl_tuning_write_band(f, lo, hi, candidates[best[i]].name, chunk[i]);
            ddl_tuning_write_band(stdout, lo, hi, candidates[best[i]].name, chunk[i]); /* what was chosen */
            i = j + 1;
        }
        fclose(f);
        printf("ddl-tune: wrote %s (%.0f s)\n", path, MPI_Wtime() - started);
    }
    if (owner)
        ddl_free(c, buf);
    ddl_comm_destroy(c);
    MPI_Finalize();
    return 0;
}
