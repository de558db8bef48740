/* SPDX-License-Identifier: Apache-2.0 */
/* ddl-bench: ddl_allreduce against the system MPI_Allreduce on the owners (one
 * rank per GPU, what a user has without lanes), same sizes and data, same run;
 * with --coll, ddl_reduce_scatter against MPI_Reduce_scatter_block or
 * ddl_allgather against MPI_Allgather, as nccl-tests' reduce_scatter_perf and
 * all_gather_perf.  Prints nccl-tests columns; exits non-zero on any wrong
 * value. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "bench_opts.h"
#include "bench_stats.h"
#include "ddl.h"
#include "half.h"
#include "parse.h"
#include "refdata.h"
#include "tool.h"

typedef enum { MODE_BOTH, MODE_DDL, MODE_MPI } mode_t_;
typedef enum { COLL_ALLREDUCE, COLL_REDUCE_SCATTER, COLL_ALLGATHER } coll_t;

#define BENCH_MAX_AGG 1024 /* -m: the most collectives in one timed iteration */

/* How the owners' per-call medians combine into the reported time, as
 * nccl-tests' -a: rank 0's, their mean, the fastest, the slowest. */
typedef enum { AVERAGE_RANK0, AVERAGE_MEAN, AVERAGE_MIN, AVERAGE_MAX } average_t;

typedef struct {
    bench_sweep_t sweep;
    long warmup;
    long agg;     /* -m: collectives per timed iteration (nccl-tests' agg_iters); the time is per collective */
    int blocking; /* -z 1: each collective is a blocking call; 0: an iteration's are posted, then waited for */
    int thread_multiple; /* --mpi-thread: 1 multiple, 0 single, -1 by -z (0: multiple) */
    int settle; /* -w not given: the warm-up goes on while the size's choice is not settled */
    int check, shared, force, dry_run;
    average_t average;
    mode_t_ mode;
    coll_t coll;
    ddl_dtype_t dtype; /* of the combination running (a copy of the options per combination) */
    ddl_redop_t op;
    int ndtypes, nops; /* -d all, -o all: every one */
    ddl_dtype_t dtypes[DDL_DTYPE_COUNT];
    ddl_redop_t ops[DDL_REDOP_COUNT];
    const char *json;
} opts_t;

typedef struct {
    ddl_dtype_t dtype;
    ddl_redop_t op;
    size_t bytes, count;
    double oop_us, ip_us, mpi_us;
    double floor_us; /* one node: the memory floor, 0 otherwise */
    long oop_wrong, ip_wrong;
    char choice[48]; /* ddl_comm_choice after the out-of-place calls; "" with --mode mpi */
} row_t;

static const char *const dtype_names[] = {"float", "double", "half", "bfloat16", "int8", "uint8",
                                          "int32", "uint32", "int64", "uint64", NULL};
static const char *const op_names[] = {"sum", "prod", "min", "max", "avg", NULL};
static const char *const mode_names[] = {"both", "ddl", "mpi", NULL};
static const char *const thread_names[] = {"single", "multiple", NULL}; /* --mpi-thread */
static const char *const coll_names[] = {"allreduce", "reduce_scatter", "allgather", NULL};
/* nccl-tests' spellings (all_reduce_perf, all_gather_perf), accepted too. */
static const char *const coll_nccl_names[] = {"all_reduce", "reduce_scatter", "all_gather", NULL};
static const char *const coll_mpi[] = {"MPI_Allreduce", "MPI_Reduce_scatter_block", "MPI_Allgather"};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ddl-bench [options]   (run under mpirun or srun, one process per lane)\n"
            "      --coll COLL           allreduce (default), reduce_scatter or allgather (nccl-tests'\n"
            "                            all_reduce_perf, reduce_scatter_perf, all_gather_perf); a size is\n"
            "                            the whole buffer, as nccl-tests counts it\n"
            "  -b, --minbytes BYTES      smallest size (default 8; K, M, G suffixes)\n"
            "  -e, --maxbytes BYTES      largest size (default 64M)\n"
            "  -f, --stepfactor FACTOR   size multiplier between steps (default 2)\n"
            "  -i, --stepbytes BYTES     size increment between steps, in place of -f\n"
            "  -n, --iters ITERS         timed iterations per size (default 20)\n"
            "  -m, --agg_iters N         collectives per timed iteration; the time is per collective (default 1)\n"
            "  -z, --blocking 0|1        1: blocking calls (default); 0: an iteration's -m collectives are\n"
            "                            posted (ddl_iallreduce, MPI_Iallreduce), then waited for together,\n"
            "                            with MPI at MPI_THREAD_MULTIPLE (the requests' progress thread)\n"
            "      --mpi-thread LEVEL    single or multiple: MPI's thread level (default: single with -z 1,\n"
            "                            multiple with -z 0), the baseline's too\n"
            "  -w, --warmup_iters ITERS  warm-up iterations per size (default: 5, then more while online\n"
            "                            selection is still timing candidates for the size)\n"
            "  -c, --check 0|1           check results against an independent reference (default 1)\n"
            "  -d, --datatype TYPE       float (default), double, half, bfloat16, int8, uint8, int32, uint32,\n"
            "                            int64, uint64, or all\n"
            "  -o, --op OP               sum (default), prod, min, max, avg, or all\n"
            "  -a, --average 0|1|2|3     the owners' medians combined: rank 0, mean, min, max (default 3:\n"
            "                            the slowest owner)\n"
            "      --mode MODE           both (default), ddl or mpi\n"
            "  -r, --root ROOT           accepted, as nccl-tests' all_reduce_perf does: an allreduce has no root\n"
            "  -t, --nthreads 1; -g, --ngpus 1; -G, --cudagraph 0: nccl-tests' options, one thread and one GPU\n"
            "                            per process, host calls (other values are refused)\n"
            "  -B, --buffers KIND        owner buffers: shared (ddl_malloc, default) or staged (malloc)\n"
            "  -J, --json FILE           also write the results as JSON (an existing FILE only with --force)\n"
            "      --force               overwrite the JSON file\n"
            "      --dry-run             check the options, say what would run, and exit (no MPI)\n"
            "  -h, --help; --version\n"
            "Layout from DDL_LANES, DDL_GPUS_PER_NODE, DDL_NODE_SIZE, DDL_HELPERS (see ddl-info).\n");
}

/* TYPE or OP for -d / -o: one name, or all of them. */
static int parse_list(const char *arg, const char *const *names, int count, int *list, int *n)
{
    if (strcmp(arg, "all") == 0) {
        for (int i = 0; i < count; i++)
            list[i] = i;
        *n = count;
        return 0;
    }
    *n = 1;
    return ddl_parse_enum(arg, names, &list[0]);
}

