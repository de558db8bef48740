/* SPDX-License-Identifier: Apache-2.0 */
/* ddl-sim: the lane allreduce's own schedules on a simulated platform, with
 * SimGrid's SMPI (bench/sim/README.md).  Built with smpicc from the runtime's
 * step builders, step executor, chunk pipeline and cost model (SIM_SOURCES in
 * Makefile.am), so what it times is the code libddl runs between nodes.
 *
 * One simulated rank per (node, GPU, lane): it reduces its slice of the node's
 * G buffers in chunks (charged as computation at the host's reduction rate),
 * runs each chunk's step list with its lane on the other nodes over the
 * simulated network, DDL_INFLIGHT chunks in flight, and writes the result back
 * to the G buffers (charged at the copy rate).  A node's lanes (GPU g's lane k
 * is lane g L + k) take the rails in turn: lane l on rail l mod R
 * (ddl-platform.sh places them).  --fold K lets one simulated rank stand for
 * the K lanes j, j + M, ... (M = G L / K) of its node, which share a rail when
 * M is a multiple of R and run the same steps: K times the bytes in one flow
 * take the time K flows take under the network's fair sharing, and K cores
 * reduce K times the bytes in the same time.
 * --mpi instead times SMPI's MPI_Allreduce with one rank per GPU (the
 * baseline; smpirun's --cfg=smpi/allreduce:NAME picks its algorithm), its
 * reductions charged at --reduce-rate per rank.
 * --check runs real data through the same schedules and checks every element. */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "algo.h"
#include "bench_opts.h"
#include "bench_stats.h"
#include "chunks.h"
#include "inter.h"
#include "model.h"
#include "parse.h"
#include "pipeline.h"
#include "reduce.h"
#include "slice.h"
#include "steps.h"

/* Platform hosts compute at this speed (bench/sim/ddl-platform.sh writes it),
 * so that a charge of s seconds is s * SIM_HOST_FLOPS flops. */
#define SIM_HOST_FLOPS 1e9
#define SIM_TAG 7300 /* + pipeline slot: chunks in flight never match each other's messages */

typedef struct {
    bench_sweep_t sweep;
    long warmup;
    int nodes, gpus, lanes, fold, inflight, check, mpi;
    size_t chunk; /* 0: the cost model's, as DDL_CHUNK_SIZE=auto */
    int lane_algo;
    ddl_grid_t grid; /* ndims 0: the lane ring over all nodes */
    ddl_model_t model;
    double reduce_rate, copy_rate; /* bytes per second per lane; 0: measured here */
} sim_opts_t;

/* A simulated rank's view of one call. */
typedef struct {
    const sim_opts_t *o;
    MPI_Comm lane;
    int node, index; /* index: this rank's first lane on its node (lanes index, index + M, ... with --fold) */
    ddl_step_plan_t plan;
    ddl_sched_t sched[DDL_PIPELINE_MAX_DEPTH];
    float *scratch[DDL_PIPELINE_MAX_DEPTH], *tmp[DDL_PIPELINE_MAX_DEPTH];
    size_t count;     /* elements per GPU */
    long wrong;       /* --check: elements that came back wrong */
    int algo;         /* the last chunk's lane algorithm (DDL_INTER_AUTO on the multiring) */
    unsigned char dims[DDL_GRID_MAX_DIMS];
} sim_rank_t;

/* The reduction rates every rank charges (the same for all; set before any
 * call).  SMPI runs the ranks as threads of one process without privatizing
 * globals: these are the only globals, and every rank writes the same value. */
static double charge_reduce_rate, charge_copy_rate;
static int check_data;

static void charge(double bytes, double rate)
{
    if (bytes > 0)
        smpi_execute_flops(bytes / rate * SIM_HOST_FLOPS);
}

/* The step executor's combine: the real kernel with --check, always charged. */
static void sim_reduce(void *dst, const void *a, const void *b, size_t n)
{
    if (check_data) {
        const float *x = a, *y = b;
        float *d = dst;
        for (size_t i = 0; i < n; i++)
            d[i] = x[i] + y[i];
    }
    charge((double)n * sizeof(float), charge_reduce_rate);
}

/* --mpi's operator: SMPI applies its built-in operators without charging
 * their time, which would give the baseline free reductions; this sum is
 * charged at the same rate (per rank) as the lanes' reductions. */
