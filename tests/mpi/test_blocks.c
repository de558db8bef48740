/* SPDX-License-Identifier: Apache-2.0 */
/* Integration test: ddl_reduce_scatter and ddl_allgather across real MPI
 * ranks against an independent serial reference (refdata.h), for every type,
 * every op of the reduce-scatter, counts from 0 to a quarter million per
 * block, out of place and in place (NCCL's: this rank's block of the other
 * buffer), shared (ddl_malloc) and staged buffers.  Output buffers are
 * poisoned before every call; send buffers must come back untouched.  Then
 * the nonblocking forms queued behind an allreduce, and ranks that call
 * different collectives at the same point: DDL_ERR_MISMATCH on every rank,
 * and the next call still right.  The layout comes from DDL_LANES,
 * DDL_NODE_SIZE and DDL_HELPERS (collective mode: the helpers call too). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddl.h"
#include "refdata.h"
#include "testcomm.h"

#define LARGE_COUNT ((1u << 18) + 3)

typedef struct {
    ddl_comm_t *comm;
    ddl_comm_info_t info;
    int gpus; /* owners in the job: the blocks */
    char *shared_send, *shared_recv, *plain_send, *plain_recv, *expect;
    int failures, cases;
} ctx_t;

static void fail(ctx_t *x, const char *what, const char *coll, ddl_dtype_t t, ddl_redop_t op, size_t count,
                 buf_kind_t b, const char *detail)
{
    if (x->failures++ < 20)
        fprintf(stderr, "FAIL rank %d: %s: %s %s %s count %zu %s: %s\n", x->info.rank, what, coll, ddl_dtype_name(t),
                ddl_redop_name(op), count, buf_names[b], detail);
}

static int in_place(buf_kind_t b)
{
    return b == BUF_INPLACE_SHARED || b == BUF_INPLACE_STAGED;
}

/* The buffers of kind b: *send and *recv (in place, recv is NULL and the
 * caller places it in *send's buffer). */
static void buffers(ctx_t *x, buf_kind_t b, char **send, char **recv)
{
    switch (b) {
    case BUF_SHARED: *send = x->shared_send; *recv = x->shared_recv; break;
    case BUF_STAGED: *send = x->plain_send; *recv = x->plain_recv; break;
    case BUF_MIXED: *send = x->shared_send; *recv = x->plain_recv; break;
    case BUF_INPLACE_SHARED: *send = x->shared_recv; *recv = NULL; break;
    default: *send = x->plain_recv; *recv = NULL; break;
    }
}

/* Owner r's output block j element i is element j x count + i of the
 * reduction over the owners of inputs filled as contributors. */
static void reduce_scatter_case(ctx_t *x, ddl_dtype_t t, ddl_redop_t op, size_t count, buf_kind_t b, uint64_t seed)
{
    size_t es = ddl_dtype_size(t), total = count * (size_t)x->gpus;
    int owner = x->info.role == DDL_ROLE_OWNER, r = x->info.owner_rank;
    char *send = NULL, *recv = NULL;
    if (owner) {
        buffers(x, b, &send, &recv);
        ddl_ref_fill(send, total, t, op, r, seed);
        if (in_place(b))
            recv = send + (size_t)r * count * es;
        else
            ddl_ref_poison(recv, count * es);
    }
    uint64_t send_hash = owner && !in_place(b) ? ddl_ref_hash(send, total * es) : 0;
    x->cases++;
    if (ddl_reduce_scatter(send, recv, (int64_t)count, t, op, x->comm) != DDL_OK) {
        fail(x, "returned an error", "reduce_scatter", t, op, count, b, ddl_last_error());
        return;
    }
    if (!owner)
        return;
    if (!in_place(b) && ddl_ref_hash(send, total * es) != send_hash)
        fail(x, "the send buffer changed", "reduce_scatter", t, op, count, b, "");
    int wrong = 0;
    size_t first = 0;
    for (size_t i = 0; i < count; i++) {
        ddl_ref_t ref = ddl_ref_expected(t, op, x->gpus, (size_t)r * count + i, seed);
        if (!ddl_ref_matches(recv, i, t, &ref) && wrong++ == 0)
            first = i;
    }
    if (wrong) {
        char detail[160];
        ddl_ref_t ref = ddl_ref_expected(t, op, x->gpus, (size_t)r * count + first, seed);
        snprintf(detail, sizeof(detail), "%d wrong elements; element %zu is %g, expected %g", wrong, first,
                 ddl_ref_value(recv, first, t), ref.value);
        fail(x, "wrong result", "reduce_scatter", t, op, count, b, detail);
    }
}

