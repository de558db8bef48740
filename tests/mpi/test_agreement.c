/* SPDX-License-Identifier: Apache-2.0 */
/* Never a silent wrong result, whatever one rank does wrong: the scenarios of
 * the fourth correctness round, each checked exactly (int32 sums, every
 * element of every successful owner's result).  DDL_TEST_SCENARIO picks one:
 *
 *   refused  one rank refuses its own arguments to a call (every refusal
 *            path: negative count, unknown type, op or memory kind, a NULL
 *            buffer, too many bytes, a ddl_malloc buffer too short, no
 *            request handle), blocking and nonblocking: that call fails on
 *            every rank whose result would depend on it, nothing is written,
 *            and the calls after it are right on every rank.
 *   helper   collective mode: a helper passes another count in one call of
 *            30 (online selection on): it alone fails that call, and every
 *            later call succeeds on every rank, right.
 *   skip     an owner skips one call of 16, its helper makes them all: every
 *            call of every rank returns within DDL_TIMEOUT and its grace,
 *            and the ranks that time out name the owner that did not come.
 *   layout   DDL_LANES (or DDL_NODE_SIZE, DDL_GPUS_PER_NODE, DDL_HELPERS:
 *            DDL_TEST_SETTING) differs between ranks: ddl_comm_create fails
 *            on every rank with a message that names the setting, this
 *            rank's value and a rank with another one. */
#include "config.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddl.h"
#include "testcomm.h"

#define POISON 0x5a

static int failures, cases;
static ddl_comm_info_t info;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        cases++;                                                                                   \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL rank %d (%s:%d): ", info.rank, __FILE__, __LINE__);              \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static int env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

/* Owner o's element i in call k; the sum over the owners is exact in int32. */
static int32_t value(int k, int o, int64_t i)
{
    return (int32_t)((k * 131 + o * 7 + i) % 1000);
}

static void fill(int32_t *send, int64_t n, int k)
{
    for (int64_t i = 0; i < n; i++)
        send[i] = value(k, info.owner_rank, i);
}

/* 1 when every element of recv is call k's sum over the owners. */
static int right(const int32_t *recv, int64_t n, int k, int64_t *bad)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t want = 0;
        for (int o = 0; o < info.owner_size; o++)
            want += value(k, o, i);
        if (recv[i] != (int32_t)want) {
            *bad = i;
            return 0;
        }
    }
    return 1;
}

static int untouched(const void *p, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        if (((const unsigned char *)p)[i] != POISON)
            return 0;
    return 1;
}

/* A call's result on this rank: a success must carry call k's sums (owners;
 * a helper's buffers are not written in collective mode), a failure must
 * leave the receive buffer as it was. */
static void check_outcome(const char *what, int k, ddl_status_t st, const int32_t *recv, int64_t n)
{
    if (info.role != DDL_ROLE_OWNER)
        return;
    int64_t bad = -1;
    if (st == DDL_OK)
        CHECK(right(recv, n, k, &bad), "%s: call %d succeeded with a wrong result: element %lld is %d", what, k,
              (long long)bad, bad >= 0 ? recv[bad] : 0);
    else
        CHECK(untouched(recv, sizeof(int32_t) * (size_t)n), "%s: call %d failed (%s) but wrote the receive buffer",
              what, k, ddl_last_error());
}

/* One call, blocking or posted and waited for; every rank but `odd` passes
 * (send, recv, n); `odd` makes the call `refuse` describes instead. */
typedef struct {
    const char *name;   /* the refusal */
    const char *text;   /* in the refusing rank's message */
    int owners_only;    /* a helper's buffers are not checked: only an owner refuses this */
} refusal_t;

static const refusal_t refusals[] = {
    {"negative count", "is negative", 0},
    {"unknown type", "unknown datatype 42", 0},
    {"unknown op", "unknown reduction op -3", 0},
    {"NULL recvbuf", "recvbuf is NULL", 1},
    {"NULL sendbuf", "sendbuf is NULL", 1},
    {"too many bytes", "more bytes than a buffer can hold", 0},
    {"unknown memory kind", "unknown memory kind 9", 0},
    {"ddl_malloc buffer too short", "holds 4 bytes", 1},
    {"no request handle", "req is NULL", 0},
};
enum { NREFUSALS = sizeof(refusals) / sizeof(refusals[0]) };