static void sim_mpi_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)in, (void)inout, (void)type;
    charge((double)*len * sizeof(float), charge_reduce_rate);
}

/* --check's data: element i of GPU g on node n; small integers, so every sum is exact in float. */
static float value(int node, int gpu, int gpus, size_t i)
{
    return (float)(((size_t)(node * gpus + gpu) * 7 + i) % 13) - 6.0f;
}

static ddl_status_t sim_fill(void *ctx, int slot, size_t off, size_t n, void **buf)
{
    sim_rank_t *r = ctx;
    int g = r->o->gpus;
    *buf = r->scratch[slot];
    if (check_data)
        for (size_t i = 0; i < n; i++) {
            float s = 0;
            for (int k = 0; k < g; k++)
                s += value(r->node, k, g, off + i);
            r->scratch[slot][i] = s;
        }
    /* One GPU: a copy; G: G - 1 passes of dst = a op b (lane_path.c's reduce_in). */
    if (g == 1)
        charge((double)n * sizeof(float), charge_copy_rate);
    else
        charge((double)(g - 1) * (double)n * sizeof(float), charge_reduce_rate);
    return DDL_OK;
}

static ddl_status_t sim_drain(void *ctx, int slot, size_t off, size_t n, void *buf)
{
    sim_rank_t *r = ctx;
    (void)slot;
    if (check_data) {
        const float *got = buf;
        for (size_t i = 0; i < n; i++) {
            double want = 0;
            for (int node = 0; node < r->o->nodes; node++)
                for (int k = 0; k < r->o->gpus; k++)
                    want += value(node, k, r->o->gpus, off + i);
            r->wrong += got[i] != (float)want;
        }
    }
    charge((double)r->o->gpus * (double)n * sizeof(float), charge_copy_rate); /* into every owner's buffer */
    return DDL_OK;
}

static ddl_status_t sim_start(void *ctx, int slot, void *buf, size_t n)
{
    sim_rank_t *r = ctx;
    const sim_opts_t *o = r->o;
    ddl_sched_t *s = &r->sched[slot];
    int nsteps = ddl_steps_build(&r->plan, r->node, o->nodes, n, sizeof(float), s->steps, &r->algo, r->dims);
    ddl_sched_start(s, SIM_TAG + slot, 0, nsteps, buf, r->tmp[slot], sizeof(float), sim_reduce);
    if (ddl_sched_progress(s) < 0) /* as host_p2p.c: the first step leaves at once */
        return DDL_ERR_MPI;
    return nsteps > 0 || o->nodes < 2 || n == 0 ? DDL_OK : DDL_ERR_INTERNAL;
}

/* Progress every chunk in flight until slot's is done, sleeping in
 * MPI_Waitany between looks (a busy loop would cost the simulation's time);
 * host_p2p.c's finish, without the deadline a simulation does not need. */