/* Block j of every owner's output is owner j's input, bit for bit. */
static void allgather_case(ctx_t *x, ddl_dtype_t t, size_t count, buf_kind_t b, uint64_t seed)
{
    size_t es = ddl_dtype_size(t), total = count * (size_t)x->gpus;
    int owner = x->info.role == DDL_ROLE_OWNER, r = x->info.owner_rank;
    char *send = NULL, *recv = NULL;
    const void *passed = NULL;
    if (owner) {
        buffers(x, b, &send, &recv);
        if (in_place(b)) { /* the whole output poisoned but this rank's block */
            recv = send;
            send = recv + (size_t)r * count * es;
            ddl_ref_poison(recv, total * es);
        } else {
            ddl_ref_poison(recv, total * es);
        }
        ddl_ref_fill(send, count, t, DDL_REDOP_SUM, r, seed);
        /* In place both ways: DDL_IN_PLACE, and the block's own address. */
        passed = in_place(b) && seed % 2 ? DDL_IN_PLACE : send;
    }
    uint64_t send_hash = owner && !in_place(b) ? ddl_ref_hash(send, count * es) : 0;
    x->cases++;
    if (ddl_allgather(passed, recv, (int64_t)count, t, x->comm) != DDL_OK) {
        fail(x, "returned an error", "allgather", t, DDL_REDOP_SUM, count, b, ddl_last_error());
        return;
    }
    if (!owner)
        return;
    if (!in_place(b) && ddl_ref_hash(send, count * es) != send_hash)
        fail(x, "the send buffer changed", "allgather", t, DDL_REDOP_SUM, count, b, "");
    for (int j = 0; j < x->gpus; j++) {
        ddl_ref_fill(x->expect, count, t, DDL_REDOP_SUM, j, seed);
        if (memcmp(recv + (size_t)j * count * es, x->expect, count * es) != 0) {
            char detail[96];
            snprintf(detail, sizeof(detail), "block %d (owner %d's data) differs", j, j);
            fail(x, "wrong result", "allgather", t, DDL_REDOP_SUM, count, b, detail);
            return;
        }
    }
}

/* DDL_TEST_QUICK=1: four types, fewer counts and buffer kinds. */
static int skip(int quick, size_t count, int t, int b)
{
    if (count == LARGE_COUNT && b != BUF_SHARED && b != BUF_INPLACE_STAGED)
        return 1;
    if (!quick)
        return 0;
    if (t != DDL_DTYPE_F32 && t != DDL_DTYPE_BF16 && t != DDL_DTYPE_I32 && t != DDL_DTYPE_U8)
        return 1;
    return count == 2 || count == 1009 || (b != BUF_SHARED && b != BUF_INPLACE_STAGED);
}