static ddl_status_t call(ddl_comm_t *comm, int nonblocking, const int32_t *send, int32_t *recv, int64_t n,
                         ddl_dtype_t dtype, ddl_redop_t op, ddl_memory_t mem, int no_request)
{
    if (!nonblocking)
        return ddl_allreduce_stream(send, recv, n, dtype, op, mem, NULL, comm);
    ddl_request_t *req = NULL;
    ddl_status_t st = ddl_iallreduce_stream(send, recv, n, dtype, op, mem, NULL, comm, no_request ? NULL : &req);
    if (st != DDL_OK)
        return st;
    st = ddl_wait(req);
    ddl_request_free(req);
    return st;
}

static ddl_status_t refused_call(ddl_comm_t *comm, int r, int nonblocking, int32_t *send, int32_t *recv,
                                 int32_t *tiny, int64_t n)
{
    switch (r) {
    case 0: return call(comm, nonblocking, send, recv, -1, DDL_DTYPE_I32, DDL_REDOP_SUM, DDL_MEM_AUTO, 0);
    case 1: return call(comm, nonblocking, send, recv, n, (ddl_dtype_t)42, DDL_REDOP_SUM, DDL_MEM_AUTO, 0);
    case 2: return call(comm, nonblocking, send, recv, n, DDL_DTYPE_I32, (ddl_redop_t)-3, DDL_MEM_AUTO, 0);
    case 3: return call(comm, nonblocking, send, NULL, n, DDL_DTYPE_I32, DDL_REDOP_SUM, DDL_MEM_AUTO, 0);
    case 4: return call(comm, nonblocking, NULL, recv, n, DDL_DTYPE_I32, DDL_REDOP_SUM, DDL_MEM_AUTO, 0);
    case 5: return call(comm, nonblocking, send, recv, (int64_t)1 << 62, DDL_DTYPE_I32, DDL_REDOP_SUM, DDL_MEM_AUTO, 0);
    case 6: return call(comm, nonblocking, send, recv, n, DDL_DTYPE_I32, DDL_REDOP_SUM, (ddl_memory_t)9, 0);
    case 7: return call(comm, nonblocking, tiny, tiny, n, DDL_DTYPE_I32, DDL_REDOP_SUM, DDL_MEM_AUTO, 0);
    default: return nonblocking ? call(comm, 1, send, recv, n, DDL_DTYPE_I32, DDL_REDOP_SUM, DDL_MEM_AUTO, 1)
                                : call(comm, 0, send, recv, -1, DDL_DTYPE_I32, DDL_REDOP_SUM, DDL_MEM_AUTO, 0);
    }
}

/* Refusal r by rank `odd` in the second of four calls of n elements. */
static void refused(ddl_comm_t *comm, int r, int odd, int nonblocking, int64_t n, int32_t *send, int32_t *recv,
                    int32_t *tiny)
{
    const refusal_t *f = &refusals[r];
    char what[160];
    snprintf(what, sizeof(what), "%s by rank %d, %s, %lld elements", f->name, odd,
             nonblocking ? "nonblocking" : "blocking", (long long)n);
    int odd_is_owner = odd % info.lanes == 0; /* local rank t is lane t % lanes; nodes hold whole GPUs */
    for (int k = 0; k < 4; k++) {
        fill(send, n, k);
        memset(recv, POISON, sizeof(int32_t) * (size_t)n);
        ddl_status_t st;
        if (k == 1 && info.rank == odd)
            st = refused_call(comm, r, nonblocking, send, recv, tiny, n);
        else
            st = call(comm, nonblocking, send, recv, n, DDL_DTYPE_I32, DDL_REDOP_SUM, DDL_MEM_AUTO, 0);
        if (k == 1 && info.rank == odd) {
            const char *text = r == NREFUSALS - 1 && !nonblocking ? "is negative" : f->text;
            CHECK(st == DDL_ERR_INVALID_ARG && strstr(ddl_last_error(), text), "%s: the refusing rank got %d (%s), "
                  "expected DDL_ERR_INVALID_ARG with '%s'", what, st, ddl_last_error(), text);
        } else if (k == 1 && odd_is_owner) {
            /* Every result depends on the refusing owner's data. */
            CHECK(st != DDL_OK, "%s: call 1 succeeded on rank %d although rank %d refused it", what, info.rank, odd);
        } else if (k != 1) {
            CHECK(st == DDL_OK, "%s: call %d failed: %s", what, k, ddl_last_error());
        }
        check_outcome(what, k, st, recv, n);
    }
}

