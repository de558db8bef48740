/* SPDX-License-Identifier: Apache-2.0 */
/* ddl_reduce_scatter and ddl_allgather on device buffers, against the
 * independent serial reference of tests/common/refdata.c: counts on the MPI
 * path (0, 1, 13) and on the lanes (65537 and more, with several staging
 * rounds where DDL_STAGE_SIZE is small), out of place and in place (NCCL's,
 * and DDL_IN_PLACE for the allgather), each called in turn plainly, in its
 * _stream form with the input still being copied on the stream, and in its
 * nonblocking _stream form with the result read on the stream after
 * ddl_wait_stream.  Outputs are poisoned on the device first and inputs
 * must come back untouched. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "gpu_blocks.h"
#include "refdata.h"
#include "watchdog.h"

typedef struct {
    ddl_comm_t *comm;
    const ddl_comm_info_t *info;
    int owner;
    size_t blocks;      /* P: owners in the job */
    char *dsend, *drecv; /* device, P x the largest block */
    char *hbuf, *hcheck; /* host */
    cudaStream_t stream;
    int failures, cases;
} blocks_t;

/* How a case calls (as test_gpu_allreduce.c's cases do). */
enum { CALL_PLAIN, CALL_STREAM, CALL_NONBLOCKING, CALL_KINDS };
static const char *const call_names[] = {"", " on a stream", " nonblocking on a stream"};

static int copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    return bytes == 0 || cudaMemcpy(dst, src, bytes, kind) == cudaSuccess;
}

/* The input's copy to the device: on the stream, not waited for, where the
 * call must order itself after the stream's work. */
static int fill(const blocks_t *x, void *dst, const void *src, size_t bytes, int how)
{
    if (how == CALL_PLAIN || bytes == 0)
        return copy(dst, src, bytes, cudaMemcpyHostToDevice);
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, x->stream) == cudaSuccess;
}

/* The collective (reduce-scatter when op is not -1) the way `how` says; the
 * result is in recv when it returns. */
static ddl_status_t call(blocks_t *x, const void *send, void *recv, size_t count, ddl_dtype_t t, int op, int how)
{
    void *stream = x->owner ? x->stream : NULL;
    if (how == CALL_PLAIN)
        return op >= 0 ? ddl_reduce_scatter(send, recv, (int64_t)count, t, (ddl_redop_t)op, x->comm)
                       : ddl_allgather(send, recv, (int64_t)count, t, x->comm);
    if (how == CALL_STREAM)
        return op >= 0 ? ddl_reduce_scatter_stream(send, recv, (int64_t)count, t, (ddl_redop_t)op, DDL_MEM_DEVICE,
                                                   stream, x->comm)
                       : ddl_allgather_stream(send, recv, (int64_t)count, t, DDL_MEM_DEVICE, stream, x->comm);
    ddl_request_t *req = NULL;
    ddl_status_t st = op >= 0 ? ddl_ireduce_scatter_stream(send, recv, (int64_t)count, t, (ddl_redop_t)op,
                                                           DDL_MEM_DEVICE, stream, x->comm, &req)
                              : ddl_iallgather_stream(send, recv, (int64_t)count, t, DDL_MEM_DEVICE, stream, x->comm,
                                                      &req);
    /* The stream waits for the request, then the thread for the stream. */
    if (st == DDL_OK && x->owner && (st = ddl_wait_stream(req, x->stream)) == DDL_OK &&
        cudaStreamSynchronize(x->stream) != cudaSuccess)
        st = DDL_ERR_SYSTEM;
    ddl_status_t waited = req ? ddl_wait(req) : st;
    ddl_request_free(req);
    return st == DDL_OK ? waited : st;
}

static void fail(blocks_t *x, const char *coll, ddl_dtype_t t, ddl_redop_t op, size_t count, int inplace, int how,
                 const char *detail)
{
    if (x->failures++ < 20)
        fprintf(stderr, "FAIL rank %d: %s on device buffers%s: %s %s count %zu %s: %s\n", x->info->rank, coll,
                call_names[how], ddl_dtype_name(t), ddl_redop_name(op), count,
                inplace ? "in-place" : "out-of-place", detail);
}

/* Owner r's output is block r of the reduction of every owner's input. */
static void reduce_scatter_case(blocks_t *x, ddl_dtype_t t, ddl_redop_t op, size_t count, int inplace, int how,
                                uint64_t seed)
{
    size_t es = ddl_dtype_size(t), total = count * x->blocks, r = (size_t)x->info->owner_rank;
    char *send = NULL, *recv = NULL;
    x->cases++;
    if (x->owner) {
        send = inplace ? x->drecv : x->dsend;
        recv = inplace ? send + r * count * es : x->drecv;
        ddl_ref_fill(x->hbuf, total, t, op, (int)r, seed);
        ddl_ref_poison(x->hcheck, count * es);
        if ((!inplace && !copy(recv, x->hcheck, count * es, cudaMemcpyHostToDevice)) ||
            !fill(x, send, x->hbuf, total * es, how)) {
            fail(x, "reduce_scatter", t, op, count, inplace, how, "filling the buffers failed");
            return;
        }
    }
    if (call(x, send, recv, count, t, (int)op, how) != DDL_OK) {
        fail(x, "reduce_scatter", t, op, count, inplace, how, ddl_last_error());
        return;
    }
    if (!x->owner)
        return;
    if (!copy(x->hcheck, recv, count * es, cudaMemcpyDeviceToHost)) {
        fail(x, "reduce_scatter", t, op, count, inplace, how, "reading the result failed");
        return;
    }
    for (size_t i = 0; i < count; i++) {
        ddl_ref_t ref = ddl_ref_expected(t, op, (int)x->blocks, r * count + i, seed);
        if (!ddl_ref_matches(x->hcheck, i, t, &ref)) {
            char detail[128];
            snprintf(detail, sizeof(detail), "element %zu is %g, expected %g", i, ddl_ref_value(x->hcheck, i, t),
                     ref.value);
            fail(x, "reduce_scatter", t, op, count, inplace, how, detail);
            return;
        }
    }
    if (!inplace && (!copy(x->hcheck, send, total * es, cudaMemcpyDeviceToHost) ||
                     memcmp(x->hcheck, x->hbuf, total * es) != 0))
        fail(x, "reduce_scatter", t, op, count, inplace, how, "the send buffer changed");
}

