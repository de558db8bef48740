/* SPDX-License-Identifier: Apache-2.0 */
/* Integration test of the device path: owners' buffers in GPU memory, helpers
 * reaching them by CUDA IPC, every type and op, counts from 0 to over a
 * million, in-place and out-of-place, with and without a stream, against the
 * independent serial reference of tests/common/refdata.c.  Output buffers are
 * poisoned on the device before every call; results must be bit-identical on
 * all owners and the send buffer untouched, and with DDL_TEST_SAME_AS_HOST=1
 * bit-identical to the host path's for the same inputs.  Then the
 * reduce-scatter and allgather on device buffers (gpu_blocks.c).  Exits 77
 * (skip) when CUDA sees no device.  Several virtual GPUs may share one
 * physical device. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "ddl.h"
#include "gpu_blocks.h"
#include "refdata.h"
#include "watchdog.h"

#define LARGE_COUNT ((1u << 20) + 3)

typedef struct {
    ddl_comm_t *comm;
    ddl_comm_info_t info;
    void *dsend, *drecv;      /* device */
    void *hsend, *hrecv;      /* host copies */
    void *hpath;              /* the same inputs through the host path */
    int same_as_host;         /* DDL_TEST_SAME_AS_HOST: its result must have the same bits */
    int reused;               /* the buffers were allocated again at the same addresses */
    cudaStream_t stream;
    int failures, cases;
} ctx_t;