static int parse_opts(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){.sweep = {8, 64u << 20, 2, 20, 0}, .warmup = 5, .agg = 1, .blocking = 1, .thread_multiple = -1,
                  .settle = 1, .check = 1, .shared = 1, .average = AVERAGE_MAX, .mode = MODE_BOTH, .ndtypes = 1,
                  .nops = 1, .dtypes = {DDL_DTYPE_F32}, .ops = {DDL_REDOP_SUM}};
    int c, idx, list[DDL_DTYPE_COUNT];
    long v;
    enum { OPT_FORCE = 256, OPT_MODE, OPT_THREAD, OPT_DRY, OPT_COLL };
    /* nccl-tests' letters and long names mean what they mean there; the mode
     * has a long name only (nccl-tests' -m is the aggregation count). */
    static const struct option longopts[] = {
        BENCH_SWEEP_LONGOPTS, BENCH_NCCL_LONGOPTS, {"warmup_iters", required_argument, 0, 'w'},
        {"check", required_argument, 0, 'c'},
        {"datatype", required_argument, 0, 'd'}, {"op", required_argument, 0, 'o'},
        {"average", required_argument, 0, 'a'}, {"agg_iters", required_argument, 0, 'm'},
        {"blocking", required_argument, 0, 'z'}, {"root", required_argument, 0, 'r'},
        {"mode", required_argument, 0, OPT_MODE}, {"mpi-thread", required_argument, 0, OPT_THREAD},
        {"buffers", required_argument, 0, 'B'},
        {"json", required_argument, 0, 'J'}, {"force", no_argument, 0, OPT_FORCE},
        {"dry-run", no_argument, 0, OPT_DRY}, {"coll", required_argument, 0, OPT_COLL},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    static const char shortopts[] = BENCH_SWEEP_SHORTOPTS BENCH_NCCL_SHORTOPTS "w:c:d:o:a:m:z:r:B:J:h";
    while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        int bad = 0;
        int ours = bench_sweep_option(c, optarg, &o->sweep, &bad) || bench_nccl_option(c, optarg, &o->sweep, &bad);
        switch (ours ? 0 : c) {
        case 0: break; /* a sweep option */
        case 'w':
            bad = ddl_parse_long(optarg, 0, 1 << 24, &o->warmup);
            o->settle = 0; /* exactly as many as asked */
            break;
        case 'c': bad = ddl_parse_long(optarg, 0, 1, &v); o->check = (int)v; break;
        case 'a': bad = ddl_parse_long(optarg, 0, 3, &v); o->average = (average_t)v; break;
        case 'd':
            bad = parse_list(optarg, dtype_names, DDL_DTYPE_COUNT, list, &o->ndtypes);
            for (int i = 0; !bad && i < o->ndtypes; i++)
                o->dtypes[i] = (ddl_dtype_t)list[i];
            break;
        case 'o':
            bad = parse_list(optarg, op_names, DDL_REDOP_COUNT, list, &o->nops);
            for (int i = 0; !bad && i < o->nops; i++)
                o->ops[i] = (ddl_redop_t)list[i];
            break;
        case 'm':
            if (ddl_parse_enum(optarg, mode_names, &idx) == 0) { /* ddl-bench's old -m MODE */
                fprintf(stderr, "ddl-bench: -m is nccl-tests' aggregation count (an integer); the mode is "
                        "--mode %s\n", optarg);
                bad = BENCH_OPT_REFUSED;
            } else {
                bad = ddl_parse_long(optarg, 1, BENCH_MAX_AGG, &o->agg);
            }
            break;
        case 'z': bad = ddl_parse_long(optarg, 0, 1, &v); o->blocking = (int)v; break;
        case 'r': bad = ddl_parse_long(optarg, 0, 1 << 30, &v); break; /* no root to use */
        case OPT_MODE: bad = ddl_parse_enum(optarg, mode_names, &idx); o->mode = (mode_t_)idx; break;
        case OPT_COLL:
            bad = ddl_parse_enum(optarg, coll_names, &idx) && ddl_parse_enum(optarg, coll_nccl_names, &idx);
            o->coll = (coll_t)idx;
            break;
        case OPT_THREAD: bad = ddl_parse_enum(optarg, thread_names, &idx); o->thread_multiple = idx; break;
        case 'B':
            bad = strcmp(optarg, "shared") && strcmp(optarg, "staged");
            o->shared = strcmp(optarg, "shared") == 0;
            break;
        case 'J': o->json = optarg; break;
        case OPT_FORCE: o->force = 1; break;
        case OPT_DRY: o->dry_run = 1; break;
        case 'h': usage(stdout); return 1;
        default: usage(stderr); return -1;
        }
        if (bad && bad != BENCH_OPT_REFUSED) {
            if (c == OPT_MODE || c == OPT_THREAD || c == OPT_COLL)
                fprintf(stderr, "ddl-bench: invalid value '%s' for --%s\n", optarg,
                        c == OPT_MODE ? "mode" : c == OPT_COLL ? "coll" : "mpi-thread");
            else
                fprintf(stderr, "ddl-bench: invalid value '%s' for -%c\n", optarg, c);
            usage(stderr);
        }
        if (bad)
            return -1;
    }
    if (bench_sweep_check("ddl-bench", argc, argv, &o->sweep, 1) != 0)
        return -1;
    struct stat st;
    if (o->json && !o->force && stat(o->json, &st) == 0) {
        fprintf(stderr, "ddl-bench: %s exists: give another -J file, or --force to overwrite it\n", o->json);
        return -1;
    }
    return 0;
}

/* The baseline needs an MPI op for 16-bit floats: what a user of plain MPI writes. */
#define HALF_SUM(name, TO, FROM)                                                                   \
    static void name(void *in, void *inout, int *len, MPI_Datatype *dt)                            \
    {                                                                                              \
        (void)dt;                                                                                  \
        uint16_t *a = in, *b = inout;                                                              \
        for (int i = 0; i < *len; i++)                                                             \
            b[i] = FROM(TO(a[i]) + TO(b[i]));                                                      \
    }
HALF_SUM(f16_sum, ddl_f16_to_f32, ddl_f32_to_f16)
HALF_SUM(bf16_sum, ddl_bf16_to_f32, ddl_f32_to_bf16)

static int mpi_baseline_args(ddl_dtype_t t, ddl_redop_t op, MPI_Datatype *mt, MPI_Op *mo)
{
    static const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_SUM};
    static MPI_Op half_ops[2] = {MPI_OP_NULL, MPI_OP_NULL};
    switch (t) {
    case DDL_DTYPE_F32: *mt = MPI_FLOAT; break;
    case DDL_DTYPE_F64: *mt = MPI_DOUBLE; break;
    case DDL_DTYPE_I8: *mt = MPI_INT8_T; break;
    case DDL_DTYPE_U8: *mt = MPI_UINT8_T; break;
    case DDL_DTYPE_I32: *mt = MPI_INT32_T; break;
    case DDL_DTYPE_U32: *mt = MPI_UINT32_T; break;
    case DDL_DTYPE_I64: *mt = MPI_INT64_T; break;
    case DDL_DTYPE_U64: *mt = MPI_UINT64_T; break;
    default: {
        if (op != DDL_REDOP_SUM && op != DDL_REDOP_AVG)
            return -1;
        int h = t == DDL_DTYPE_BF16;
        if (half_ops[h] == MPI_OP_NULL)
            MPI_Op_create(h ? bf16_sum : f16_sum, 1, &half_ops[h]);
        *mt = MPI_UINT16_T;
        *mo = half_ops[h];
        return 0;
    }
    }
    *mo = ops[op]; /* avg: the sum; the local division is not timed */
    return 0;
}

