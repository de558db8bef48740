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
#include "online.h"
#include "parse.h"
#include "reduce.h"
#include "tool.h"

#define MAX_SIZES 40

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
    /* The library's own waits (ddl_poll) are not exported: a deadline here. */
    MPI_Request done_req;
    MPI_Ibarrier(c->owners, &done_req);
    double deadline = MPI_Wtime() + c->set.timeout;
    for (int done = 0; !done;) {
        MPI_Test(&done_req, &done, MPI_STATUS_IGNORE);
        if (!done && MPI_Wtime() > deadline) {
            fprintf(stderr, "ddl-tune: rank %d: the owners did not all finish the ping-pong between owners %d and %d "
                    "within %.1f s (DDL_TIMEOUT)\n", c->info.rank, a, b, c->set.timeout);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
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
    fprintf(f, "usage: ddl-tune [-b|--minbytes MIN] [-e|--maxbytes MAX] [-f|--stepfactor FACTOR] [-n|--iters ROUNDS]\n"
               "                [-o|--output FILE] [-h|--help] [--version]\n"
               "Run online selection on sizes from MIN to MAX bytes (default 1K to 64M, factor 2: every size\n"
               "class), f32 sum in shared buffers: the system MPI path, each lane algorithm, the multiring\n"
               "(with DDL_TOPOLOGY), half and twice the model's chunk, ROUNDS rounds of each (default: as\n"
               "online selection, 5 for small sizes down to 1 for the largest); measure the links and the\n"
               "host reduction of the cost model; write the decisions to FILE (default ddl-tuning.conf).\n");
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
    int owner = c->info.role == DDL_ROLE_OWNER, me = 0, owners = 1;
    if (owner) {
        MPI_Comm_rank(c->owners, &me);
        MPI_Comm_size(c->owners, &owners);
    }
    const ddl_online_class_t *k = &c->online->cls[ddl_online_class_of(bytes)];
    size_t count = bytes / sizeof(float);
    long calls = 0;
    do {
        if (owner)
            fill(buf, count, me);
        if (ddl_allreduce(owner ? DDL_IN_PLACE : NULL, owner ? buf : NULL, (int64_t)count, DDL_DTYPE_F32,
                          DDL_REDOP_SUM, c) != DDL_OK) {
            fprintf(stderr, "ddl-tune: rank %d: %s\n", c->info.rank, ddl_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        double want = 0;
        long long bad = owner ? first_wrong(buf, count, owners, &want) : -1;
        if (bad >= 0) {
            fprintf(stderr, "ddl-tune: rank %d: call %ld of %zu bytes: element %lld is %g where the serial sum is "
                    "%g; a wrong result, so no file is written (DDL_DEBUG=INFO names the candidates)\n",
                    c->info.rank, calls + 1, bytes, bad, (double)buf[bad], want);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        calls++;
        if (k->state == DDL_CLASS_NEW) /* this size is not chosen online */
            return 0;
    } while (k->state != DDL_CLASS_DECIDED);
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
    static const struct option longopts[] = {BENCH_SWEEP_LONGOPTS, {"output", required_argument, 0, 'o'},
                                             {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    while ((opt = getopt_long(argc, argv, BENCH_SWEEP_SHORTOPTS "o:h", longopts, NULL)) != -1) {
        int bad = 0;
        switch (opt) {
        case 'b': bad = ddl_parse_size(optarg, &min) || min < 4; break;
        case 'e': bad = ddl_parse_size(optarg, &max); break;
        case 'f': bad = ddl_parse_long(optarg, 2, 64, &factor); break;
        case 'n': bad = ddl_parse_long(optarg, 1, 1000, &rounds); break;
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
    int talk = c->info.rank == 0; /* progress on stderr: a tuning run takes minutes */
    if (c->set.algo == DDL_ALGO_MPI) {
        if (talk)
            fprintf(stderr, "ddl-tune: DDL_ALGO=mpi leaves nothing to choose: unset it\n");
        ddl_comm_destroy(c);
        MPI_Finalize();
        return 2;
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
     * no earlier transfer still fills their queues.  The model then uses them
     * for the candidates' chunks, as a job reading the file will; every rank
     * that chooses takes rank 0's numbers, so that all plan the same chunks. */
    ddl_model_t *m = &c->set.tuning.model;
    int ndims = c->set.grid.ndims > 1 ? c->set.grid.ndims : 1;
    int links = c->info.nnodes > 1;
    if (owner && links)
        measure_links(c, ndims, m->link);
    m->gamma = measure_gamma();
    MPI_Bcast(m->link, (int)sizeof(m->link), MPI_BYTE, 0, c->select_comm);
    MPI_Bcast(&m->gamma, 1, MPI_DOUBLE, 0, c->select_comm);
    for (int d = 0; d < ndims; d++)
        m->measured[d] = links;
    c->online->job.rounds = (int)rounds;
    size_t sizes[MAX_SIZES];
    int nsizes = 0;
    for (size_t s = min; s <= max && nsizes < MAX_SIZES; s *= (size_t)factor)
        sizes[nsizes++] = s / 4 * 4;
    double started = MPI_Wtime(), last = started;
    if (talk)
        fprintf(stderr, "ddl-tune: online selection on %d sizes (%zu to %zu bytes), %s rounds of each candidate\n",
                nsizes, sizes[0], sizes[nsizes - 1], rounds ? "given" : "the default");
    char timed[DDL_ONLINE_CLASSES][512] = {{0}};
    for (int i = 0; i < nsizes; i++) {
        long calls = tune_size(c, buf, sizes[i]);
        double now = MPI_Wtime();
        const ddl_online_class_t *k = &c->online->cls[ddl_online_class_of(sizes[i])];
        if (calls && k->ncand > 1)
            ddl_online_timings(k, timed[ddl_online_class_of(sizes[i])], sizeof(timed[0]));
        if (talk) {
            char chosen[64] = "the MPI path (below DDL_MPI_THRESHOLD)";
            if (calls)
                ddl_online_describe(k, k->chosen, chosen, sizeof(chosen));
            fprintf(stderr, "ddl-tune: [%d/%d] %zu bytes: %s%s%s%s; %.0f s so far, about %.0f s to go\n", i + 1,
                    nsizes, sizes[i], chosen, k->ncand > 1 && calls ? " (" : "",
                    k->ncand > 1 && calls ? timed[ddl_online_class_of(sizes[i])] : "",
                    k->ncand > 1 && calls ? ")" : "", now - started, time_left(sizes, nsizes, i, now - last));
        }
        last = now;
    }
    /* With a step factor above 2 the sizes between two measured ones take the
     * lower one's choice: a band runs from each measured size to the next. */
    static ddl_online_t chosen;
    chosen = *c->online;
    for (int i = 0; i + 1 < nsizes; i++) {
        int from = ddl_online_class_of(sizes[i]), to = ddl_online_class_of(sizes[i + 1]);
        for (int j = from + 1; j < to && chosen.cls[from].state == DDL_CLASS_DECIDED; j++)
            chosen.cls[j] = chosen.cls[from];
    }
    if (talk) {
        FILE *f = fopen(path, "w");
        if (!f) {
            fprintf(stderr, "ddl-tune: cannot write %s\n", path);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        time_t now = time(NULL);
        fprintf(f, "# ddl-tune: %d nodes x %d GPUs x %d lanes, %s helpers, f32 sum, online selection, %s",
                c->info.nnodes, c->info.gpus_per_node, c->info.lanes,
                c->helper_mode == DDL_HELPERS_SERVE ? "serve" : "collective", ctime(&now));
        fprintf(f, "# the slowest rank's best time of each candidate, per size class:\n");
        for (int i = 0; i < DDL_ONLINE_CLASSES; i++)
            if (timed[i][0])
                fprintf(f, "#   %zu bytes and up: %s\n", (size_t)1 << i, timed[i]);
        fprintf(f, "# sizes outside the bands below are still chosen online\n");
        /* The cost model: latency and bandwidth per link class, host reduction speed. */
        for (int d = 0; d < ndims && links; d++)
            ddl_tuning_write_link(f, d, &m->link[d]);
        ddl_tuning_write_reduce(f, m->gamma);
        int bands = ddl_online_write(&chosen, f);
        fclose(f);
        printf("ddl-tune: chosen, per size band (bytes, algorithm, chunk):\n");
        ddl_online_write(&chosen, stdout);
        printf("ddl-tune: wrote %s, %d band(s) (%.0f s)\n", path, bands, MPI_Wtime() - started);
    }
    if (owner)
        ddl_free(c, buf);
    ddl_comm_destroy(c);
    MPI_Finalize();
    return 0;
}