/* Block j of every owner's output is owner j's input, bit for bit. */
static void allgather_case(blocks_t *x, ddl_dtype_t t, size_t count, int inplace, int how, uint64_t seed)
{
    size_t es = ddl_dtype_size(t), total = count * x->blocks, r = (size_t)x->info->owner_rank;
    const void *send = NULL;
    char *recv = NULL;
    x->cases++;
    if (x->owner) {
        recv = x->drecv;
        char *mine = inplace ? recv + r * count * es : x->dsend;
        send = inplace && seed % 2 ? DDL_IN_PLACE : mine;
        ddl_ref_poison(x->hcheck, total * es);
        ddl_ref_fill(x->hbuf, count, t, DDL_REDOP_SUM, (int)r, seed);
        if (!copy(recv, x->hcheck, total * es, cudaMemcpyHostToDevice) || !fill(x, mine, x->hbuf, count * es, how)) {
            fail(x, "allgather", t, DDL_REDOP_SUM, count, inplace, how, "filling the buffers failed");
            return;
        }
    }
    if (call(x, send, recv, count, t, -1, how) != DDL_OK) {
        fail(x, "allgather", t, DDL_REDOP_SUM, count, inplace, how, ddl_last_error());
        return;
    }
    if (!x->owner)
        return;
    if (!copy(x->hcheck, recv, total * es, cudaMemcpyDeviceToHost)) {
        fail(x, "allgather", t, DDL_REDOP_SUM, count, inplace, how, "reading the result failed");
        return;
    }
    for (size_t j = 0; j < x->blocks; j++) {
        ddl_ref_fill(x->hbuf, count, t, DDL_REDOP_SUM, (int)j, seed);
        if (memcmp(x->hcheck + j * count * es, x->hbuf, count * es) != 0) {
            char detail[96];
            snprintf(detail, sizeof(detail), "block %zu (owner %zu's data) differs", j, j);
            fail(x, "allgather", t, DDL_REDOP_SUM, count, inplace, how, detail);
            return;
        }
    }
}

int ddl_test_gpu_blocks(ddl_comm_t *comm, const ddl_comm_info_t *info, int quick, int *cases)
{
    static const size_t counts[] = {0, 1, 13, 65537, (1u << 18) + 3};
    static const ddl_dtype_t types[] = {DDL_DTYPE_F32, DDL_DTYPE_BF16, DDL_DTYPE_I64, DDL_DTYPE_U8};
    static const ddl_redop_t ops[] = {DDL_REDOP_SUM, DDL_REDOP_AVG, DDL_REDOP_MAX};
    blocks_t x = {comm, info, info->role == DDL_ROLE_OWNER, (size_t)info->owner_size, NULL, NULL, NULL, NULL, NULL, 0, 0};
    size_t largest = counts[sizeof(counts) / sizeof(counts[0]) - 1] * x.blocks * 8;
    if (x.owner && (cudaMalloc((void **)&x.dsend, largest) != cudaSuccess ||
                    cudaMalloc((void **)&x.drecv, largest) != cudaSuccess || !(x.hbuf = malloc(largest)) ||
                    !(x.hcheck = malloc(largest)) || cudaStreamCreate(&x.stream) != cudaSuccess)) {
        fprintf(stderr, "FAIL rank %d: no memory for the device reduce-scatter and allgather\n", info->rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    uint64_t seed = 7001;
    for (size_t ti = 0; ti < sizeof(types) / sizeof(types[0]); ti++)
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            if (quick && ti > 1 && counts[c] > 65537)
                continue;
            for (int inplace = 0; inplace < 2; inplace++, seed++) {
                ddl_redop_t op = ops[seed % (sizeof(ops) / sizeof(ops[0]))];
                ddl_watchdog_step("device reduce_scatter %s count %zu", ddl_dtype_name(types[ti]), counts[c]);
                int how = (int)(seed % CALL_KINDS);
                reduce_scatter_case(&x, types[ti], op, counts[c], inplace, how, seed);
                ddl_watchdog_step("device allgather %s count %zu", ddl_dtype_name(types[ti]), counts[c]);
                allgather_case(&x, types[ti], counts[c], inplace, (how + 1) % CALL_KINDS, seed);
            }
        }
    cudaFree(x.dsend);
    cudaFree(x.drecv);
    if (x.owner)
        cudaStreamDestroy(x.stream);
    free(x.hbuf);
    free(x.hcheck);
    *cases += x.cases;
    return x.failures;
}