/* Helpers idle here while the owners time MPI, without spinning on a core. */
static void rest_barrier(MPI_Comm comm)
{
    MPI_Request req;
    int done = 0;
    MPI_Ibarrier(comm, &req);
    while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
}

typedef struct {
    ddl_comm_t *comm;
    ddl_comm_info_t info;
    MPI_Comm owners;
    int serve;
    int gpus; /* the owners, known on helpers too (their owner_size is -1) */
    int mpi_thread; /* MPI_Query_thread's level; at MPI_THREAD_MULTIPLE requests have a progress thread */
    void *send, *recv;
} bench_t;

/* The bytes the node's memory must move at least, on one node: every owner
 * buffer read once and written once: 2 x G x size for the allreduce, and for
 * the reduce-scatter (G inputs of the size, one block out each) and the
 * allgather (one block in each, G outputs of the size) (G + 1) x size. */
static double floor_bytes(const bench_t *b, const opts_t *o, size_t bytes)
{
    int g = b->info.gpus_per_node;
    return (o->coll == COLL_ALLREDUCE ? 2.0 * g : g + 1.0) * (double)bytes;
}

/* The memory-bandwidth floor on one node: floor_bytes at the bandwidth the
 * owners reach with memcpy of the same size when they all copy at once (read +
 * write bytes per second, summed over the owners). */
static double copy_bandwidth(bench_t *b, size_t bytes)
{
    double best = 1e30, mine, total = 0;
    for (int i = 0; i < 5; i++) {
        MPI_Barrier(b->owners);
        double t0 = MPI_Wtime();
        memcpy(b->recv, b->send, bytes);
        double t = MPI_Wtime() - t0;
        best = t < best ? t : best;
    }
    mine = 2.0 * (double)bytes / best / 1e9;
    MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, b->owners);
    return total;
}

/* Elements of one owner's block: a reduce-scatter's output, an allgather's
 * input (count, the whole buffer, is a multiple of the owners); the count
 * itself for an allreduce. */
static size_t block_count(const bench_t *b, const opts_t *o, size_t count)
{
    return o->coll == COLL_ALLREDUCE ? count : count / (size_t)b->gpus;
}

/* A call's buffers on an owner.  In place as NCCL's: a reduce-scatter's
 * output is this owner's block of its input (recv), an allgather's input
 * its block of the output (DDL_IN_PLACE, recv); helpers pass none. */
static void call_buffers(const bench_t *b, const opts_t *o, size_t count, int inplace, const void **in, void **out)
{
    *in = NULL;
    *out = NULL;
    if (b->info.role != DDL_ROLE_OWNER)
        return;
    *in = inplace ? DDL_IN_PLACE : b->send;
    *out = b->recv;
    if (inplace && o->coll == COLL_REDUCE_SCATTER) {
        *in = b->recv;
        *out = (char *)b->recv + (size_t)b->info.owner_rank * block_count(b, o, count) * ddl_dtype_size(o->dtype);
    }
}

/* One ddl collective: blocking, or posted (req not NULL). */
static ddl_status_t start_ddl(bench_t *b, const opts_t *o, size_t count, int inplace, ddl_request_t **req)
{
    const void *in;
    void *out;
    call_buffers(b, o, count, inplace, &in, &out);
    int64_t n = (int64_t)block_count(b, o, count);
    switch (o->coll) {
    case COLL_REDUCE_SCATTER:
        return req ? ddl_ireduce_scatter(in, out, n, o->dtype, o->op, b->comm, req)
                   : ddl_reduce_scatter(in, out, n, o->dtype, o->op, b->comm);
    case COLL_ALLGATHER:
        return req ? ddl_iallgather(in, out, n, o->dtype, b->comm, req) : ddl_allgather(in, out, n, o->dtype, b->comm);
    default:
        return req ? ddl_iallreduce(in, out, n, o->dtype, o->op, b->comm, req)
                   : ddl_allreduce(in, out, n, o->dtype, o->op, b->comm);
    }
}

static ddl_status_t call_ddl(bench_t *b, const opts_t *o, size_t count, int inplace)
{
    return start_ddl(b, o, count, inplace, NULL);
}

/* One timed iteration's ddl collectives: -m of them, blocking calls (-z 1)
 * or all posted, then waited for in order (-z 0).  The first failure. */
static ddl_status_t ddl_iteration(bench_t *b, const opts_t *o, size_t count, int inplace)
{
    if (o->blocking || o->agg == 1) {
        ddl_status_t first = DDL_OK;
        for (long k = 0; k < o->agg; k++) {
            ddl_status_t st = call_ddl(b, o, count, inplace);
            first = first == DDL_OK ? st : first;
        }
        return first;
    }
    ddl_request_t *req[BENCH_MAX_AGG];
    ddl_status_t first = DDL_OK;
    long posted = 0;
    for (; posted < o->agg && first == DDL_OK; posted++)
        first = start_ddl(b, o, count, inplace, &req[posted]);
    if (first != DDL_OK)
        posted--; /* the refused one made no request */
    for (long k = 0; k < posted; k++) {
        ddl_status_t st = ddl_wait(req[k]);
        first = first == DDL_OK ? st : first;
        ddl_request_free(req[k]);
    }
    return first;
}

/* One MPI collective of the baseline, blocking or posted (req not NULL).  In
 * place is MPI's: MPI_IN_PLACE with the whole buffer in recv. */
static void start_mpi(bench_t *b, const opts_t *o, size_t count, int inplace, MPI_Datatype mt, MPI_Op mo,
                      MPI_Request *req)
{
    const void *s = inplace ? MPI_IN_PLACE : b->send;
    int n = (int)block_count(b, o, count);
    switch (o->coll) {
    case COLL_REDUCE_SCATTER:
        if (req)
            MPI_Ireduce_scatter_block(s, b->recv, n, mt, mo, b->owners, req);
        else
            MPI_Reduce_scatter_block(s, b->recv, n, mt, mo, b->owners);
        return;
    case COLL_ALLGATHER:
        if (req)
            MPI_Iallgather(s, n, mt, b->recv, n, mt, b->owners, req);
        else
            MPI_Allgather(s, n, mt, b->recv, n, mt, b->owners);
        return;
    default:
        if (req)
            MPI_Iallreduce(s, b->recv, n, mt, mo, b->owners, req);
        else
            MPI_Allreduce(s, b->recv, n, mt, mo, b->owners);
    }
}