static void run_matrix(ctx_t *x, int quick)
{
    int slices = x->info.gpus_per_node * x->info.lanes;
    /* Per block: 0, 1, fewer than the node's slices, a prime, and sizes
     * whose chunks and staging rounds (DDL_CHUNK_SIZE, DDL_STAGE_SIZE of the
     * runner) are many. */
    size_t counts[] = {0, 1, 2, (size_t)(slices > 1 ? slices - 1 : 1), 13, 1009, 65537, LARGE_COUNT};
    uint64_t seed = 1;
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
        for (int t = 0; t < DDL_DTYPE_COUNT; t++)
            for (int b = 0; b < BUF_KINDS; b++) {
                if (skip(quick, counts[c], t, b))
                    continue;
                for (int op = 0; op < DDL_REDOP_COUNT; op++)
                    reduce_scatter_case(x, (ddl_dtype_t)t, (ddl_redop_t)op, counts[c], (buf_kind_t)b, seed++);
                allgather_case(x, (ddl_dtype_t)t, counts[c], (buf_kind_t)b, seed++);
            }
}

/* Requests: an allreduce, a reduce-scatter and an allgather posted one
 * after the other, then waited for in reverse order. */
static void run_requests(ctx_t *x)
{
    size_t count = 4099, es = sizeof(float), total = count * (size_t)x->gpus;
    int owner = x->info.role == DDL_ROLE_OWNER, r = x->info.owner_rank;
    float *ar = NULL, *rs_in = NULL, *rs_out = NULL, *ag_in = NULL, *ag_out = NULL;
    if (owner) {
        ar = (float *)x->plain_send;
        rs_in = (float *)x->shared_send;
        rs_out = (float *)x->plain_recv;
        ag_out = (float *)x->shared_recv;
        ag_in = (float *)x->expect;
        ddl_ref_fill(ar, count, DDL_DTYPE_F32, DDL_REDOP_SUM, r, 7);
        ddl_ref_fill(rs_in, total, DDL_DTYPE_F32, DDL_REDOP_SUM, r, 8);
        ddl_ref_fill(ag_in, count, DDL_DTYPE_F32, DDL_REDOP_SUM, r, 9);
        ddl_ref_poison(rs_out, count * es);
        ddl_ref_poison(ag_out, total * es);
    }
    ddl_request_t *req[3] = {NULL, NULL, NULL};
    ddl_status_t st[3];
    st[0] = ddl_iallreduce(DDL_IN_PLACE, ar, (int64_t)count, DDL_DTYPE_F32, DDL_REDOP_SUM, x->comm, &req[0]);
    st[1] = ddl_ireduce_scatter(rs_in, rs_out, (int64_t)count, DDL_DTYPE_F32, DDL_REDOP_SUM, x->comm, &req[1]);
    st[2] = ddl_iallgather(ag_in, ag_out, (int64_t)count, DDL_DTYPE_F32, x->comm, &req[2]);
    for (int i = 2; i >= 0; i--) {
        x->cases++;
        if (st[i] == DDL_OK)
            st[i] = ddl_wait(req[i]);
        ddl_request_free(req[i]);
        if (st[i] != DDL_OK)
            fail(x, "request failed", i == 0 ? "iallreduce" : i == 1 ? "ireduce_scatter" : "iallgather",
                 DDL_DTYPE_F32, DDL_REDOP_SUM, count, BUF_SHARED, ddl_last_error());
    }
    if (!owner || st[0] != DDL_OK || st[1] != DDL_OK || st[2] != DDL_OK)
        return;
    for (size_t i = 0; i < count; i++) {
        ddl_ref_t a = ddl_ref_expected(DDL_DTYPE_F32, DDL_REDOP_SUM, x->gpus, i, 7);
        ddl_ref_t b = ddl_ref_expected(DDL_DTYPE_F32, DDL_REDOP_SUM, x->gpus, (size_t)r * count + i, 8);
        if (!ddl_ref_matches(ar, i, DDL_DTYPE_F32, &a) || !ddl_ref_matches(rs_out, i, DDL_DTYPE_F32, &b)) {
            fail(x, "wrong result", "requests", DDL_DTYPE_F32, DDL_REDOP_SUM, count, BUF_SHARED, "allreduce or "
                 "reduce-scatter");
            return;
        }
    }
    float *one = (float *)x->plain_send; /* the allreduce's result is checked: reuse it */
    for (int j = 0; j < x->gpus; j++) {
        ddl_ref_fill(one, count, DDL_DTYPE_F32, DDL_REDOP_SUM, j, 9);
        if (memcmp(ag_out + (size_t)j * count, one, count * es) != 0) {
            fail(x, "wrong result", "iallgather", DDL_DTYPE_F32, DDL_REDOP_SUM, count, BUF_SHARED, "a block differs");
            return;
        }
    }
}

