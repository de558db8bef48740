/* SPDX-License-Identifier: Apache-2.0 */
/* Integration test of the nonblocking allreduce: batches of requests in flight
 * (types, ops, counts, shared and staged, in-place and out-of-place buffers
 * mixed), waited for in posting order, in reverse and by polling ddl_test;
 * other MPI traffic between the posts; blocking calls posted behind requests;
 * a request freed while in flight; a bad request among good ones; another
 * thread allocating and freeing with ddl_malloc/ddl_free while requests on
 * ddl_malloc buffers run.  Every
 * result is checked against the serial reference (refdata.h), bit-identical on
 * every owner, with output buffers poisoned first.  The layout comes from
 * DDL_LANES, DDL_NODE_SIZE and DDL_HELPERS; MPI's thread level from
 * DDL_TEST_MPI_THREAD. */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddl.h"
#include "refdata.h"
#include "testcomm.h"

#define BATCH 8
#define MAX_COUNT ((1u << 18) + 7)

typedef struct {
    ddl_dtype_t t;
    ddl_redop_t op;
    size_t count;
    int shared, inplace;
    uint64_t seed;
    void *send, *recv;
    ddl_request_t *req;
    uint64_t send_hash;
} item_t;

typedef struct {
    ddl_comm_t *comm;
    ddl_comm_info_t info;
    MPI_Comm other;   /* the application's own traffic */
    int calls_mpi;    /* ranks that call: every rank in collective mode, the owners in serve mode */
    void *shared[2 * BATCH], *plain[2 * BATCH];
    int failures, cases;
} ctx_t;

static void fail(ctx_t *x, const item_t *it, const char *what, const char *detail)
{
    if (x->failures++ < 20)
        fprintf(stderr, "FAIL rank %d: %s: %s %s count %zu %s %s: %s\n", x->info.rank, what, ddl_dtype_name(it->t),
                ddl_redop_name(it->op), it->count, it->shared ? "shared" : "staged",
                it->inplace ? "in-place" : "out-of-place", detail);
}

static void prepare(ctx_t *x, item_t *it, int slot)
{
    it->send = it->recv = NULL;
    if (x->info.role != DDL_ROLE_OWNER)
        return;
    void **pool = it->shared ? x->shared : x->plain;
    it->recv = pool[2 * slot + 1];
    size_t bytes = it->count * ddl_dtype_size(it->t);
    if (it->inplace) {
        ddl_ref_fill(it->recv, it->count, it->t, it->op, x->info.owner_rank, it->seed);
    } else {
        it->send = pool[2 * slot];
        ddl_ref_fill(it->send, it->count, it->t, it->op, x->info.owner_rank, it->seed);
        ddl_ref_poison(it->recv, bytes);
        it->send_hash = ddl_ref_hash(it->send, bytes);
    }
}

static void verify(ctx_t *x, const item_t *it, ddl_status_t st)
{
    x->cases++;
    if (st != DDL_OK) {
        fail(x, it, "the request failed", ddl_last_error());
        return;
    }
    if (x->info.role != DDL_ROLE_OWNER)
        return;
    size_t bytes = it->count * ddl_dtype_size(it->t);
    if (it->send && ddl_ref_hash(it->send, bytes) != it->send_hash)
        fail(x, it, "the send buffer changed", "");
    int n = x->info.owner_size, wrong = 0;
    size_t first = 0;
    for (size_t i = 0; i < it->count; i++) {
        ddl_ref_t ref = ddl_ref_expected(it->t, it->op, n, i, it->seed);
        if (!ddl_ref_matches(it->recv, i, it->t, &ref) && wrong++ == 0)
            first = i;
    }
    if (wrong) {
        char detail[160];
        ddl_ref_t ref = ddl_ref_expected(it->t, it->op, n, first, it->seed);
        snprintf(detail, sizeof(detail), "%d wrong elements; element %zu is %g, expected %g", wrong, first,
                 ddl_ref_value(it->recv, first, it->t), ref.value);
        fail(x, it, "wrong result", detail);
    }
    uint64_t h = ddl_ref_hash(it->recv, bytes), lo, hi;
    MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, ddl_comm_owners(x->comm));
    MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, ddl_comm_owners(x->comm));
    if (lo != hi)
        fail(x, it, "results differ between owners", "not bit-identical");
}