static void check_cuda(cudaError_t rc, const char *what)
{
    if (rc != cudaSuccess) {
        fprintf(stderr, "FAIL: %s: %s\n", what, cudaGetErrorString(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* How a case calls: ddl_allreduce; ddl_allreduce_stream on the owner's stream;
 * ddl_iallreduce_stream with the input written on the stream just before (the
 * request must order after it) and the result read on the stream after
 * ddl_wait_stream (the stream must wait for the request). */
enum { CALL_BLOCKING, CALL_STREAM, CALL_NONBLOCKING, CALL_KINDS };
static const char *const call_names[] = {"", " on a stream", " nonblocking on a stream"};

static void fail(ctx_t *x, ddl_dtype_t t, ddl_redop_t op, size_t count, int inplace, int streamed, const char *detail)
{
    if (x->failures++ < 20)
        fprintf(stderr, "FAIL rank %d: %s %s count %zu %s%s: %s\n", x->info.rank, ddl_dtype_name(t),
                ddl_redop_name(op), count, inplace ? "in-place" : "out-of-place", call_names[streamed],
                detail);
}

/* The inputs of the case just run (x->hsend) through the host path, in place:
 * the device path's result (x->hrecv) must have the same bits.  Every rank
 * calls, as for the device call. */
static void compare_with_host(ctx_t *x, ddl_dtype_t t, ddl_redop_t op, size_t count, int inplace, int streamed)
{
    int owner = x->info.role == DDL_ROLE_OWNER;
    size_t bytes = count * ddl_dtype_size(t);
    if (owner)
        memcpy(x->hpath, x->hsend, bytes);
    ddl_status_t st = ddl_allreduce(owner ? DDL_IN_PLACE : NULL, owner ? x->hpath : NULL, (int64_t)count, t, op, x->comm);
    if (st != DDL_OK) {
        fail(x, t, op, count, inplace, streamed, ddl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (owner && memcmp(x->hpath, x->hrecv, bytes) != 0)
        fail(x, t, op, count, inplace, streamed, "the device path's result differs from the host path's in its bits");
}

static void run_case(ctx_t *x, ddl_dtype_t t, ddl_redop_t op, size_t count, int inplace, int streamed, uint64_t seed)
{
    size_t bytes = count * ddl_dtype_size(t);
    int owner = x->info.role == DDL_ROLE_OWNER;
    x->cases++;
    char what[120];
    snprintf(what, sizeof(what), "%s %s count %zu %s%s", ddl_dtype_name(t), ddl_redop_name(op), count,
             inplace ? "in-place" : "out-of-place", call_names[streamed]);
    ddl_watchdog_step("%s: filling the buffers", what);
    if (owner) {
        void *target = inplace ? x->drecv : x->dsend;
        ddl_ref_fill(x->hsend, count, t, op, x->info.owner_rank, seed);
        if (!inplace) {
            ddl_ref_poison(x->hrecv, bytes);
            check_cuda(cudaMemcpy(x->drecv, x->hrecv, bytes, cudaMemcpyHostToDevice), "poisoning the output");
        }
        if (streamed == CALL_NONBLOCKING) /* still in flight on the stream when the request is posted */
            check_cuda(cudaMemcpyAsync(target, x->hsend, bytes, cudaMemcpyHostToDevice, x->stream), "filling the input");
        else
            check_cuda(cudaMemcpy(target, x->hsend, bytes, cudaMemcpyHostToDevice), "filling the input");
    }
    const void *send = owner ? (inplace ? DDL_IN_PLACE : x->dsend) : NULL;
    void *recv = owner ? x->drecv : NULL;
    ddl_status_t st;
    ddl_watchdog_step("%s: the allreduce", what);
    if (streamed == CALL_NONBLOCKING) {
        ddl_request_t *req = NULL;
        st = ddl_iallreduce_stream(send, recv, (int64_t)count, t, op, DDL_MEM_DEVICE, owner ? x->stream : NULL, x->comm,
                                   &req);
        if (st == DDL_OK && owner) {
            /* The copy of the result waits for the request on the stream, not on this thread. */
            if ((st = ddl_wait_stream(req, x->stream)) == DDL_OK)
                check_cuda(cudaMemcpyAsync(x->hrecv, x->drecv, bytes, cudaMemcpyDeviceToHost, x->stream),
                           "reading the result on the stream");
            ddl_watchdog_step("%s: cudaStreamSynchronize after ddl_wait_stream", what);
            check_cuda(cudaStreamSynchronize(x->stream), "waiting for the stream");
        }
        ddl_watchdog_step("%s: ddl_wait", what);
        if (st == DDL_OK)
            st = ddl_wait(req);
        ddl_request_free(req);
    } else {
        st = streamed ? ddl_allreduce_stream(send, recv, (int64_t)count, t, op, DDL_MEM_DEVICE, x->stream, x->comm)
                      : ddl_allreduce(send, recv, (int64_t)count, t, op, x->comm);
    }
    if (st != DDL_OK) {
        fail(x, t, op, count, inplace, streamed, ddl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    ddl_watchdog_step("%s: reading the result", what);
    if (owner && streamed != CALL_NONBLOCKING)
        check_cuda(cudaMemcpy(x->hrecv, x->drecv, bytes, cudaMemcpyDeviceToHost), "reading the result");
    ddl_watchdog_step("%s: the host path's allreduce of the same inputs", what);
    if (x->same_as_host)
        compare_with_host(x, t, op, count, inplace, streamed);
    ddl_watchdog_step("%s: checking the result", what);
    if (!owner)
        return;
    int bad = 0;
    for (size_t i = 0; i < count && bad < 3; i++) {
        ddl_ref_t ref = ddl_ref_expected(t, op, x->info.owner_size, i, seed);
        if (!ddl_ref_matches(x->hrecv, i, t, &ref)) {
            char msg[160];
            snprintf(msg, sizeof(msg), "element %zu is %.17g, expected %.17g", i, ddl_ref_value(x->hrecv, i, t),
                     ref.value);
            fail(x, t, op, count, inplace, streamed, msg);
            bad++;
        }
    }
    if (!inplace) {
        void *back = malloc(bytes ? bytes : 1);
        check_cuda(cudaMemcpy(back, x->dsend, bytes, cudaMemcpyDeviceToHost), "reading the input back");
        if (memcmp(back, x->hsend, bytes) != 0)
            fail(x, t, op, count, inplace, streamed, "the send buffer changed");
        free(back);
    }
    /* Every owner holds the same bits. */
    uint64_t h = ddl_ref_hash(x->hrecv, bytes), lo, hi;
    MPI_Comm owners = ddl_comm_owners(x->comm);
    MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, owners);
    MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, owners);
    if (lo != hi)
        fail(x, t, op, count, inplace, streamed, "owners' results differ");
}

/* Several requests in flight on one stream: the inputs still being copied in
 * when they are posted, the copy of the results queued behind ddl_wait_stream
 * of every one of them. */
#define INFLIGHT 4
static void run_inflight(ctx_t *x, size_t part, uint64_t seed)
{
    int owner = x->info.role == DDL_ROLE_OWNER;
    size_t bytes = part * sizeof(float);
    ddl_request_t *req[INFLIGHT];
    x->cases++;
    ddl_watchdog_step("%d requests in flight of %zu float: posting", INFLIGHT, part);
    if (owner) {
        for (int k = 0; k < INFLIGHT; k++)
            ddl_ref_fill((char *)x->hsend + k * bytes, part, DDL_DTYPE_F32, DDL_REDOP_SUM, x->info.owner_rank, seed + k);
        check_cuda(cudaMemcpyAsync(x->drecv, x->hsend, INFLIGHT * bytes, cudaMemcpyHostToDevice, x->stream),
                   "filling the inputs");
    }
    for (int k = 0; k < INFLIGHT; k++)
        if (ddl_iallreduce_stream(owner ? DDL_IN_PLACE : NULL, owner ? (char *)x->drecv + k * bytes : NULL,
                                  (int64_t)part, DDL_DTYPE_F32, DDL_REDOP_SUM, DDL_MEM_DEVICE,
                                  owner ? x->stream : NULL, x->comm, &req[k]) != DDL_OK ||
            (owner && ddl_wait_stream(req[k], x->stream) != DDL_OK)) {
            fail(x, DDL_DTYPE_F32, DDL_REDOP_SUM, part, 1, CALL_NONBLOCKING, ddl_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    ddl_watchdog_step("%d requests in flight of %zu float: waiting", INFLIGHT, part);
    if (owner) {
        check_cuda(cudaMemcpyAsync(x->hrecv, x->drecv, INFLIGHT * bytes, cudaMemcpyDeviceToHost, x->stream),
                   "reading the results on the stream");
        check_cuda(cudaStreamSynchronize(x->stream), "waiting for the stream");
    }
    for (int k = 0; k < INFLIGHT; k++) {
        if (ddl_wait(req[k]) != DDL_OK)
            fail(x, DDL_DTYPE_F32, DDL_REDOP_SUM, part, 1, CALL_NONBLOCKING, ddl_last_error());
        ddl_request_free(req[k]);
    }
    for (int k = 0; owner && k < INFLIGHT; k++)
        for (size_t i = 0; i < part; i++) {
            ddl_ref_t ref = ddl_ref_expected(DDL_DTYPE_F32, DDL_REDOP_SUM, x->info.owner_size, i, seed + k);
            if (!ddl_ref_matches((char *)x->hrecv + k * bytes, i, DDL_DTYPE_F32, &ref)) {
                char msg[160];
                snprintf(msg, sizeof(msg), "%d requests in flight: request %d, element %zu is wrong", INFLIGHT, k, i);
                fail(x, DDL_DTYPE_F32, DDL_REDOP_SUM, part, 1, CALL_NONBLOCKING, msg);
                break;
            }
        }
}

int main(int argc, char **argv)
{
    int provided; /* nonblocking cases on a stream need the progress thread */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess)
        devices = 0;
    int min_devices;
    MPI_Allreduce(&devices, &min_devices, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (min_devices == 0) {
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0)
            printf("SKIP: CUDA sees no device here\n");
        MPI_Finalize();
        return 77;
    }
    ctx_t x = {0};
    ddl_config_t cfg;
    ddl_status_t st = ddl_config_init(&cfg);
    if (st == DDL_OK)
        st = ddl_comm_create(MPI_COMM_WORLD, &cfg, &x.comm);
    if (st != DDL_OK) {
        fprintf(stderr, "set-up failed: %s: %s\n", ddl_status_string(st), ddl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    ddl_comm_info(x.comm, &x.info);
    if (!(x.info.role == DDL_ROLE_HELPER && cfg.helper_mode == DDL_HELPERS_SERVE)) /* serving waits as long as it must */
        ddl_watchdog_start(x.info.rank);
    /* Virtual GPUs round-robin over the physical ones, virtual nodes' GPUs
     * apart while there are enough (NCCL refuses two ranks of a communicator
     * on one GPU). */
    check_cuda(cudaSetDevice((x.info.node * x.info.gpus_per_node + x.info.gpu) % devices), "cudaSetDevice");
    size_t max_bytes = (size_t)LARGE_COUNT * 8;
    if (x.info.role == DDL_ROLE_OWNER) {
        check_cuda(cudaMalloc(&x.dsend, max_bytes), "cudaMalloc");
        check_cuda(cudaMalloc(&x.drecv, max_bytes), "cudaMalloc");
        check_cuda(cudaStreamCreate(&x.stream), "cudaStreamCreate");
        x.hsend = malloc(max_bytes);
        x.hrecv = malloc(max_bytes);
        x.hpath = malloc(max_bytes);
    }
    x.same_as_host = getenv("DDL_TEST_SAME_AS_HOST") && atoi(getenv("DDL_TEST_SAME_AS_HOST"));
    static const size_t counts[] = {0, 1, 2, 13, 1009, 65537, LARGE_COUNT};
    int quick = getenv("DDL_TEST_QUICK") != NULL;
    if (x.info.role == DDL_ROLE_HELPER && cfg.helper_mode == DDL_HELPERS_SERVE) {
        if (ddl_serve(x.comm) != DDL_OK) {
            fprintf(stderr, "FAIL rank %d: ddl_serve: %s\n", x.info.rank, ddl_last_error());
            x.failures++;
        }
    } else {
        uint64_t seed = 1;
        for (int t = 0; t < DDL_DTYPE_COUNT; t++)
            for (int op = 0; op < DDL_REDOP_COUNT; op++)
                for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
                    if (quick && counts[c] == LARGE_COUNT && t != DDL_DTYPE_F32 && t != DDL_DTYPE_F16)
                        continue;
                    for (int inplace = 0; inplace < 2; inplace++, seed++)
                        run_case(&x, (ddl_dtype_t)t, (ddl_redop_t)op, counts[c], inplace, (int)(seed % CALL_KINDS), seed);
                }
        run_inflight(&x, 1009, seed);
        run_inflight(&x, LARGE_COUNT / INFLIGHT, seed + INFLIGHT);
        /* New allocations where the old ones were (a caching allocator, and
         * the emulation, hand the same addresses out again): the node's other
         * ranks must map them anew, not read the freed ones. */
        ddl_watchdog_step("freeing and allocating the buffers again");
        if (x.info.role == DDL_ROLE_OWNER) {
            void *old_send = x.dsend, *old_recv = x.drecv;
            check_cuda(cudaFree(x.dsend), "cudaFree");
            check_cuda(cudaFree(x.drecv), "cudaFree");
            check_cuda(cudaMalloc(&x.dsend, max_bytes), "cudaMalloc");
            check_cuda(cudaMalloc(&x.drecv, max_bytes), "cudaMalloc");
            x.reused = x.dsend == old_send && x.drecv == old_recv;
        }
        seed += 2 * INFLIGHT;
        for (int inplace = 0; inplace < 2; inplace++, seed++)
            run_case(&x, DDL_DTYPE_F32, DDL_REDOP_SUM, 65537, inplace, CALL_BLOCKING, seed);
        x.failures += ddl_test_gpu_blocks(x.comm, &x.info, quick, &x.cases);
    }
    ddl_watchdog_step("the totals and ddl_comm_destroy");
    /* Totals over the owners (serve-mode helpers join no collective of ours). */
    int failures = x.failures;
    if (x.info.role == DDL_ROLE_OWNER) {
        MPI_Allreduce(&x.failures, &failures, 1, MPI_INT, MPI_SUM, ddl_comm_owners(x.comm));
        cudaFree(x.dsend);
        cudaFree(x.drecv);
        cudaStreamDestroy(x.stream);
        free(x.hsend);
        free(x.hrecv);
        free(x.hpath);
    }
    ddl_comm_destroy(x.comm);
    if (x.info.rank == 0)
        printf("%s: %d cases, %d failures (%d nodes x %d GPUs x %d lanes, helpers %s, on %d device%s%s)\n",
               failures ? "FAIL" : "PASS", x.cases, failures, x.info.nnodes, x.info.gpus_per_node, x.info.lanes,
               cfg.helper_mode == DDL_HELPERS_SERVE ? "serve" : "collective", devices, devices == 1 ? "" : "s",
               x.reused ? "; buffers reallocated at the same addresses" : "");
    MPI_Finalize();
    return failures ? 1 : 0;
}
