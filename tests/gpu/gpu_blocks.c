/* SPDX-License-Identifier: Apache-2.0 */
/* ddl_reduce_scatter and ddl_allgather on device buffers, against the
 * independent serial reference of tests/common/refdata.c: counts on the MPI
 * path (0, 1, 13) and on the lanes (65537 and more, with several staging
 * rounds where DDL_STAGE_SIZE is small), out of place and in place (NCCL's,
 * and DDL_IN_PLACE for the allgather).  Outputs are poisoned on the device
 * first and inputs must come back untouched. */
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
    int failures, cases;
} blocks_t;

static int copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    return bytes == 0 || cudaMemcpy(dst, src, bytes, kind) == cudaSuccess;
}

static void fail(blocks_t *x, const char *coll, ddl_dtype_t t, ddl_redop_t op, size_t count, int inplace,
                 const char *detail)
{
    if (x->failures++ < 20)
        fprintf(stderr, "FAIL rank %d: %s on device buffers: %s %s count %zu %s: %s\n", x->info->rank, coll,
                ddl_dtype_name(t), ddl_redop_name(op), count, inplace ? "in-place" : "out-of-place", detail);
}

/* Owner r's output is block r of the reduction of every owner's input. */
static void reduce_scatter_case(blocks_t *x, ddl_dtype_t t, ddl_redop_t op, size_t count, int inplace, uint64_t seed)
{
    size_t es = ddl_dtype_size(t), total = count * x->blocks, r = (size_t)x->info->owner_rank;
    char *send = NULL, *recv = NULL;
    x->cases++;
    if (x->owner) {
        send = inplace ? x->drecv : x->dsend;
        recv = inplace ? send + r * count * es : x->drecv;
        ddl_ref_fill(x->hbuf, total, t, op, (int)r, seed);
        ddl_ref_poison(x->hcheck, count * es);
        if (!copy(send, x->hbuf, total * es, cudaMemcpyHostToDevice) ||
            (!inplace && !copy(recv, x->hcheck, count * es, cudaMemcpyHostToDevice))) {
            fail(x, "reduce_scatter", t, op, count, inplace, "filling the buffers failed");
            return;
        }
    }
    if (ddl_reduce_scatter(send, recv, (int64_t)count, t, op, x->comm) != DDL_OK) {
        fail(x, "reduce_scatter", t, op, count, inplace, ddl_last_error());
        return;
    }
    if (!x->owner)
        return;
    if (!copy(x->hcheck, recv, count * es, cudaMemcpyDeviceToHost)) {
        fail(x, "reduce_scatter", t, op, count, inplace, "reading the result failed");
        return;
    }
    for (size_t i = 0; i < count; i++) {
        ddl_ref_t ref = ddl_ref_expected(t, op, (int)x->blocks, r * count + i, seed);
        if (!ddl_ref_matches(x->hcheck, i, t, &ref)) {
            char detail[128];
            snprintf(detail, sizeof(detail), "element %zu is %g, expected %g", i, ddl_ref_value(x->hcheck, i, t),
                     ref.value);
            fail(x, "reduce_scatter", t, op, count, inplace, detail);
            return;
        }
    }
    if (!inplace && (!copy(x->hcheck, send, total * es, cudaMemcpyDeviceToHost) ||
                     memcmp(x->hcheck, x->hbuf, total * es) != 0))
        fail(x, "reduce_scatter", t, op, count, inplace, "the send buffer changed");
}

/* Block j of every owner's output is owner j's input, bit for bit. */
static void allgather_case(blocks_t *x, ddl_dtype_t t, size_t count, int inplace, uint64_t seed)
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
        if (!copy(recv, x->hcheck, total * es, cudaMemcpyHostToDevice) ||
            !copy(mine, x->hbuf, count * es, cudaMemcpyHostToDevice)) {
            fail(x, "allgather", t, DDL_REDOP_SUM, count, inplace, "filling the buffers failed");
            return;
        }
    }
    if (ddl_allgather(send, recv, (int64_t)count, t, x->comm) != DDL_OK) {
        fail(x, "allgather", t, DDL_REDOP_SUM, count, inplace, ddl_last_error());
        return;
    }
    if (!x->owner)
        return;
    if (!copy(x->hcheck, recv, total * es, cudaMemcpyDeviceToHost)) {
        fail(x, "allgather", t, DDL_REDOP_SUM, count, inplace, "reading the result failed");
        return;
    }
    for (size_t j = 0; j < x->blocks; j++) {
        ddl_ref_fill(x->hbuf, count, t, DDL_REDOP_SUM, (int)j, seed);
        if (memcmp(x->hcheck + j * count * es, x->hbuf, count * es) != 0) {
            char detail[96];
            snprintf(detail, sizeof(detail), "block %zu (owner %zu's data) differs", j, j);
            fail(x, "allgather", t, DDL_REDOP_SUM, count, inplace, detail);
            return;
        }
    }
}

int ddl_test_gpu_blocks(ddl_comm_t *comm, const ddl_comm_info_t *info, int quick, int *cases)
{
    static const size_t counts[] = {0, 1, 13, 65537, (1u << 18) + 3};
    static const ddl_dtype_t types[] = {DDL_DTYPE_F32, DDL_DTYPE_BF16, DDL_DTYPE_I64, DDL_DTYPE_U8};
    static const ddl_redop_t ops[] = {DDL_REDOP_SUM, DDL_REDOP_AVG, DDL_REDOP_MAX};
    blocks_t x = {comm, info, info->role == DDL_ROLE_OWNER, (size_t)info->owner_size, NULL, NULL, NULL, NULL, 0, 0};
    size_t largest = counts[sizeof(counts) / sizeof(counts[0]) - 1] * x.blocks * 8;
    if (x.owner && (cudaMalloc((void **)&x.dsend, largest) != cudaSuccess ||
                    cudaMalloc((void **)&x.drecv, largest) != cudaSuccess || !(x.hbuf = malloc(largest)) ||
                    !(x.hcheck = malloc(largest)))) {
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
                reduce_scatter_case(&x, types[ti], op, counts[c], inplace, seed);
                ddl_watchdog_step("device allgather %s count %zu", ddl_dtype_name(types[ti]), counts[c]);
                allgather_case(&x, types[ti], counts[c], inplace, seed);
            }
        }
    cudaFree(x.dsend);
    cudaFree(x.drecv);
    free(x.hbuf);
    free(x.hcheck);
    *cases += x.cases;
    return x.failures;
}