static ddl_status_t post(ctx_t *x, item_t *it)
{
    return ddl_iallreduce(it->send ? it->send : DDL_IN_PLACE, it->recv, (int64_t)it->count, it->t, it->op, x->comm,
                          &it->req);
}

/* The application's own MPI traffic while requests are in flight. */
static void other_traffic(ctx_t *x, int round)
{
    long mine = round + 1, sum = 0, size;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, x->other);
    int n;
    MPI_Comm_size(x->other, &n);
    size = n;
    if (sum != (round + 1) * size && x->failures++ < 20)
        fprintf(stderr, "FAIL rank %d: the application's MPI_Allreduce gave %ld, expected %ld\n", x->info.rank, sum,
                (round + 1) * size);
}

typedef enum { WAIT_IN_ORDER, WAIT_REVERSED, WAIT_POLLING, WAIT_KINDS } wait_kind_t;

static void wait_all(ctx_t *x, item_t *items, int n, wait_kind_t how)
{
    ddl_status_t st[BATCH];
    if (how == WAIT_POLLING) {
        int left = n, done[BATCH] = {0};
        double end = MPI_Wtime() + 300;
        while (left > 0 && MPI_Wtime() < end) {
            for (int i = 0; i < n; i++) {
                int d = 0;
                if (done[i])
                    continue;
                ddl_status_t s = ddl_test(items[i].req, &d);
                if (d) {
                    st[i] = s;
                    done[i] = 1;
                    left--;
                }
            }
        }
        /* Checked in posting order on every rank (the check compares owners
         * with MPI); ddl_wait on a done request gives its message again. */
        for (int i = 0; i < n; i++) {
            if (!done[i])
                fail(x, &items[i], "the request never completed under ddl_test", "");
            else
                verify(x, &items[i], st[i] == DDL_OK ? st[i] : ddl_wait(items[i].req));
        }
        for (int i = 0; i < n; i++)
            ddl_request_free(items[i].req);
        return;
    }
    for (int k = 0; k < n; k++) {
        int i = how == WAIT_REVERSED ? n - 1 - k : k;
        st[i] = ddl_wait(items[i].req);
        verify(x, &items[i], st[i]);
    }
    for (int i = 0; i < n; i++)
        ddl_request_free(items[i].req);
}

static const ddl_dtype_t types[] = {DDL_DTYPE_F32, DDL_DTYPE_F64, DDL_DTYPE_BF16, DDL_DTYPE_I32, DDL_DTYPE_U8,
                                    DDL_DTYPE_I64};