static ddl_status_t sim_finish(void *ctx, int slot, void *buf, size_t n)
{
    sim_rank_t *r = ctx;
    (void)buf, (void)n;
    for (;;) {
        MPI_Request all[2 * DDL_PIPELINE_MAX_DEPTH];
        MPI_Request *where[2 * DDL_PIPELINE_MAX_DEPTH];
        int nall = 0, done = 0;
        for (int j = 0; j < r->o->inflight; j++) {
            int rc = ddl_sched_progress(&r->sched[j]);
            if (rc < 0)
                return (ddl_status_t)rc;
            if (j == slot)
                done = rc;
            for (int q = 0; rc == 0 && q < r->sched[j].nreq; q++)
                if (r->sched[j].req[q] != MPI_REQUEST_NULL) {
                    where[nall] = &r->sched[j].req[q];
                    all[nall++] = r->sched[j].req[q];
                }
        }
        if (done)
            return DDL_OK;
        int idx;
        if (MPI_Waitany(nall, all, &idx, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return DDL_ERR_MPI;
        if (idx != MPI_UNDEFINED)
            *where[idx] = MPI_REQUEST_NULL; /* completed and freed by MPI_Waitany */
    }
}

static size_t call_chunk(const sim_rank_t *r, size_t lane_bytes)
{
    if (r->o->chunk)
        return r->o->chunk;
    return ddl_model_chunk(&r->o->model, r->o->grid.ndims ? &r->o->grid : NULL, r->o->nodes, r->o->gpus, lane_bytes,
                           (size_t)4 << 20 /* DDL_CHUNK_MAX */);
}

/* One call on `count` elements per GPU: this rank's slice through the pipeline. */
static ddl_status_t sim_call(sim_rank_t *r, size_t count, size_t *chunk_out)
{
    const sim_opts_t *o = r->o;
    size_t lanes_per_node = (size_t)o->gpus * (size_t)o->lanes, m = lanes_per_node / (size_t)o->fold;
    size_t off = 0, len = 0; /* with --fold, only the length counts (--check needs --fold 1) */
    for (size_t k = 0; k < (size_t)o->fold; k++) {
        size_t ko, kn;
        ddl_slice(count, lanes_per_node, (size_t)r->index + k * m, &ko, &kn);
        off = k ? off : ko;
        len += kn;
    }
    size_t chunk = call_chunk(r, count * sizeof(float) / lanes_per_node) * (size_t)o->fold;
    *chunk_out = chunk;
    ddl_chunks_t plan = ddl_chunks_plan(len, sizeof(float), chunk, 1);
    r->count = count;
    if (check_data)
        for (int i = 0; i < o->inflight; i++) /* poison: an element the schedule never writes shows */
            for (size_t e = 0; e < chunk / sizeof(float) + 1; e++)
                r->scratch[i][e] = r->tmp[i][e] = NAN;
    ddl_pipeline_ops_t ops = {sim_fill, sim_drain, r};
    ddl_pipeline_link_t link = {.start = sim_start, .finish = sim_finish, .ctx = r};
    double stages[DDL_STAGES] = {0};
    return ddl_pipeline_drive((size_t)o->inflight, &plan, off, sizeof(float), &ops, &link, stages);
}

/* The host's clock: SMPI turns clock_gettime into the simulation's. */
static double host_seconds(void)
{
    struct timespec ts;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The host's rates, measured by rank 0 with the runtime's kernel on this
 * machine (the simulation's clock stands still while it runs). */
static void measure_rates(sim_opts_t *o, int rank)
{
    double rates[2] = {o->reduce_rate, o->copy_rate};
    if (rank == 0 && (!rates[0] || !rates[1])) {
        size_t n = (size_t)8 << 20;
        float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
        if (!a || !b) {
            fprintf(stderr, "ddl-sim: cannot allocate 64 MiB to measure the host's rates; give --reduce-rate and "
                            "--copy-rate\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (size_t i = 0; i < n; i++)
            a[i] = b[i] = (float)(i % 7);
        ddl_reduce_fn_t sum = ddl_reduce_fn(DDL_DTYPE_F32, DDL_REDOP_SUM);
        double best[2] = {1e30, 1e30};
        for (int k = 0; k < 5; k++) {
            double t0 = host_seconds();
            sum(a, a, b, n);
            double t1 = host_seconds();
            memcpy(b, a, n * sizeof(float));
            double d1 = t1 - t0, d2 = host_seconds() - t1;
            best[0] = d1 < best[0] ? d1 : best[0];
            best[1] = d2 < best[1] ? d2 : best[1];
        }
        if (!rates[0])
            rates[0] = (double)(n * sizeof(float)) / best[0];
        if (!rates[1])
            rates[1] = (double)(n * sizeof(float)) / best[1];
        free(a);
        free(b);
    }
    MPI_Bcast(rates, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    o->reduce_rate = rates[0];
    o->copy_rate = rates[1];
}

static void usage(FILE *f)
{
    char names[256] = ""; /* the lane algorithms' rows, as DDL_LANE_ALGO takes them */
    for (int i = 1; i < DDL_INTER_COUNT; i++)
        snprintf(names + strlen(names), sizeof(names) - strlen(names), ", %s", ddl_inter_algo_names[i]);
    fprintf(f,
            "usage: smpirun -np RANKS -platform P.xml -hostfile H ddl-sim [options]\n"
            "  -N, --nodes N          nodes (required)\n"
            "  -g, --gpus G           GPUs per node (1)\n"
            "  -l, --lanes L          lanes per GPU (1)\n"
            "      --fold K           one simulated rank stands for K lanes of its node on one rail (1)\n"
            "  -a, --algo NAME        lane algorithm between nodes: auto (the cost model)%s\n"
            "  -t, --grid GxAxB       the multiring on this grid (DDL_TOPOLOGY's form) instead\n"
            "  -c, --chunk BYTES      pipeline chunk (auto: the cost model's, as DDL_CHUNK_SIZE=auto)\n"
            "  -i, --inflight N       chunks in flight (2, as DDL_INFLIGHT)\n"
            "      --link-us US       the cost model's link latency (default: the runtime's)\n"
            "      --link-mbps MB/S   the cost model's link rate per lane (default: the runtime's)\n"
            "      --reduce-rate MB/S the host's f32 sum rate per lane, or per rank with --mpi (default: measured here)\n"
            "      --copy-rate MB/S   the host's copy rate per lane (default: measured here)\n"
            "      --mpi              time SMPI's MPI_Allreduce on one rank per GPU instead\n"
            "      --check            real data through the schedules; every element checked\n"
            "  -b, -e, -f, -n         sizes per GPU and iterations, as ddl-bench; -w warm-up calls (1)\n"
            "Ranks: N x G x L / K, or N x G with --mpi; bench/sim/ddl-platform.sh writes the platform and hostfile.\n",
            names);
}

static int parse_rate(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v > 0))
        return -1;
    *out = v * 1e6;
    return 0;
}

static int parse_args(int argc, char **argv, sim_opts_t *o, int rank)
{
    static const struct option longopts[] = {
        {"nodes", required_argument, 0, 'N'}, {"gpus", required_argument, 0, 'g'},
        {"lanes", required_argument, 0, 'l'}, {"fold", required_argument, 0, 'F'},
        {"algo", required_argument, 0, 'a'}, {"grid", required_argument, 0, 't'},
        {"chunk", required_argument, 0, 'c'}, {"inflight", required_argument, 0, 'i'},
        {"link-us", required_argument, 0, 'U'}, {"link-mbps", required_argument, 0, 'M'},
        {"reduce-rate", required_argument, 0, 'R'}, {"copy-rate", required_argument, 0, 'C'},
        {"mpi", no_argument, 0, 'm'}, {"check", no_argument, 0, 'k'}, {"warmup", required_argument, 0, 'w'},
        {"help", no_argument, 0, 'h'}, BENCH_SWEEP_LONGOPTS, {0, 0, 0, 0}};
    *o = (sim_opts_t){.sweep = {1 << 20, 1 << 20, 2, 3}, .warmup = 1, .gpus = 1, .lanes = 1, .fold = 1, .inflight = 2};
    ddl_model_defaults(&o->model);
    double link_us = -1, link_rate = 0;
    int c, bad = 0;
    long v;
    const char *grid = NULL;
    FILE *err = rank == 0 ? stderr : fopen("/dev/null", "w");
    optind = 0; /* getopt's state is a global the simulated ranks share: start over */
    while ((c = getopt_long(argc, argv, "N:g:l:a:t:c:i:w:h" BENCH_SWEEP_SHORTOPTS, longopts, NULL)) != -1) {
        if (bench_sweep_option(c, optarg, &o->sweep, &bad))
            continue;
        switch (c) {
        case 'N': bad |= ddl_parse_long(optarg, 1, 1 << 20, &v) != 0; o->nodes = (int)v; break;
        case 'g': bad |= ddl_parse_long(optarg, 1, 64, &v) != 0; o->gpus = (int)v; break;
        case 'l': bad |= ddl_parse_long(optarg, 1, 64, &v) != 0; o->lanes = (int)v; break;
        case 'F': bad |= ddl_parse_long(optarg, 1, 64, &v) != 0; o->fold = (int)v; break;
        case 'i': bad |= ddl_parse_long(optarg, 2, DDL_PIPELINE_MAX_DEPTH, &v) != 0; o->inflight = (int)v; break;
        case 'w': bad |= ddl_parse_long(optarg, 0, 1000, &o->warmup) != 0; break;
        case 'a': bad |= ddl_parse_enum(optarg, ddl_inter_algo_names, &o->lane_algo) != 0; break;
        case 't': grid = optarg; break;
        case 'c': bad |= ddl_parse_size(optarg, &o->chunk) != 0 || o->chunk < 64; break;
        case 'U': { char *e; link_us = strtod(optarg, &e); bad |= e == optarg || *e || link_us < 0; break; }
        case 'M': bad |= parse_rate(optarg, &link_rate) != 0; break;
        case 'R': bad |= parse_rate(optarg, &o->reduce_rate) != 0; break;
        case 'C': bad |= parse_rate(optarg, &o->copy_rate) != 0; break;
        case 'm': o->mpi = 1; break;
        case 'k': o->check = 1; break;
        case 'h': usage(stdout); exit(0);
        default: bad = 1;
        }
        if (bad) {
            fprintf(err, "ddl-sim: bad value for option %s\n", argv[optind - 1]);
            break;
        }
    }
    if (!bad && bench_sweep_check("ddl-sim", argc, argv, &o->sweep, 4) != 0)
        bad = 1;
    if (!bad && o->nodes < 1) {
        fprintf(err, "ddl-sim: give the number of nodes with -N\n");
        bad = 1;
    }
    if (!bad && (o->gpus * o->lanes) % o->fold) {
        fprintf(err, "ddl-sim: --fold %d does not divide the node's %d lanes\n", o->fold, o->gpus * o->lanes);
        bad = 1;
    }
    if (!bad && o->check && o->fold > 1) {
        fprintf(err, "ddl-sim: --check needs every lane simulated (--fold 1)\n");
        bad = 1;
    }
    if (!bad && grid && (ddl_grid_parse(grid, &o->grid) != DDL_OK || ddl_grid_check(&o->grid, o->gpus, o->nodes) != DDL_OK)) {
        fprintf(err, "ddl-sim: --grid %s does not fit %d GPUs per node on %d nodes (GPUs x nodes of a rack x racks ...)\n",
                grid, o->gpus, o->nodes);
        bad = 1;
    }
    for (int d = 0; d < DDL_GRID_MAX_DIMS; d++) {
        if (link_us >= 0)
            o->model.link[d].alpha = link_us * 1e-6;
        if (link_rate > 0)
            o->model.link[d].beta = 1.0 / link_rate;
    }
    if (bad)
        usage(err);
    if (err != stderr)
        fclose(err);
    return bad ? -1 : 0;
}

static int max_steps(const sim_opts_t *o)
{
    return ddl_inter_max_steps(o->nodes, o->grid.ndims ? &o->grid : NULL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sim_opts_t o;
    if (parse_args(argc, argv, &o, rank) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int per_node = o.mpi ? o.gpus : o.gpus * o.lanes / o.fold;
    if (size != o.nodes * per_node) {
        if (rank == 0)
            fprintf(stderr, "ddl-sim: %d ranks, but %d nodes x %d %s are %d; run smpirun -np %d\n", size, o.nodes,
                    per_node, o.mpi ? "GPUs" : "simulated lanes", o.nodes * per_node, o.nodes * per_node);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    measure_rates(&o, rank);
    o.model.gamma = 1.0 / o.reduce_rate; /* the model sees the host ddl-sim charges, as ddl-tune's `reduce` line would */
    charge_reduce_rate = o.reduce_rate * o.fold; /* k cores reduce k lanes' bytes */
    charge_copy_rate = o.copy_rate * o.fold;
    check_data = o.check;

    sim_rank_t r = {.o = &o, .node = rank / per_node};
    int local = rank % per_node;
    r.index = local;
    /* A folded rank's chunk is --fold lanes' chunks: the model decides for one, as the runtime does. */
    r.plan = (ddl_step_plan_t){&o.model, o.grid.ndims ? &o.grid : NULL, o.lane_algo, NULL, o.fold};
    MPI_Comm_split(MPI_COMM_WORLD, local, r.node, &r.lane);
    size_t max_chunk = o.chunk ? o.chunk * (size_t)o.fold : ((size_t)4 << 20) * (size_t)o.fold;
    /* Without --check the data is never looked at: every rank uses one
     * SMPI_SHARED_MALLOC block, which SMPI neither copies nor backs with memory
     * per rank (a block per rank runs out of mappings at a few thousand ranks). */
    static char *shared_block;
    size_t slot_bytes = max_chunk + sizeof(float);
    if (!o.check && !shared_block)
        shared_block = SMPI_SHARED_MALLOC(o.mpi ? 2 * o.sweep.max_bytes : 2 * (size_t)o.inflight * slot_bytes);
    float *mpi_buf[2] = {NULL, NULL};
    if (o.mpi) {
        mpi_buf[0] = (float *)shared_block;
        mpi_buf[1] = (float *)(shared_block + o.sweep.max_bytes);
    } else
        for (int i = 0; i < o.inflight; i++) {
            r.scratch[i] = o.check ? malloc(slot_bytes) : (float *)(shared_block + (size_t)(2 * i) * slot_bytes);
            r.tmp[i] = o.check ? malloc(slot_bytes) : (float *)(shared_block + (size_t)(2 * i + 1) * slot_bytes);
            if (!r.scratch[i] || !r.tmp[i] || ddl_sched_init(&r.sched[i], r.lane, max_steps(&o), NULL) != DDL_OK) {
                fprintf(stderr, "ddl-sim: rank %d cannot allocate its chunk buffers\n", rank);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    if (rank == 0) {
        printf("# ddl-sim: %d nodes x %d GPUs x %d lanes%s, %s, %d in flight; host rates per lane: reduce %.0f MB/s, "
               "copy %.0f MB/s\n", o.nodes, o.gpus, o.lanes, o.fold > 1 ? " (folded)" : "",
               o.mpi ? "SMPI MPI_Allreduce, one rank per GPU" : o.grid.ndims ? "multiring" : ddl_inter_algo_names[o.lane_algo],
               o.inflight, o.reduce_rate / 1e6, o.copy_rate / 1e6);
        printf("%12s %12s %10s %10s %12s %8s %10s\n", "size(B)", "time(us)", "algbw", "busbw", "model(us)", "algo",
               "chunk");
    }
    MPI_Op sum_op = MPI_OP_NULL;
    if (o.mpi)
        MPI_Op_create(sim_mpi_sum, 1, &sum_op);
    int failed = 0;
    long wrong_total = 0;
    for (size_t bytes = o.sweep.min_bytes; bytes <= o.sweep.max_bytes; bytes *= (size_t)o.sweep.factor) {
        size_t count = bytes / sizeof(float), chunk = 0;
        double *times = calloc((size_t)o.sweep.iters, sizeof(double));
        for (long it = -o.warmup; it < o.sweep.iters; it++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            ddl_status_t st = DDL_OK;
            if (o.mpi)
                MPI_Allreduce(mpi_buf[0], mpi_buf[1], (int)count, MPI_FLOAT, sum_op, MPI_COMM_WORLD);
            else
                st = sim_call(&r, count, &chunk);
            double mine = MPI_Wtime() - t0, slowest;
            failed |= st != DDL_OK;
            MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (it >= 0)
                times[it] = slowest;
        }
        long wrong = 0;
        MPI_Reduce(&r.wrong, &wrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        r.wrong = 0;
        wrong_total += wrong;
        if (rank == 0) {
            double t = bench_median(times, (size_t)o.sweep.iters);
            double p = (double)o.nodes * o.gpus, algbw = (double)bytes / t / 1e9;
            printf("%12zu %12.1f %10.3f %10.3f %12.1f %8s %10zu%s\n", bytes, t * 1e6, algbw, algbw * 2 * (p - 1) / p,
                   o.mpi ? 0.0 : 1e6 * ddl_model_lane_time(&o.model, o.grid.ndims ? &o.grid : NULL, o.nodes, o.gpus,
                                                           (double)bytes / (o.gpus * o.lanes), (double)chunk / o.fold),
                   o.mpi ? "mpi" : o.grid.ndims ? "multi" : ddl_inter_algo_names[r.algo], o.mpi ? 0 : chunk / o.fold,
                   wrong ? "  WRONG" : "");
            if (wrong)
                fprintf(stderr, "ddl-sim: %ld elements wrong at %zu bytes\n", wrong, bytes);
        }
        free(times);
    }
    if (rank == 0 && o.check && !wrong_total && !failed)
        printf("# every element checked: right\n");
    if (o.mpi)
        MPI_Op_free(&sum_op);
    int bad = failed || wrong_total;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return bad ? 1 : 0;
}