/* The same for the MPI baseline on the owners. */
static void mpi_iteration(bench_t *b, const opts_t *o, size_t count, int inplace, MPI_Datatype mt, MPI_Op mo)
{
    if (o->blocking || o->agg == 1) {
        for (long k = 0; k < o->agg; k++)
            start_mpi(b, o, count, inplace, mt, mo, NULL);
        return;
    }
    MPI_Request req[BENCH_MAX_AGG];
    MPI_Status status[BENCH_MAX_AGG];
    for (long k = 0; k < o->agg; k++)
        start_mpi(b, o, count, inplace, mt, mo, &req[k]);
    MPI_Waitall((int)o->agg, req, status);
}

/* The owners' values (their medians) combined as -a says, in place; the
 * owners only. */
static void combine(const bench_t *b, const opts_t *o, double *v, int n)
{
    double out[2];
    int size;
    MPI_Comm_size(b->owners, &size);
    switch (o->average) {
    case AVERAGE_RANK0: MPI_Bcast(v, n, MPI_DOUBLE, 0, b->owners); return;
    case AVERAGE_MEAN:
        MPI_Allreduce(v, out, n, MPI_DOUBLE, MPI_SUM, b->owners);
        for (int i = 0; i < n; i++)
            v[i] = out[i] / size;
        return;
    case AVERAGE_MIN: MPI_Allreduce(v, out, n, MPI_DOUBLE, MPI_MIN, b->owners); break;
    case AVERAGE_MAX: MPI_Allreduce(v, out, n, MPI_DOUBLE, MPI_MAX, b->owners); break;
    }
    memcpy(v, out, sizeof(double) * (size_t)n);
}

/* Online selection times candidates in a size's first calls: unless -w was
 * given, the warm-up goes on, untimed, until the size's choice is settled, at
 * most this many calls past the 5 (every rank settles after the same call:
 * the decision is agreed). */
#define WARMUP_WHILE_EXPLORING 1000

static int choice_settled(const bench_t *b, const opts_t *o, size_t bytes)
{
    char name[64];
    return ddl_comm_collective_choice(b->comm, coll_names[o->coll], bytes, name, sizeof(name)) != 0;
}

/* One ddl call and, with the baseline, one MPI_Allreduce; odd rounds run the
 * baseline first, so that neither goes first always.  t: ddl's start and end,
 * MPI's start and end. */
static void one_round(bench_t *b, const opts_t *o, size_t count, int inplace, const MPI_Datatype *mt,
                      const MPI_Op *mo, long it, double *t, int *err)
{
    t[0] = t[1] = t[2] = t[3] = 0;
    int owner = b->info.role == DDL_ROLE_OWNER, mpi_slot = (int)(it & 1);
    for (int k = 0; k < 2; k++) {
        if (k == mpi_slot) {
            if (!mt)
                continue;
            MPI_Barrier(b->owners);
            t[2] = MPI_Wtime();
            mpi_iteration(b, o, count, inplace, *mt, *mo);
            t[3] = MPI_Wtime();
            continue;
        }
        if (owner)
            MPI_Barrier(b->owners);
        t[0] = MPI_Wtime();
        ddl_status_t st = ddl_iteration(b, o, count, inplace);
        t[1] = MPI_Wtime();
        if (st != DDL_OK && !*err) {
            fprintf(stderr, "ddl-bench: rank %d: ddl_%s: %s: %s\n", b->info.rank, coll_names[o->coll],
                    ddl_status_string(st), ddl_last_error());
            *err = 1;
        }
    }
}

/* The owners' medians of per-call times in microseconds, combined (-a), for ddl (and,
 * when mpi_us is given, for the MPI baseline in the same loop: the two calls
 * alternate, so that both see the same machine). */
static double time_calls(bench_t *b, const opts_t *o, size_t count, int inplace, double *mpi_us, int *err)
{
    size_t iters = (size_t)o->sweep.iters, bytes = count * ddl_dtype_size(o->dtype);
    double *ddl_t = calloc(iters, sizeof(double)), *mpi_t = calloc(iters, sizeof(double)), t[4];
    int owner = b->info.role == DDL_ROLE_OWNER;
    MPI_Datatype mt = MPI_BYTE;
    MPI_Op mo = MPI_OP_NULL;
    int with_mpi = mpi_us && owner && mpi_baseline_args(o->dtype, o->op, &mt, &mo) == 0;
    const MPI_Datatype *pmt = with_mpi ? &mt : NULL;
    long it = 0;
    for (; it < o->warmup; it++)
        one_round(b, o, count, inplace, pmt, &mo, it, t, err);
    for (long extra = 0; o->settle && extra < WARMUP_WHILE_EXPLORING && !choice_settled(b, o, bytes); extra++, it++)
        one_round(b, o, count, inplace, pmt, &mo, it, t, err);
    for (size_t k = 0; k < iters; k++, it++) {
        one_round(b, o, count, inplace, pmt, &mo, it, t, err);
        ddl_t[k] = (t[1] - t[0]) / (double)o->agg;
        mpi_t[k] = (t[3] - t[2]) / (double)o->agg;
    }
    double med[2] = {bench_median(ddl_t, iters) * 1e6, bench_median(mpi_t, iters) * 1e6};
    if (owner)
        combine(b, o, med, 2);
    if (mpi_us)
        *mpi_us = with_mpi ? med[1] : -1;
    free(ddl_t);
    free(mpi_t);
    return med[0];
}

/* The MPI baseline alone (--mode mpi). */
static double time_mpi(bench_t *b, const opts_t *o, size_t count)
{
    MPI_Datatype mt;
    MPI_Op mo;
    if (b->info.role != DDL_ROLE_OWNER || mpi_baseline_args(o->dtype, o->op, &mt, &mo) != 0)
        return -1;
    double *t = calloc((size_t)o->sweep.iters, sizeof(double));
    for (long it = 0; it < o->warmup + o->sweep.iters; it++) {
        MPI_Barrier(b->owners);
        double t0 = MPI_Wtime();
        mpi_iteration(b, o, count, 0, mt, mo);
        if (it >= o->warmup)
            t[it - o->warmup] = (MPI_Wtime() - t0) / (double)o->agg;
    }
    double med = bench_median(t, (size_t)o->sweep.iters) * 1e6;
    combine(b, o, &med, 1);
    free(t);
    return med;
}

/* A reduce-scatter's or allgather's wrong elements on this owner (out: its
 * output): its block of the reduction, or every owner's data bit for bit. */