static void scenario_refused(ddl_comm_t *comm)
{
    int64_t sizes[] = {2, 1031, 100003}; /* the MPI path, through the control block or the exchange; the lanes */
    size_t most = sizeof(int32_t) * 100003;
    int32_t *send = NULL, *recv = NULL, *tiny = NULL;
    if (ddl_malloc(comm, most, (void **)&send) != DDL_OK || ddl_malloc(comm, most, (void **)&recv) != DDL_OK ||
        ddl_malloc(comm, 4096, (void **)&tiny) != DDL_OK) {
        fprintf(stderr, "ddl_malloc failed: %s\n", ddl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int32_t *last = tiny + 1023; /* 4 bytes before the allocation's end: shorter than any count here */
    /* An owner on another node than rank 0 (the last owner), and a helper where there are helpers. */
    const char *mode = getenv("DDL_HELPERS");
    int collective = !mode || strcmp(mode, "serve") != 0;
    int odds[2] = {info.size - info.lanes, info.lanes > 1 && collective ? info.size - 1 : -1};
    const char *only = getenv("DDL_TEST_REFUSAL"); /* one refusal, by (part of) its name */
    for (int s = 0; s < 3; s++)
        for (int r = 0; r < NREFUSALS; r++)
            for (int o = 0; o < 2; o++)
                for (int nb = 0; nb < 2; nb++) {
                    if (odds[o] < 0 || (refusals[r].owners_only && odds[o] % info.lanes != 0))
                        continue;
                    if (r == NREFUSALS - 1 && !nb)
                        continue; /* a request handle only exists for the nonblocking call */
                    if (only && !strstr(refusals[r].name, only))
                        continue;
                    refused(comm, r, odds[o], nb, sizes[s], send, recv, last);
                }
    ddl_free(comm, tiny);
    ddl_free(comm, recv);
    ddl_free(comm, send);
}

/* Helper rank `odd` passes 300000 elements in call 2 where the others pass 2. */
static void scenario_helper(ddl_comm_t *comm)
{
    int odd = info.lanes > 1 ? info.size - info.lanes + 1 : -1;
    int nonblocking = env_int("DDL_TEST_NONBLOCKING", 0);
    int32_t *send = NULL, *recv = NULL;
    size_t bytes = sizeof(int32_t) * 300000;
    if (ddl_malloc(comm, bytes, (void **)&send) != DDL_OK || ddl_malloc(comm, bytes, (void **)&recv) != DDL_OK)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int ok = 0;
    for (int k = 0; k < 30; k++) {
        int64_t n = k == 2 && info.rank == odd ? 300000 : 2;
        fill(send, n, k);
        memset(recv, POISON, bytes);
        ddl_status_t st = call(comm, nonblocking, send, recv, n, DDL_DTYPE_I32, DDL_REDOP_SUM, DDL_MEM_AUTO, 0);
        if (k == 2 && info.rank == odd)
            CHECK(st == DDL_ERR_MISMATCH, "helper: call 2 with another count returned %d (%s), expected "
                  "DDL_ERR_MISMATCH", st, ddl_last_error());
        else if (k != 2)
            CHECK(st == DDL_OK, "helper: call %d failed after helper rank %d's mismatch in call 2: %s", k, odd,
                  ddl_last_error());
        ok += st == DDL_OK;
        check_outcome("helper", k, st, recv, 2);
    }
    if (info.rank == 0)
        printf("helper %d's mismatch in call 2: %d of 30 calls succeeded on rank 0\n", odd, ok);
    ddl_free(comm, recv);
    ddl_free(comm, send);
}

/* Owner `skip` (the last node's) leaves out call 12 of 16; its helpers make
 * them all.  Every call returns within DDL_TIMEOUT and its grace. */
static void scenario_skip(ddl_comm_t *comm)
{
    int skip = info.size - info.lanes;
    int64_t n = env_int("DDL_TEST_COUNT", 300000);
    double timeout = atof(getenv("DDL_TIMEOUT") ? getenv("DDL_TIMEOUT") : "300");
    double grace = timeout / 4 < 1 ? timeout / 4 : 1;
    /* The waits stack at most: the owner's, the helper's for its owner, the graces, and the
     * scheduling of 4 ranks on 2 cores. */
    double limit = 2 * timeout + 4 * grace + 5;
    int32_t *send = NULL, *recv = NULL;
    size_t bytes = sizeof(int32_t) * (size_t)n;
    if (ddl_malloc(comm, bytes, (void **)&send) != DDL_OK || ddl_malloc(comm, bytes, (void **)&recv) != DDL_OK)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int failed = 0;
    const char *named = NULL;
    char owner[32];
    snprintf(owner, sizeof(owner), "rank %d", skip);
    for (int k = 0; k < 16; k++) {
        if (k == 12 && info.rank == skip)
            continue;
        fill(send, n, k);
        memset(recv, POISON, bytes);
        double t0 = MPI_Wtime();
        ddl_status_t st = ddl_allreduce(send, recv, n, DDL_DTYPE_I32, DDL_REDOP_SUM, comm);
        double took = MPI_Wtime() - t0;
        CHECK(took < limit, "skip: call %d took %.1f s (DDL_TIMEOUT %.1f s, limit %.1f s)", k, took, timeout, limit);
        if (k < 12) {
            CHECK(st == DDL_OK, "skip: call %d before the skipped one failed: %s", k, ddl_last_error());
            check_outcome("skip", k, st, recv, n);
        }
        if (st != DDL_OK && !failed) {
            failed = 1;
            /* The first failure on a rank that waited for the missing owner names it. */
            if (st == DDL_ERR_TIMED_OUT && info.rank != skip && strstr(ddl_last_error(), owner))
                named = owner;
            if (info.rank == 0 || info.rank == skip + 1)
                printf("skip: rank %d's first failure, call %d: %s: %s\n", info.rank, k, ddl_status_string(st),
                       ddl_last_error());
        }
    }
    if (info.rank == skip + 1 && info.lanes > 1)
        CHECK(failed && named, "skip: helper rank %d did not fail with a timeout naming its owner, %s", info.rank,
              owner);
    if (info.rank == 0)
        CHECK(failed, "skip: rank 0 never failed although owner %d skipped a call", skip);
    ddl_free(comm, recv);
    ddl_free(comm, send);
}

/* A layout setting that differs between ranks: rank 0 and (with
 * DDL_TEST_HALF) the first half of the ranks take DDL_TEST_VALUE, the
 * others the environment's. */
static int scenario_layout(int *argc, char ***argv)
{
    int provided, rank, size;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    info.rank = rank;
    const char *name = getenv("DDL_TEST_SETTING"), *alt = getenv("DDL_TEST_VALUE");
    if (!name || !alt) {
        fprintf(stderr, "layout: set DDL_TEST_SETTING and DDL_TEST_VALUE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int half = env_int("DDL_TEST_HALF", 0);
    if (rank == 0 || (half && rank < size / 2))
        setenv(name, alt, 1);
    ddl_config_t cfg;
    ddl_comm_t *comm = NULL;
    ddl_status_t st = ddl_config_init(&cfg);
    if (st == DDL_OK)
        st = ddl_comm_create(MPI_COMM_WORLD, &cfg, &comm);
    const char *msg = ddl_last_error();
    char mine[64];
    snprintf(mine, sizeof(mine), "this rank: %s", getenv(name));
    CHECK(st == DDL_ERR_INVALID_ARG, "layout: %s differing between ranks: ddl_comm_create returned %d (%s)", name, st,
          msg);
    CHECK(strstr(msg, name) && strstr(msg, mine) && strstr(msg, "rank "), "layout: the message '%s' does not name "
          "%s, this rank's value (%s) and a rank with another", msg, name, mine);
    if (comm)
        ddl_comm_destroy(comm);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("layout, %s differing: %d cases, %d failures; rank 0's message: %s\n", name, cases, total, msg);
    MPI_Finalize();
    return total ? 1 : 0;
}

int main(int argc, char **argv)
{
    const char *scenario = getenv("DDL_TEST_SCENARIO");
    if (!scenario)
        scenario = "refused";
    if (!strcmp(scenario, "layout"))
        return scenario_layout(&argc, &argv);
    ddl_config_t cfg;
    ddl_comm_t *comm = ddl_test_comm(&argc, &argv, &cfg, &info);
    if (cfg.helper_mode == DDL_HELPERS_SERVE && info.role == DDL_ROLE_HELPER) {
        ddl_status_t st = ddl_serve(comm); /* until the owners destroy the communicator */
        CHECK(st == DDL_OK, "ddl_serve: %s", ddl_last_error());
    } else if (!strcmp(scenario, "refused"))
        scenario_refused(comm);
    else if (!strcmp(scenario, "helper"))
        scenario_helper(comm);
    else if (!strcmp(scenario, "skip"))
        scenario_skip(comm);
    else {
        fprintf(stderr, "DDL_TEST_SCENARIO=%s: not one of refused, helper, skip, layout\n", scenario);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* Destroyed first: serve-mode helpers return from ddl_serve only then. */
    ddl_comm_destroy(comm);
    int total = 0, all_cases = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&cases, &all_cases, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (info.rank == 0)
        printf("%s: %d nodes x %d GPUs x %d lanes, helpers %s: %d cases, %d failures\n", scenario, info.nnodes,
               info.gpus_per_node, info.lanes, cfg.helper_mode == DDL_HELPERS_SERVE ? "serve" : "collective",
               all_cases, total);
    MPI_Finalize();
    return total ? 1 : 0;
}