static void batches(ctx_t *x)
{
    int slices = x->info.gpus_per_node * x->info.lanes;
    size_t counts[] = {0, 1, (size_t)(slices > 1 ? slices - 1 : 1), 13, 1009, 65537, MAX_COUNT};
    uint64_t seed = 1;
    int ntypes = (int)(sizeof(types) / sizeof(types[0])), ncounts = (int)(sizeof(counts) / sizeof(counts[0]));
    for (int round = 0; round < 3 * WAIT_KINDS; round++) {
        item_t items[BATCH];
        for (int i = 0; i < BATCH; i++) {
            int k = round * BATCH + i;
            items[i] = (item_t){types[k % ntypes], (ddl_redop_t)(k % DDL_REDOP_COUNT), counts[(k * 3 + round) % ncounts],
                                (k / 2) % 2, k % 3 == 0, seed++, NULL, NULL, NULL, 0};
            prepare(x, &items[i], i);
            ddl_status_t st = post(x, &items[i]);
            if (st != DDL_OK) {
                fail(x, &items[i], "ddl_iallreduce refused a good call", ddl_last_error());
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            if (i % 3 == 1)
                other_traffic(x, k);
        }
        wait_all(x, items, BATCH, (wait_kind_t)(round % WAIT_KINDS));
    }
}

/* A blocking call posted behind requests in flight runs after them, and a
 * request freed while in flight still completes (in order, before the blocking call). */
static void blocking_behind_and_freed(ctx_t *x)
{
    item_t a = {DDL_DTYPE_F32, DDL_REDOP_SUM, MAX_COUNT, 1, 0, 901, NULL, NULL, NULL, 0};
    item_t b = {DDL_DTYPE_I32, DDL_REDOP_MAX, 65537, 0, 0, 902, NULL, NULL, NULL, 0};
    item_t c = {DDL_DTYPE_F64, DDL_REDOP_AVG, 1009, 0, 1, 903, NULL, NULL, NULL, 0};
    prepare(x, &a, 0);
    prepare(x, &b, 1);
    prepare(x, &c, 2);
    if (post(x, &a) != DDL_OK || post(x, &b) != DDL_OK) {
        fail(x, &a, "ddl_iallreduce refused a good call", ddl_last_error());
        return;
    }
    ddl_request_free(b.req); /* still in flight: the engine frees it when done */
    ddl_status_t st = ddl_allreduce(c.send ? c.send : DDL_IN_PLACE, c.recv, (int64_t)c.count, c.t, c.op, x->comm);
    /* In posting order: a and b are done when the blocking call returns. */
    int done = 0;
    ddl_status_t sa = ddl_test(a.req, &done);
    if (!done)
        fail(x, &a, "a request posted before a blocking call was not done after it", "");
    else
        verify(x, &a, sa);
    ddl_request_free(a.req);
    verify(x, &b, DDL_OK);
    verify(x, &c, st);
}

/* A request with bad arguments is refused when posted; the requests around it go through. */
static void bad_among_good(ctx_t *x)
{
    item_t a = {DDL_DTYPE_U8, DDL_REDOP_MIN, 13, 0, 0, 911, NULL, NULL, NULL, 0};
    prepare(x, &a, 0);
    ddl_request_t *bad = (ddl_request_t *)1;
    ddl_status_t st = ddl_iallreduce(DDL_IN_PLACE, NULL, -5, DDL_DTYPE_F32, DDL_REDOP_SUM, x->comm, &bad);
    x->cases++;
    if (st != DDL_ERR_INVALID_ARG || bad != NULL || !strstr(ddl_last_error(), "negative"))
        fail(x, &a, "a negative count was not refused at posting", ddl_last_error());
    if (post(x, &a) != DDL_OK)
        fail(x, &a, "ddl_iallreduce refused a good call", ddl_last_error());
    else
        verify(x, &a, ddl_wait(a.req));
    ddl_request_free(a.req);
    x->cases++;
    if (ddl_iallreduce(DDL_IN_PLACE, a.recv, 1, DDL_DTYPE_F32, DDL_REDOP_SUM, x->comm, NULL) != DDL_ERR_INVALID_ARG)
        fail(x, &a, "a NULL request pointer was not refused", "");
}

/* Another application thread allocates and frees small blocks from the
 * communicator's heap (owners) or private list (helpers) until told to stop,
 * as a data loader might, with a pause between blocks (spinning, 8 such
 * threads on this host's 2 cores would starve the ranks). */
struct churn {
    ddl_comm_t *comm;
    atomic_int stop;
    int errors;
    char error[256];
};

static void *churn_heap(void *arg)
{
    struct churn *ch = arg;
    void *live[16] = {0};
    for (unsigned k = 0; !atomic_load(&ch->stop); k++) {
        unsigned i = (k * 7) % 16;
        if (live[i] && ddl_free(ch->comm, live[i]) != DDL_OK && ch->errors++ == 0)
            snprintf(ch->error, sizeof(ch->error), "ddl_free: %s", ddl_last_error());
        live[i] = NULL;
        if (ddl_malloc(ch->comm, 512 + 4096 * (k % 3), &live[i]) != DDL_OK && ch->errors++ == 0)
            snprintf(ch->error, sizeof(ch->error), "ddl_malloc: %s", ddl_last_error());
        struct timespec pause = {0, 20000};
        nanosleep(&pause, NULL);
    }
    for (int i = 0; i < 16; i++)
        ddl_free(ch->comm, live[i]);
    return NULL;
}

/* Requests on ddl_malloc buffers in flight while the heap changes under
 * them: each must go through (their room is looked up while the other thread
 * moves the heap's bookkeeping). */
static void heap_churn(ctx_t *x)
{
    /* The churn's blocks go below every request's buffer (first fit, into
     * the hole of the first one), so each of them moves the bookkeeping of the
     * requests' allocations. */
    if (x->info.role == DDL_ROLE_OWNER) {
        ddl_free(x->comm, x->shared[0]);
        x->shared[0] = NULL;
    }
    struct churn ch = {.comm = x->comm};
    pthread_t thread;
    if (pthread_create(&thread, NULL, churn_heap, &ch) != 0) {
        fprintf(stderr, "FAIL rank %d: cannot start the allocating thread\n", x->info.rank);
        x->failures++;
        return;
    }
    static const size_t counts[] = {64, 2048, 70000};
    int rounds = getenv("DDL_TEST_QUICK") && atoi(getenv("DDL_TEST_QUICK")) > 0 ? 20 : 100;
    for (int round = 0; round < rounds; round++) {
        item_t items[6];
        for (int i = 0; i < 6; i++) {
            items[i] = (item_t){DDL_DTYPE_F32, DDL_REDOP_SUM, counts[i % 3], 1, i % 2, 1000u + (unsigned)(round * 6 + i),
                                NULL, NULL, NULL, 0};
            prepare(x, &items[i], i + 1);
            if (post(x, &items[i]) != DDL_OK) {
                fail(x, &items[i], "ddl_iallreduce refused a good call", ddl_last_error());
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
        }
        wait_all(x, items, 6, (wait_kind_t)(round % WAIT_KINDS));
    }
    atomic_store(&ch.stop, 1);
    pthread_join(thread, NULL);
    if (ch.errors) {
        fprintf(stderr, "FAIL rank %d: the allocating thread failed %d times: %s\n", x->info.rank, ch.errors, ch.error);
        x->failures++;
    }
}

int main(int argc, char **argv)
{
    ctx_t x = {0};
    ddl_config_t cfg;
    x.comm = ddl_test_comm(&argc, &argv, &cfg, &x.info);
    int serve_helper = x.info.role == DDL_ROLE_HELPER && cfg.helper_mode == DDL_HELPERS_SERVE;
    /* Serve-mode helpers may be ddl-helper, which joins no collective of ours. */
    x.other = MPI_COMM_NULL;
    if (cfg.helper_mode == DDL_HELPERS_SERVE && x.info.role == DDL_ROLE_OWNER)
        MPI_Comm_dup(ddl_comm_owners(x.comm), &x.other);
    else if (cfg.helper_mode == DDL_HELPERS_COLLECTIVE)
        MPI_Comm_dup(MPI_COMM_WORLD, &x.other);
    size_t max_bytes = (size_t)MAX_COUNT * 8;
    if (x.info.role == DDL_ROLE_OWNER) {
        for (int i = 0; i < 2 * BATCH; i++) {
            x.plain[i] = malloc(max_bytes);
            if (!x.plain[i] || ddl_malloc(x.comm, max_bytes, &x.shared[i]) != DDL_OK) {
                fprintf(stderr, "buffers: %s\n", ddl_last_error());
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    }
    if (serve_helper) {
        if (ddl_serve(x.comm) != DDL_OK) {
            fprintf(stderr, "FAIL rank %d: ddl_serve: %s\n", x.info.rank, ddl_last_error());
            x.failures++;
        }
    } else {
        batches(&x);
        blocking_behind_and_freed(&x);
        bad_among_good(&x);
        heap_churn(&x);
    }
    int failures = x.failures, cases = x.cases;
    ddl_test_totals(x.comm, &x.info, &cases, &failures);
    if (x.info.role == DDL_ROLE_OWNER) {
        for (int i = 0; i < 2 * BATCH; i++) {
            ddl_free(x.comm, x.shared[i]);
            free(x.plain[i]);
        }
    }
    if (x.other != MPI_COMM_NULL)
        MPI_Comm_free(&x.other);
    return ddl_test_finish(x.comm, &x.info, &cfg, cases, failures);
}