static long block_wrong(bench_t *b, const opts_t *o, size_t count, int inplace, uint64_t seed)
{
    const void *in;
    void *out;
    call_buffers(b, o, count, inplace, &in, &out);
    size_t n = block_count(b, o, count), esize = ddl_dtype_size(o->dtype), r = (size_t)b->info.owner_rank;
    long wrong = 0;
    if (o->coll == COLL_REDUCE_SCATTER) {
        for (size_t i = 0; i < n; i++) {
            ddl_ref_t ref = ddl_ref_expected(o->dtype, o->op, b->info.owner_size, r * n + i, seed);
            wrong += !ddl_ref_matches(out, i, o->dtype, &ref);
        }
        return wrong;
    }
    char *expect = malloc(n > 0 ? n * esize : 1);
    for (int j = 0; j < b->info.owner_size && expect; j++) {
        ddl_ref_fill(expect, n, o->dtype, o->op, j, seed);
        const char *got = (const char *)out + (size_t)j * n * esize;
        for (size_t i = 0; i < n; i++)
            wrong += memcmp(got + i * esize, expect + i * esize, esize) != 0;
    }
    free(expect);
    return expect ? wrong : (long)count;
}

/* Wrong elements among those this owner checks (i = owner rank mod owners), plus
 * every element when the owners' results are not bit-identical. */
static long count_wrong(bench_t *b, const opts_t *o, size_t count, int inplace, uint64_t seed)
{
    if (b->info.role != DDL_ROLE_OWNER || !o->check)
        return 0;
    long wrong = 0, total = 0;
    if (o->coll != COLL_ALLREDUCE) {
        wrong = block_wrong(b, o, count, inplace, seed);
        MPI_Allreduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, b->owners);
        return total;
    }
    for (size_t i = (size_t)b->info.owner_rank; i < count; i += (size_t)b->info.owner_size) {
        ddl_ref_t ref = ddl_ref_expected(o->dtype, o->op, b->info.owner_size, i, seed);
        wrong += !ddl_ref_matches(b->recv, i, o->dtype, &ref);
    }
    uint64_t h = ddl_ref_hash(b->recv, count * ddl_dtype_size(o->dtype)), lo, hi;
    MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, b->owners);
    MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, b->owners);
    MPI_Allreduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, b->owners);
    if (lo != hi && total == 0)
        total = (long)count;
    return total;
}

/* The owner's input filled, and its output poisoned where the call writes
 * it (an allgather in place: every block but its own). */
static void fill(bench_t *b, const opts_t *o, size_t count, int inplace, uint64_t seed)
{
    if (b->info.role != DDL_ROLE_OWNER)
        return;
    size_t esize = ddl_dtype_size(o->dtype), n = block_count(b, o, count);
    if (o->coll == COLL_ALLGATHER) {
        char *own = inplace ? (char *)b->recv + (size_t)b->info.owner_rank * n * esize : b->send;
        ddl_ref_poison(b->recv, count * esize);
        ddl_ref_fill(own, n, o->dtype, o->op, b->info.owner_rank, seed);
        return;
    }
    ddl_ref_fill(inplace ? b->recv : b->send, count, o->dtype, o->op, b->info.owner_rank, seed);
    if (!inplace)
        ddl_ref_poison(b->recv, n * esize);
}

static void run_size(bench_t *b, const opts_t *o, row_t *row, int *err)
{
    size_t count = row->count;
    uint64_t seed = count * 7919 + 1;
    int owner = b->info.role == DDL_ROLE_OWNER;
    row->oop_wrong = row->ip_wrong = 0;
    row->oop_us = row->ip_us = row->mpi_us = -1;
    row->floor_us = 0;
    if (owner && b->info.nnodes == 1 && o->mode != MODE_MPI)
        row->floor_us = floor_bytes(b, o, row->bytes) / (copy_bandwidth(b, row->bytes) * 1e3);
    if (o->mode != MODE_MPI) {
        /* Out-of-place, alternating with the MPI baseline; the MPI calls write
         * the same result into recv, and the check below runs ddl once more. */
        fill(b, o, count, 0, seed);
        row->oop_us = time_calls(b, o, count, 0, o->mode == MODE_BOTH ? &row->mpi_us : NULL, err);
        ddl_comm_collective_choice(b->comm, coll_names[o->coll], row->bytes, row->choice, sizeof(row->choice));
        fill(b, o, count, 0, seed);
        if (call_ddl(b, o, count, 0) != DDL_OK)
            *err = 1;
        row->oop_wrong = count_wrong(b, o, count, 0, seed);
        /* In place alternates with MPI_Allreduce(MPI_IN_PLACE) as out-of-place
         * does with its baseline (its time is not shown): both columns see
         * the same machine, the other call's traffic through the caches
         * included. */
        fill(b, o, count, 1, seed);
        double mpi_ip_us;
        row->ip_us = time_calls(b, o, count, 1, o->mode == MODE_BOTH ? &mpi_ip_us : NULL, err);
        /* In-place calls reduce their own results: check one call on fresh data. */
        fill(b, o, count, 1, seed);
        if (call_ddl(b, o, count, 1) != DDL_OK)
            *err = 1;
        row->ip_wrong = count_wrong(b, o, count, 1, seed);
    } else if (owner) {
        fill(b, o, count, 0, seed);
        row->mpi_us = time_mpi(b, o, count);
    }
    if (!b->serve)
        rest_barrier(MPI_COMM_WORLD);
}

/* Where each owner runs, as nccl-tests' "Rank N Pid P on HOST device D" lines. */
typedef struct {
    int pid, node, gpu;
    char host[64], cores[64], devices[32];
} place_t;

/* The owners' places, gathered on every owner (the helpers may be another
 * program, ddl-helper, which joins no collective of ours). */
static place_t *gather_places(const bench_t *b)
{
    place_t mine = {.pid = (int)getpid(), .node = b->info.node, .gpu = b->info.gpu};
    gethostname(mine.host, sizeof(mine.host) - 1);
    const char *cores = getenv("DDL_CORES"), *dev = getenv("CUDA_VISIBLE_DEVICES");
    snprintf(mine.cores, sizeof(mine.cores), "%s", cores ? cores : "-");
    snprintf(mine.devices, sizeof(mine.devices), "%s", dev ? dev : "-");
    place_t *all = calloc((size_t)b->info.owner_size, sizeof(place_t));
    MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE, b->owners);
    return all;
}

