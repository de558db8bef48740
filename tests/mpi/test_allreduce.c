/* SPDX-License-Identifier: Apache-2.0 */
/* Integration test: ddl_allreduce across real MPI ranks against an independent
 * serial reference, for every type and op, counts from 0 to over a million,
 * in-place and out-of-place, shared (ddl_malloc) and staged buffers.  Output
 * buffers are poisoned before every call; results must be bit-identical on all
 * owners and the send buffer untouched.  The layout comes from DDL_LANES,
 * DDL_NODE_SIZE and DDL_HELPERS. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddl.h"
#include "refdata.h"
#include "testcomm.h"

#define LARGE_COUNT ((1u << 20) + 3)

typedef struct {
    ddl_comm_t *comm;
    ddl_comm_info_t info;
    void *shared_send, *shared_recv, *plain_send, *plain_recv;
    int failures, cases;
} ctx_t;

static void fail(ctx_t *x, const char *what, ddl_dtype_t t, ddl_redop_t op, size_t count, buf_kind_t b,
                 const char *detail)
{
    if (x->failures++ < 20)
        fprintf(stderr, "FAIL rank %d: %s: %s %s count %zu %s: %s\n", x->info.rank, what, ddl_dtype_name(t),
                ddl_redop_name(op), count, buf_names[b], detail);
}

static void run_case(ctx_t *x, ddl_dtype_t t, ddl_redop_t op, size_t count, buf_kind_t b, uint64_t seed)
{
    size_t bytes = count * ddl_dtype_size(t);
    int owner = x->info.role == DDL_ROLE_OWNER;
    void *send = NULL, *recv = NULL;
    if (owner) {
        switch (b) {
        case BUF_SHARED: send = x->shared_send; recv = x->shared_recv; break;
        case BUF_STAGED: send = x->plain_send; recv = x->plain_recv; break;
        case BUF_MIXED: send = x->shared_send; recv = x->plain_recv; break;
        case BUF_INPLACE_SHARED: recv = x->shared_recv; break;
        default: recv = x->plain_recv; break;
        }
        int inplace = (b == BUF_INPLACE_SHARED || b == BUF_INPLACE_STAGED);
        if (inplace) {
            ddl_ref_fill(recv, count, t, op, x->info.owner_rank, seed);
        } else {
            ddl_ref_fill(send, count, t, op, x->info.owner_rank, seed);
            ddl_ref_poison(recv, bytes);
        }
    }
    uint64_t send_hash = send ? ddl_ref_hash(send, bytes) : 0;
    x->cases++;
    ddl_status_t st = ddl_allreduce(send ? send : DDL_IN_PLACE, recv, (int64_t)count, t, op, x->comm);
    if (st != DDL_OK) {
        fail(x, "ddl_allreduce returned an error", t, op, count, b, ddl_last_error());
        return;
    }
    if (!owner)
        return;
    if (send && ddl_ref_hash(send, bytes) != send_hash)
        fail(x, "the send buffer changed", t, op, count, b, "");
    int n = x->info.owner_size, wrong = 0;
    size_t first_wrong = 0;
    for (size_t i = (size_t)x->info.owner_rank; i < count; i += (size_t)n) {
        ddl_ref_t ref = ddl_ref_expected(t, op, n, i, seed);
        if (!ddl_ref_matches(recv, i, t, &ref) && wrong++ == 0)
            first_wrong = i;
    }
    if (wrong) {
        char detail[160];
        ddl_ref_t ref = ddl_ref_expected(t, op, n, first_wrong, seed);
        snprintf(detail, sizeof(detail), "%d wrong elements; element %zu is %g, expected %g (bits %llx)", wrong,
                 first_wrong, ddl_ref_value(recv, first_wrong, t), ref.value, (unsigned long long)ref.bits);
        fail(x, "wrong result", t, op, count, b, detail);
    }
    uint64_t h = ddl_ref_hash(recv, bytes), lo, hi;
    MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, ddl_comm_owners(x->comm));
    MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, ddl_comm_owners(x->comm));
    if (lo != hi)
        fail(x, "results differ between owners", t, op, count, b, "not bit-identical");
}

/* DDL_TEST_QUICK=1 (the Slurm integration tests, where ranks talk over TCP):
 * every op, fewer types, counts and buffer kinds. */
static int quick_skip(int quick, size_t count, int t, int b)
{
    if (!quick)
        return 0;
    if (t != DDL_DTYPE_F32 && t != DDL_DTYPE_BF16 && t != DDL_DTYPE_I32 && t != DDL_DTYPE_U8)
        return 1;
    if (count == 2 || count == 1009 || count == LARGE_COUNT)
        return 1;
    return b != BUF_SHARED && b != BUF_INPLACE_STAGED;
}

static void run_all(ctx_t *x)
{
    int slices = x->info.gpus_per_node * x->info.lanes;
    /* 64: 256 bytes of 4-byte types, whose message between ranks of one host
     * sends the signature apart from the data (core/signature.c).  4099:
     * 8-32 KiB of the wider types, the halves' last round whole between
     * hosts (mpi/halves). */
    size_t counts[] = {0, 1, 2, (size_t)(slices > 1 ? slices - 1 : 1), 13, 64, 1009, 4099, 65537, LARGE_COUNT};
    const char *q = getenv("DDL_TEST_QUICK");
    int quick = q && atoi(q) > 0;
    uint64_t seed = 1;
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        for (int t = 0; t < DDL_DTYPE_COUNT; t++) {
            for (int op = 0; op < DDL_REDOP_COUNT; op++) {
                for (int b = 0; b < BUF_KINDS; b++) {
                    /* The largest count: one shared and one staged layout keep the run short. */
                    if ((counts[c] == LARGE_COUNT && b != BUF_SHARED && b != BUF_INPLACE_STAGED) ||
                        quick_skip(quick, counts[c], t, b))
                        continue;
                    run_case(x, (ddl_dtype_t)t, (ddl_redop_t)op, counts[c], (buf_kind_t)b, seed++);
                }
            }
        }
    }
}

int main(int argc, char **argv)
{
    ctx_t x = {0};
    ddl_config_t cfg;
    ddl_status_t st;
    x.comm = ddl_test_comm(&argc, &argv, &cfg, &x.info);
    size_t max_bytes = (size_t)LARGE_COUNT * 8;
    if (x.info.role == DDL_ROLE_OWNER) {
        x.plain_send = malloc(max_bytes);
        x.plain_recv = malloc(max_bytes);
        if (ddl_malloc(x.comm, max_bytes, &x.shared_send) != DDL_OK ||
            ddl_malloc(x.comm, max_bytes, &x.shared_recv) != DDL_OK || !x.plain_send || !x.plain_recv) {
            fprintf(stderr, "buffers: %s\n", ddl_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (x.info.role == DDL_ROLE_HELPER && cfg.helper_mode == DDL_HELPERS_SERVE) {
        st = ddl_serve(x.comm);
        if (st != DDL_OK) {
            fprintf(stderr, "FAIL rank %d: ddl_serve: %s\n", x.info.rank, ddl_last_error());
            x.failures++;
        }
    } else {
        run_all(&x);
    }
    int failures = x.failures, cases = x.cases;
    ddl_test_totals(x.comm, &x.info, &cases, &failures);
    if (x.info.role == DDL_ROLE_OWNER) {
        ddl_free(x.comm, x.shared_send);
        ddl_free(x.comm, x.shared_recv);
        free(x.plain_send);
        free(x.plain_recv);
    }
    return ddl_test_finish(x.comm, &x.info, &cfg, cases, failures);
}
