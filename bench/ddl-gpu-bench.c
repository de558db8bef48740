/* SPDX-License-Identifier: Apache-2.0 */
/* ddl-gpu-bench: the device path against its references, on the GPUs of this
 * machine (run under mpirun, one process per lane; virtual GPUs may share one
 * physical device).  For each size, f32 sum, median of -n calls:
 *   ddl      ddl_allreduce on device buffers (owners' buffers opened by CUDA IPC)
 *   copy     cudaMemcpy device to device of the same size on each owner: the
 *            device's copy bandwidth, which the intra-node phase is bounded by
 *   mpi      the system MPI_Allreduce over the owners on device buffers when
 *            the MPI is CUDA-aware; else staged by hand (device to host,
 *            MPI_Allreduce, host to device), as a user of a plain MPI would
 * Prints one row per size: times in microseconds, ddl's bus bandwidth
 * (2 (P-1)/P bytes / time, as nccl-tests), the ratios, and (-c 1, the
 * default, as nccl-tests' -c) the wrong elements of a checked call: exit 1
 * when any. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "bench_opts.h"
#include "bench_stats.h"
#include "ddl.h"
#include "parse.h"
#include "refdata.h"
#include "tool.h"

#define MAX_BYTES ((size_t)256 << 20)

static void check_cuda(cudaError_t rc, const char *what)
{
    if (rc != cudaSuccess) {
        fprintf(stderr, "ddl-gpu-bench: %s: %s\n", what, cudaGetErrorString(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

typedef struct {
    ddl_comm_t *comm;
    ddl_comm_info_t info;
    MPI_Comm owners;
    void *dsend, *drecv, *host;
    int iters, check;
} bench_t;

/* The slowest owner's median time in microseconds of what(b, bytes). */
static double timed(bench_t *b, size_t bytes, int (*what)(bench_t *, size_t))
{
    int owner = b->info.role == DDL_ROLE_OWNER;
    double *t = calloc((size_t)b->iters, sizeof(double));
    for (int it = -2; it < b->iters; it++) {
        if (owner)
            MPI_Barrier(b->owners);
        double t0 = MPI_Wtime();
        if (what(b, bytes) != 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
        if (it >= 0)
            t[it] = MPI_Wtime() - t0;
    }
    double med = bench_median(t, (size_t)b->iters) * 1e6, worst = med;
    if (owner)
        MPI_Allreduce(&med, &worst, 1, MPI_DOUBLE, MPI_MAX, b->owners);
    free(t);
    return worst;
}

static int run_ddl(bench_t *b, size_t bytes)
{
    int owner = b->info.role == DDL_ROLE_OWNER;
    ddl_status_t st = ddl_allreduce(owner ? b->dsend : NULL, owner ? b->drecv : NULL, (int64_t)(bytes / 4),
                                    DDL_DTYPE_F32, DDL_REDOP_SUM, b->comm);
    if (st != DDL_OK)
        fprintf(stderr, "ddl-gpu-bench: ddl_allreduce: %s\n", ddl_last_error());
    return st != DDL_OK;
}

/* Wrong elements of one ddl_allreduce on fresh data, against the reference of
 * tests/common/refdata.c, the output poisoned first; every element when the
 * owners' results differ in their bits.  The total is known on the owners. */
static long check_ddl(bench_t *b, size_t bytes)
{
    int owner = b->info.role == DDL_ROLE_OWNER;
    size_t count = bytes / 4;
    uint64_t seed = count * 7919 + 1;
    if (owner) {
        ddl_ref_fill(b->host, count, DDL_DTYPE_F32, DDL_REDOP_SUM, b->info.owner_rank, seed);
        check_cuda(cudaMemcpy(b->dsend, b->host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
        ddl_ref_poison(b->host, bytes);
        check_cuda(cudaMemcpy(b->drecv, b->host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    if (run_ddl(b, bytes) != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (!owner)
        return 0;
    check_cuda(cudaMemcpy(b->host, b->drecv, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    long wrong = 0, total = 0;
    for (size_t i = 0; i < count; i++) {
        ddl_ref_t ref = ddl_ref_expected(DDL_DTYPE_F32, DDL_REDOP_SUM, b->info.owner_size, i, seed);
        wrong += !ddl_ref_matches(b->host, i, DDL_DTYPE_F32, &ref);
    }
    uint64_t h = ddl_ref_hash(b->host, bytes), lo, hi;
    MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, b->owners);
    MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, b->owners);
    MPI_Allreduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, b->owners);
    return lo != hi && total == 0 ? (long)count : total;
}

static int run_copy(bench_t *b, size_t bytes)
{
    /* cudaMemcpy between device buffers returns before the copy is done. */
    if (b->info.role == DDL_ROLE_OWNER) {
        check_cuda(cudaMemcpy(b->drecv, b->dsend, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy");
        check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
    return 0;
}

static int cuda_aware;

static int run_mpi(bench_t *b, size_t bytes)
{
    if (b->info.role != DDL_ROLE_OWNER)
        return 0;
    int n = (int)(bytes / 4);
    if (cuda_aware)
        return MPI_Allreduce(b->dsend, b->drecv, n, MPI_FLOAT, MPI_SUM, b->owners) != MPI_SUCCESS;
    check_cuda(cudaMemcpy(b->host, b->dsend, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    int rc = MPI_Allreduce(MPI_IN_PLACE, b->host, n, MPI_FLOAT, MPI_SUM, b->owners);
    check_cuda(cudaMemcpy(b->drecv, b->host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    return rc != MPI_SUCCESS;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: ddl-gpu-bench [options]   (under mpirun or srun, one process per lane)\n"
               "Time ddl_allreduce on device buffers against a device copy and the system MPI, f32 sum.\n"
               "  -b, --minbytes BYTES  smallest size (default 4K; K, M, G suffixes)\n"
               "  -e, --maxbytes BYTES  largest size (default 256M)\n"
               "  -f, --stepfactor F    size multiplier between steps (default 4)\n"
               "  -i, --stepbytes BYTES size increment between steps, in place of -f\n"
               "  -n, --iters ITERS     timed calls per size, median reported (default 20)\n"
               "  -c, --check 0|1       check one call per size against a reference (default 1)\n"
               "  -t 1, -g 1, -G 0      nccl-tests' threads, GPUs per thread, CUDA graphs: only these values\n"
               "  -h, --help; --version\n");
}

/* nccl-tests' names, as ddl-bench; 1: --help answered, -1: a mistake. */
static int parse_opts(int argc, char **argv, bench_sweep_t *o, int *check)
{
    *o = (bench_sweep_t){4096, MAX_BYTES, 4, 20, 0};
    *check = 1;
    static const struct option longopts[] = {BENCH_SWEEP_LONGOPTS, BENCH_NCCL_LONGOPTS, {"check", required_argument, 0, 'c'},
                                             {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, BENCH_SWEEP_SHORTOPTS BENCH_NCCL_SHORTOPTS "c:h", longopts, NULL)) != -1) {
        int bad = 0;
        long v = 0;
        if (c == 'h') {
            usage(stdout);
            return 1;
        }
        if (c == 'c') {
            bad = ddl_parse_long(optarg, 0, 1, &v);
            *check = (int)v;
        } else if (!bench_sweep_option(c, optarg, o, &bad) && !bench_nccl_option(c, optarg, o, &bad)) {
            usage(stderr);
            return -1;
        }
        if (bad && bad != BENCH_OPT_REFUSED)
            fprintf(stderr, "ddl-gpu-bench: invalid value '%s' for -%c\n", optarg, c);
        if (bad)
            return -1;
    }
    return bench_sweep_check("ddl-gpu-bench", argc, argv, o, 4);
}

int main(int argc, char **argv)
{
    /* Options first: --help, --version and mistakes answer at once, without MPI. */
    if (ddl_tool_info(argc, argv, "ddl-gpu-bench", usage))
        return 0;
    bench_sweep_t o;
    int check;
    int rc = parse_opts(argc, argv, &o, &check);
    if (rc != 0)
        return rc > 0 ? 0 : 2;
    MPI_Init(&argc, &argv);
    bench_t b = {.iters = (int)o.iters, .check = check};
    cuda_aware = getenv("DDL_BENCH_CUDA_AWARE_MPI") && atoi(getenv("DDL_BENCH_CUDA_AWARE_MPI"));
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        fprintf(stderr, "ddl-gpu-bench: CUDA sees no device\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    ddl_config_t cfg;
    if (ddl_config_init(&cfg) != DDL_OK || ddl_comm_create(MPI_COMM_WORLD, &cfg, &b.comm) != DDL_OK) {
        fprintf(stderr, "ddl-gpu-bench: %s\n", ddl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    ddl_comm_info(b.comm, &b.info);
    b.owners = ddl_comm_owners(b.comm);
    /* Virtual nodes' GPUs on different devices while there are enough. */
    check_cuda(cudaSetDevice((b.info.node * b.info.gpus_per_node + b.info.gpu) % devices), "cudaSetDevice");
    if (b.info.role == DDL_ROLE_OWNER) {
        check_cuda(cudaMalloc(&b.dsend, o.max_bytes), "cudaMalloc");
        check_cuda(cudaMalloc(&b.drecv, o.max_bytes), "cudaMalloc");
        check_cuda(cudaMemset(b.dsend, 0, o.max_bytes), "cudaMemset");
        check_cuda(cudaMallocHost(&b.host, o.max_bytes), "cudaMallocHost");
    }
    int P = b.info.owner_size > 0 ? b.info.owner_size : b.info.nnodes * b.info.gpus_per_node;
    if (b.info.rank == 0) {
        printf("# ddl-gpu-bench: %d nodes x %d GPUs x %d lanes on %d physical device%s, f32 sum, median of %d\n",
               b.info.nnodes, b.info.gpus_per_node, b.info.lanes, devices, devices == 1 ? "" : "s", b.iters);
        printf("# mpi: %s\n", cuda_aware ? "MPI_Allreduce on device buffers (CUDA-aware MPI)"
                                         : "staged by hand: cudaMemcpy D2H, MPI_Allreduce, cudaMemcpy H2D");
        printf("%12s %10s %10s %10s %9s %9s %9s %7s\n", "bytes", "ddl_us", "copy_us", "mpi_us", "busbw", "ddl/copy",
               "speedup", "#wrong");
    }
    long wrong_total = 0;
    for (size_t bytes = o.min_bytes / 4 * 4; bytes; bytes = bench_sweep_next(&o, bytes)) {
        double ddl_us = timed(&b, bytes, run_ddl), copy_us = timed(&b, bytes, run_copy),
               mpi_us = timed(&b, bytes, run_mpi);
        long wrong = b.check ? check_ddl(&b, bytes) : 0;
        wrong_total += wrong;
        if (b.info.rank == 0) {
            printf("%12zu %10.1f %10.1f %10.1f %9.2f %9.2f %9.2f ", bytes, ddl_us, copy_us, mpi_us,
                   2.0 * (P - 1) / P * (double)bytes / ddl_us / 1e3, copy_us / ddl_us, mpi_us / ddl_us);
            if (b.check)
                printf("%7ld\n", wrong);
            else
                printf("%7s\n", "N/A");
        }
    }
    MPI_Bcast(&wrong_total, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (b.info.role == DDL_ROLE_OWNER) {
        cudaFree(b.dsend);
        cudaFree(b.drecv);
        cudaFreeHost(b.host);
    }
    ddl_comm_destroy(b.comm);
    MPI_Finalize();
    return wrong_total ? 1 : 0;
}