static void print_header(const bench_t *b, const opts_t *o, const place_t *places)
{
    static const char *const average_names[] = {"rank 0's", "the owners' mean", "the fastest owner's",
                                                "the slowest owner's"};
    const char *algo = getenv("DDL_ALGO");
    printf("# ddl-bench %s: %d nodes x %d GPUs x %d lanes = %d ranks, helpers %s, %s buffers, DDL_ALGO=%s\n",
           DDL_VERSION_STRING, b->info.nnodes, b->info.gpus_per_node, b->info.lanes, b->info.size,
           b->serve ? "serve" : "collective", o->shared ? "shared (ddl_malloc)" : "staged (malloc)",
           algo ? algo : "auto");
    char step[48];
    if (o->sweep.step_bytes)
        snprintf(step, sizeof(step), "%zu(bytes)", o->sweep.step_bytes);
    else
        snprintf(step, sizeof(step), "%ld(factor)", o->sweep.factor);
    printf("# minBytes %zu maxBytes %zu step: %s warmup iters: %ld%s iters: %ld agg iters: %ld validation: %d "
           "blocking: %d\n", o->sweep.min_bytes, o->sweep.max_bytes, step, o->warmup,
           o->settle ? " (then until the choice is settled)" : "", o->sweep.iters, o->agg, o->check, o->blocking);
    int multiple = b->mpi_thread == MPI_THREAD_MULTIPLE;
    printf("# MPI thread level: %s%s\n",
           multiple ? "multiple" : b->mpi_thread == MPI_THREAD_SERIALIZED ? "serialized"
           : b->mpi_thread == MPI_THREAD_FUNNELED ? "funneled" : "single",
           o->blocking ? "" : multiple ? " (requests run on the communicator's progress thread)"
                                       : " (no progress thread: requests run inside ddl_wait)");
    printf("#\n# Using devices (owners; each GPU's %d lane(s) run on its node)\n", b->info.lanes);
    for (int r = 0; r < b->info.owner_size; r++)
        printf("#  Rank %3d Pid %7d on %12s node %3d GPU %2d CUDA_VISIBLE_DEVICES %s cores %s\n", r, places[r].pid,
               places[r].host, places[r].node, places[r].gpu, places[r].devices, places[r].cores);
    printf("#\n# collective: %s; baseline: system %s over the %d owners; time = %s median of %ld calls (-a %d)\n",
           coll_names[o->coll], coll_mpi[o->coll], b->info.owner_size, average_names[o->average], o->sweep.iters,
           (int)o->average);
    if (o->coll != COLL_ALLREDUCE)
        printf("# size: the whole buffer (%s), as nccl-tests; count: its elements, %d blocks of count/%d\n",
               o->coll == COLL_ALLGATHER ? "the output" : "the input", b->info.owner_size, b->info.owner_size);
    if (o->mode == MODE_BOTH)
        printf("# ddl's calls alternate with the baseline's, out of place and in place (in place: MPI_IN_PLACE)\n");
    if (b->info.nnodes == 1 && o->mode != MODE_MPI)
        printf("# mem%%: the memory floor (every owner buffer read and written once: %s x size bytes at the "
               "owners' summed memcpy bandwidth of that size, copying at once) over the out-of-place time\n",
               o->coll == COLL_ALLREDUCE ? "2 x G" : "(G + 1)");
    printf("#%79s%32s\n", "out-of-place", "in-place");
    printf("# %12s %12s %8s %6s %6s %9s %8s %8s %6s %9s %8s %8s %6s %9s %7s %5s  %s\n", "size", "count", "type",
           "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", "mpi_time", "speedup",
           "mem%", "choice");
    printf("# %12s %12s %8s %6s %6s %9s %8s %8s %6s %9s %8s %8s %6s %9s %7s %5s\n", "(B)", "(elements)", "", "", "",
           "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "", "");
}

/* nccl-tests' algorithm bandwidth (GB/s; 0 when not timed) and the factor
 * that makes it the bus bandwidth over n GPUs, as nccl-tests defines it: an
 * allreduce's 2(n-1)/n, a reduce-scatter's and an allgather's (n-1)/n (of the
 * whole buffer's size). */
static double algbw(size_t bytes, double us) { return us > 0 ? (double)bytes / us / 1e3 : 0; }
static double bus_factor(coll_t coll, int n)
{
    return n > 1 ? (coll == COLL_ALLREDUCE ? 2.0 : 1.0) * (n - 1) / n : 1.0;
}

/* The redop column: nccl-tests' "none" for the allgather. */
static const char *redop_name(coll_t coll, ddl_redop_t op)
{
    return coll == COLL_ALLGATHER ? "none" : op_names[op];
}

/* DDL_DEBUG=INFO or TRACE: the per-size phase lines and the traffic lines. */
static int verbose_log(void)
{
    const char *debug = getenv("DDL_DEBUG");
    return debug && (!strcasecmp(debug, "INFO") || !strcasecmp(debug, "TRACE"));
}

#define DDL_BENCH_PHASES 16

/* Rank 0's lane-path calls of the size just run (warm-up, timed and checked,
 * both placements), phase by phase per call: where the time went. */
static void print_phases(const bench_t *b, const ddl_phase_stats_t *before, int n)
{
    ddl_phase_stats_t now[DDL_BENCH_PHASES];
    if (n <= 0 || ddl_comm_phases(b->comm, now, DDL_BENCH_PHASES) != n)
        return;
    unsigned long long calls = now[0].calls - before[0].calls;
    if (calls == 0)
        return;
    printf("#   phases, rank 0, us per lane call (%llu calls):", calls);
    for (int i = 0; i < n; i++) {
        printf("%s %s %.1f", i ? "," : "", now[i].name, (now[i].seconds - before[i].seconds) / (double)calls * 1e6);
        if (now[i].calls - before[i].calls != calls) /* a phase of some of the calls (early) */
            printf(" (%llu calls)", now[i].calls - before[i].calls);
    }
    printf("\n");
}

static void print_row(const row_t *r, coll_t coll, int n)
{
    double factor = bus_factor(coll, n), alg = algbw(r->bytes, r->oop_us), algi = algbw(r->bytes, r->ip_us);
    printf("  %12zu %12zu %8s %6s %6d ", r->bytes, r->count, dtype_names[r->dtype], redop_name(coll, r->op), -1);
    if (r->oop_us >= 0)
        printf("%9.2f %8.2f %8.2f %6ld %9.2f %8.2f %8.2f %6ld ", r->oop_us, alg, alg * factor, r->oop_wrong, r->ip_us,
               algi, algi * factor, r->ip_wrong);
    else
        printf("%9s %8s %8s %6s %9s %8s %8s %6s ", "-", "-", "-", "-", "-", "-", "-", "-");
    if (r->mpi_us >= 0)
        printf("%9.2f ", r->mpi_us);
    else
        printf("%9s ", "-");
    if (r->mpi_us > 0 && r->oop_us > 0)
        printf("%7.2f ", r->mpi_us / r->oop_us);
    else
        printf("%7s ", "-");
    if (r->floor_us > 0 && r->oop_us > 0)
        printf("%5.0f", 100.0 * r->floor_us / r->oop_us);
    else
        printf("%5s", "-");
    printf("  %s\n", r->choice[0] ? r->choice : "-");
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* A time and its bandwidths as nccl-tests' JSON has them, or null when the
 * run did not measure it. */
static void json_timing(FILE *f, const char *name, double us, size_t bytes, double factor, long wrong, int with_wrong)
{
    fprintf(f, "\"%s\": ", name);
    if (us < 0) {
        fputs("null", f);
        return;
    }
    double alg = algbw(bytes, us);
    fprintf(f, "{\"time\": %.3f, \"algbw\": %.4f, \"busbw\": %.4f", us, alg, alg * factor);
    if (with_wrong)
        fprintf(f, ", \"wrong\": %ld", wrong);
    fputc('}', f);
}

/* What was run, where, with which settings and when, then every size. */
static int write_json(const char *path, const bench_t *b, const opts_t *o, const place_t *places, const row_t *rows,
                      int nrows, int argc, char **argv, double avg_busbw, long wrong)
{
    FILE *f = fopen(path, o->force ? "w" : "wx");
    if (!f) {
        fprintf(stderr, "ddl-bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    char stamp[32];
    time_t now = time(NULL);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    int n = b->info.owner_size;
    double factor = bus_factor(o->coll, n);
    fprintf(f, "{\n  \"benchmark\": \"ddl-bench\",\n  \"version\": \"%s\",\n  \"timestamp\": \"%s\",\n"
               "  \"collective\": \"%s\",\n  \"command\": [", DDL_VERSION_STRING, stamp, coll_names[o->coll]);
    for (int i = 0; i < argc; i++) {
        fputs(i ? ", " : "", f);
        json_string(f, argv[i]);
    }
    fprintf(f, "],\n  \"layout\": {\"nodes\": %d, \"gpus_per_node\": %d, \"lanes\": %d, \"ranks\": %d, \"owners\": %d, "
               "\"helpers\": \"%s\", \"buffers\": \"%s\"},\n", b->info.nnodes, b->info.gpus_per_node, b->info.lanes,
            b->info.size, n, b->serve ? "serve" : "collective", o->shared ? "shared" : "staged");
    fprintf(f, "  \"options\": {\"minbytes\": %zu, \"maxbytes\": %zu, \"stepfactor\": %ld, \"stepbytes\": %zu, "
               "\"iters\": %ld, \"agg_iters\": %ld, \"blocking\": %d, \"warmup_iters\": %ld, \"warmup_until_settled\": %s, "
               "\"check\": %d, \"average\": %d, \"mode\": \"%s\"},\n",
            o->sweep.min_bytes, o->sweep.max_bytes, o->sweep.factor, o->sweep.step_bytes, o->sweep.iters, o->agg,
            o->blocking, o->warmup, o->settle ? "true" : "false", o->check, (int)o->average, mode_names[o->mode]);
    fputs("  \"hosts\": [", f);
    for (int r = 0, first = 1; r < n; r++) {
        int seen = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = strcmp(places[q].host, places[r].host) == 0;
        if (seen)
            continue;
        fputs(first ? "" : ", ", f);
        json_string(f, places[r].host);
        first = 0;
    }
    fputs("],\n  \"ranks\": [\n", f);
    for (int r = 0; r < n; r++) {
        fprintf(f, "    {\"owner\": %d, \"pid\": %d, \"host\": ", r, places[r].pid);
        json_string(f, places[r].host);
        fprintf(f, ", \"node\": %d, \"gpu\": %d, \"cuda_visible_devices\": ", places[r].node, places[r].gpu);
        json_string(f, places[r].devices);
        fputs(", \"cores\": ", f);
        json_string(f, places[r].cores);
        fprintf(f, "}%s\n", r + 1 < n ? "," : "");
    }
    /* The settings that change what ran: the library's, Slurm's job and step, MPI's. */
    fputs("  ],\n  \"environment\": {", f);
    extern char **environ;
    static const char *const keep[] = {"DDL_", "SLURM_JOB_ID=", "SLURM_STEP_ID=", "SLURM_JOB_NODELIST=",
                                       "OMPI_MCA_", "CUDA_VISIBLE_DEVICES=", NULL};
    int first = 1;
    for (char **e = environ; *e; e++) {
        int wanted = 0;
        for (int k = 0; keep[k] && !wanted; k++)
            wanted = strncmp(*e, keep[k], strlen(keep[k])) == 0;
        const char *eq = strchr(*e, '=');
        if (!wanted || !eq)
            continue;
        char name[128];
        snprintf(name, sizeof(name), "%.*s", (int)(eq - *e), *e);
        fputs(first ? "\n    " : ",\n    ", f);
        json_string(f, name);
        fputs(": ", f);
        json_string(f, eq + 1);
        first = 0;
    }
    fputs(first ? "},\n  \"results\": [\n" : "\n  },\n  \"results\": [\n", f);
    for (int i = 0; i < nrows; i++) {
        const row_t *r = &rows[i];
        fprintf(f, "    {\"size\": %zu, \"count\": %zu, \"type\": \"%s\", \"redop\": \"%s\", \"root\": -1, ", r->bytes,
                r->count, dtype_names[r->dtype], redop_name(o->coll, r->op));
        json_timing(f, "out_of_place", r->oop_us, r->bytes, factor, r->oop_wrong, 1);
        fputs(", ", f);
        json_timing(f, "in_place", r->ip_us, r->bytes, factor, r->ip_wrong, 1);
        fputs(", ", f);
        json_timing(f, "mpi", r->mpi_us, r->bytes, factor, 0, 0);
        if (r->mpi_us > 0 && r->oop_us > 0)
            fprintf(f, ", \"speedup\": %.4f", r->mpi_us / r->oop_us);
        else
            fputs(", \"speedup\": null", f);
        if (r->floor_us > 0 && r->oop_us > 0)
            fprintf(f, ", \"mem_floor_pct\": %.1f, \"choice\": ", 100.0 * r->floor_us / r->oop_us);
        else
            fputs(", \"mem_floor_pct\": null, \"choice\": ", f);
        if (r->choice[0])
            json_string(f, r->choice);
        else
            fputs("null", f);
        fputc('}', f);
        fputs(i + 1 < nrows ? ",\n" : "\n", f);
    }
    fprintf(f, "  ],\n  \"wrong\": %ld,\n  \"avg_bus_bandwidth\": %.6g\n}\n", wrong, avg_busbw);
    return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    /* Options first: --help, --version and mistakes answer at once, without MPI. */
    if (ddl_tool_info(argc, argv, "ddl-bench", usage))
        return 0;
    opts_t o;
    int rc = parse_opts(argc, argv, &o);
    if (rc != 0)
        return rc > 0 ? 0 : 2;
    if (o.dry_run) { /* the options parse: what a run would measure, without MPI */
        printf("ddl-bench: would run %s of %s, %zu to %zu bytes, %ld iterations (%ld collectives each), %s calls, "
               "%s buffers%s\n", mode_names[o.mode], coll_names[o.coll], o.sweep.min_bytes, o.sweep.max_bytes, o.sweep.iters, o.agg,
               o.blocking ? "blocking" : "nonblocking", o.shared ? "shared" : "staged", o.check ? ", checked" : "");
        return 0;
    }
    /* Requests (-z 0) need MPI_THREAD_MULTIPLE for the communicator's
     * progress thread, as ddl_init_mpi asks for them in applications; without
     * it they would run only inside ddl_wait.  Blocking calls run at MPI_Init's
     * level (Open MPI's own calls cost more at the higher one) unless
     * --mpi-thread says otherwise.  The baseline runs at the same level. */
    int level = MPI_THREAD_SINGLE;
    if (o.thread_multiple < 0)
        o.thread_multiple = !o.blocking;
    if (!o.thread_multiple)
        MPI_Init(&argc, &argv);
    else
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
    MPI_Query_thread(&level);
    bench_t b = {0};
    b.mpi_thread = level;
    ddl_config_t cfg;
    ddl_status_t st = ddl_config_init(&cfg);
    if (st == DDL_OK)
        st = ddl_comm_create(MPI_COMM_WORLD, &cfg, &b.comm);
    if (st != DDL_OK) {
        fprintf(stderr, "ddl-bench: %s: %s\n", ddl_status_string(st), ddl_last_error());
        MPI_Finalize();
        return 2;
    }
    ddl_comm_info(b.comm, &b.info);
    b.owners = ddl_comm_owners(b.comm);
    b.gpus = b.info.nnodes * b.info.gpus_per_node;
    b.serve = cfg.helper_mode == DDL_HELPERS_SERVE;
    int owner = b.info.role == DDL_ROLE_OWNER, err = 0;
    if (owner) {
        if (o.shared) {
            st = ddl_malloc(b.comm, o.sweep.max_bytes, &b.send);
            if (st == DDL_OK)
                st = ddl_malloc(b.comm, o.sweep.max_bytes, &b.recv);
        } else {
            b.send = malloc(o.sweep.max_bytes);
            b.recv = malloc(o.sweep.max_bytes);
            st = b.send && b.recv ? DDL_OK : DDL_ERR_NO_MEMORY;
        }
        if (st != DDL_OK) {
            fprintf(stderr, "ddl-bench: cannot allocate 2 x %zu bytes: %s\n", o.sweep.max_bytes, ddl_last_error());
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    /* A row for every size of every type and op (-d all, -o all). */
    int per_combo = 0;
    for (size_t bytes = o.sweep.min_bytes; bytes; bytes = bench_sweep_next(&o.sweep, bytes))
        per_combo++;
    row_t *rows = calloc((size_t)(per_combo * o.ndtypes * o.nops), sizeof(row_t));
    int nrows = 0;
    place_t *places = owner ? gather_places(&b) : NULL;
    if (b.info.rank == 0)
        print_header(&b, &o, places);
    if (b.serve && !owner) {
        st = ddl_serve(b.comm);
        if (st != DDL_OK) {
            fprintf(stderr, "ddl-bench: rank %d: ddl_serve: %s\n", b.info.rank, ddl_last_error());
            err = 1;
        }
    } else {
        int phases = b.info.rank == 0 && verbose_log(); /* rank 0 prints its own */
        for (int t = 0; t < o.ndtypes; t++) {
            for (int k = 0; k < o.nops; k++) {
                opts_t cur = o;
                cur.dtype = o.dtypes[t];
                cur.op = o.coll == COLL_ALLGATHER ? DDL_REDOP_SUM : o.ops[k]; /* nothing to reduce */
                if (o.coll == COLL_ALLGATHER && k > 0)
                    break;
                size_t esize = ddl_dtype_size(cur.dtype);
                size_t blocks = o.coll == COLL_ALLREDUCE ? 1 : (size_t)b.gpus;
                for (size_t bytes = o.sweep.min_bytes; bytes; bytes = bench_sweep_next(&o.sweep, bytes)) {
                    row_t *r = &rows[nrows];
                    /* A reduce-scatter's or allgather's whole buffer: whole blocks. */
                    *r = (row_t){.dtype = cur.dtype, .op = cur.op, .count = bytes / esize / blocks * blocks};
                    r->bytes = r->count * esize;
                    if (r->count == 0)
                        continue;
                    nrows++;
                    ddl_phase_stats_t before[DDL_BENCH_PHASES];
                    int nph = phases ? ddl_comm_phases(b.comm, before, DDL_BENCH_PHASES) : 0;
                    run_size(&b, &cur, r, &err);
                    if (b.info.rank == 0) {
                        print_row(r, o.coll, b.info.owner_size);
                        if (phases)
                            print_phases(&b, before, nph);
                        fflush(stdout);
                    }
                }
            }
        }
    }
    long wrong = 0;
    double busbw_sum = 0;
    int timed = 0;
    for (int i = 0; i < nrows; i++) {
        wrong += rows[i].oop_wrong + rows[i].ip_wrong;
        /* --mode mpi has only the baseline: its average is the baseline's. */
        double us = o.mode == MODE_MPI ? rows[i].mpi_us : rows[i].oop_us;
        if (us > 0) {
            busbw_sum += algbw(rows[i].bytes, us) * bus_factor(o.coll, b.info.owner_size);
            timed++;
        }
    }
    if (b.info.rank == 0 && verbose_log()) {
        /* What each dimension between nodes carried over the whole run (rank 0). */
        ddl_dim_stats_t dims[8];
        int nd = ddl_comm_stats(b.comm, dims, 8);
        for (int d = 0; d < nd; d++)
            printf("# traffic dimension %d (%d ranks%s): %llu bytes sent, %.3f ms in flight\n", dims[d].dim,
                   dims[d].size, dims[d].dim == 0 ? ", all nodes" : "", dims[d].bytes_sent, dims[d].seconds * 1e3);
    }
    double avg_busbw = timed ? busbw_sum / timed : 0.0;
    if (b.info.rank == 0) {
        printf("# Out of bounds values : %ld %s\n", wrong, wrong ? "FAILED" : "OK");
        printf("# Avg bus bandwidth    : %g%s\n", avg_busbw, o.mode == MODE_MPI ? " (MPI_Allreduce)" : "");
        if (o.json && write_json(o.json, &b, &o, places, rows, nrows, argc, argv, avg_busbw, wrong) != 0)
            err = 1;
    }
    free(rows);
    free(places);
    /* The verdict is agreed among the owners: with helpers in serve mode the
     * helper ranks may be another program (ddl-helper), which joins no
     * collective of ours on MPI_COMM_WORLD. */
    int bad = (wrong > 0) || err, any = bad;
    if (owner)
        MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, b.owners);
    if (owner && o.shared) {
        ddl_free(b.comm, b.send);
        ddl_free(b.comm, b.recv);
    } else if (owner) {
        free(b.send);
        free(b.recv);
    }
    ddl_comm_destroy(b.comm);
    MPI_Finalize();
    return any ? 1 : 0;
}