/* The ranks of owner 0 call an allgather where every other rank calls a
 * reduce-scatter of the same count and type: every rank gets
 * DDL_ERR_MISMATCH, and the next reduce-scatter is right. */
static void run_mismatch(ctx_t *x)
{
    if (x->gpus < 2)
        return;
    size_t count = 70000;
    int owner = x->info.role == DDL_ROLE_OWNER, first = x->info.node == 0 && x->info.gpu == 0;
    char *send = owner ? x->shared_send : NULL, *recv = owner ? x->shared_recv : NULL;
    if (owner)
        ddl_ref_fill(send, count * (size_t)x->gpus, DDL_DTYPE_F32, DDL_REDOP_SUM, x->info.owner_rank, 11);
    ddl_status_t st = first ? ddl_allgather(send, recv, (int64_t)count, DDL_DTYPE_F32, x->comm)
                            : ddl_reduce_scatter(send, recv, (int64_t)count, DDL_DTYPE_F32, DDL_REDOP_SUM, x->comm);
    x->cases++;
    if (st != DDL_ERR_MISMATCH)
        fail(x, "different collectives did not fail as a mismatch", first ? "allgather" : "reduce_scatter",
             DDL_DTYPE_F32, DDL_REDOP_SUM, count, BUF_SHARED, st == DDL_OK ? "it returned DDL_OK" : ddl_last_error());
    else if (x->info.rank == 0)
        printf("mismatch, as expected: %s\n", ddl_last_error());
    reduce_scatter_case(x, DDL_DTYPE_F32, DDL_REDOP_SUM, count, BUF_SHARED, 12);
}

int main(int argc, char **argv)
{
    ctx_t x = {0};
    ddl_config_t cfg;
    x.comm = ddl_test_comm(&argc, &argv, &cfg, &x.info);
    x.gpus = x.info.nnodes * x.info.gpus_per_node;
    size_t max_bytes = (size_t)LARGE_COUNT * 8 * (size_t)x.gpus;
    if (x.info.role == DDL_ROLE_OWNER) {
        x.plain_send = malloc(max_bytes);
        x.plain_recv = malloc(max_bytes);
        x.expect = malloc(max_bytes);
        if (ddl_malloc(x.comm, max_bytes, (void **)&x.shared_send) != DDL_OK ||
            ddl_malloc(x.comm, max_bytes, (void **)&x.shared_recv) != DDL_OK || !x.plain_send || !x.plain_recv ||
            !x.expect) {
            fprintf(stderr, "buffers: %s\n", ddl_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (x.info.role == DDL_ROLE_HELPER && cfg.helper_mode == DDL_HELPERS_SERVE) {
        if (ddl_serve(x.comm) != DDL_OK) {
            fprintf(stderr, "FAIL rank %d: ddl_serve: %s\n", x.info.rank, ddl_last_error());
            x.failures++;
        }
    } else {
        const char *q = getenv("DDL_TEST_QUICK");
        run_matrix(&x, q && atoi(q) > 0);
        run_requests(&x);
        run_mismatch(&x);
    }
    int failures = x.failures, cases = x.cases;
    ddl_test_totals(x.comm, &x.info, &cases, &failures);
    if (x.info.role == DDL_ROLE_OWNER) {
        ddl_free(x.comm, x.shared_send);
        ddl_free(x.comm, x.shared_recv);
        free(x.plain_send);
        free(x.plain_recv);
        free(x.expect);
    }
    return ddl_test_finish(x.comm, &x.info, &cfg, cases, failures);
}
