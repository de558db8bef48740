/* SPDX-License-Identifier: Apache-2.0 */
/* The always-on agreement check (no DDL_CHECK): ranks that call ddl_allreduce
 * with a different count, type or op get DDL_ERR_MISMATCH on every calling
 * rank, naming the values, and nothing is written: not the receive buffer (it
 * keeps its poison) and not the ddl_malloc allocation after it.  The
 * communicator then still gives correct sums.  Run on one node and across
 * virtual nodes, collective and serve mode, lane path and MPI path; count 0
 * against other counts (a call of its own, never paired with the next one),
 * and counts one apart across a size class, where the ranks choose different
 * paths (found at once, not after DDL_TIMEOUT). */
#include "config.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddl.h"
#include "testcomm.h"

#define BIG 100003 /* elements: the lane path on any layout here */
#define SMALL 16   /* elements: the MPI path (DDL_ALGO=auto) */
#define MEDIUM 16384 /* elements (64 KiB): between nodes with DDL_SELECT=model, MPI_Allreduce after the
                      * signatures, started early when the call repeats the last one */
#define POISON 0x5a
#define CLASS_EDGE 32768 /* int32 elements: 131072 bytes, the first of a size class; one less is in the class below */
#define DETECT_LIMIT_S 2.0 /* a mismatch across size classes is found in this time (the run sets DDL_TIMEOUT=60) */

static int failures;
static ddl_comm_info_t info;
static int caller_rank, callers, last_owner; /* among the ranks that call ddl_allreduce */
static double slowest;                       /* the longest a mismatch across size classes took here */

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL rank %d (%s:%d): ", info.rank, __FILE__, __LINE__);              \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static int untouched(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != POISON)
            return 0;
    return 1;
}

/* One mismatched call: the rank `odd` (a caller index) passes (count2, dtype2,
 * op2), the others (count, dtype, op).  Every caller must get MISMATCH; the
 * owners' receive buffers and the next allocation must be untouched.  `text`
 * is in the message of the ranks that see the values (the deviating rank's
 * node, or both sides between nodes); "differently" is in every message. */
static void mismatched(const char *what, ddl_comm_t *comm, void *send, void *recv, void *next, size_t bytes,
                       int odd, int64_t count, ddl_dtype_t dtype, ddl_redop_t op, int64_t count2,
                       ddl_dtype_t dtype2, ddl_redop_t op2)
{
    int me_odd = caller_rank == odd;
    memset(send, 1, bytes);
    memset(recv, POISON, bytes);
    memset(next, POISON, 4096);
    ddl_status_t st = ddl_allreduce(send, recv, me_odd ? count2 : count, me_odd ? dtype2 : dtype, me_odd ? op2 : op,
                                    comm);
    CHECK(st == DDL_ERR_MISMATCH, "%s: returned %d (%s), expected DDL_ERR_MISMATCH", what, st, ddl_last_error());
    CHECK(strstr(ddl_last_error(), "differently") != NULL, "%s: message '%s' does not say the ranks called "
          "differently", what, ddl_last_error());
    if (info.role == DDL_ROLE_OWNER) {
        CHECK(untouched(recv, bytes), "%s: the receive buffer was written", what);
        CHECK(untouched(next, 4096), "%s: the next ddl_malloc allocation was written", what);
    }
}

static void correct_sum(ddl_comm_t *comm, float *send, float *recv)
{
    for (int i = 0; i < BIG; i++)
        send[i] = (float)(info.owner_rank + 1) + (float)(i % 7);
    memset(recv, POISON, sizeof(float) * BIG);
    ddl_status_t st = ddl_allreduce(send, recv, BIG, DDL_DTYPE_F32, DDL_REDOP_SUM, comm);
    CHECK(st == DDL_OK, "the call after the mismatches failed: %s", ddl_last_error());
    if (info.role != DDL_ROLE_OWNER || st != DDL_OK)
        return;
    int n = info.nnodes * info.gpus_per_node;
    for (int i = 0; i < BIG; i++) {
        float want = (float)(n * (n + 1) / 2) + (float)(n * (i % 7));
        if (recv[i] != want) {
            CHECK(0, "after the mismatches, element %d is %g, expected %g", i, recv[i], want);
            break;
        }
    }
}

/* `times` calls of n floats, call k carrying 1000 k + owner + 1 everywhere;
 * with odd >= 0, the caller `odd` passes count 0 in call 1.  Call 1 must then
 * fail on every caller with nothing written; every other call must give its
 * own sum (before count 0 took part in the agreement, the odd rank's call 2
 * was paired with the others' call 1 and both returned success with the
 * wrong sums; between hosts, a call that repeats the one before starts
 * MPI_Iallreduce before the signatures agree). */
static void numbered_calls(const char *what, ddl_comm_t *comm, float *send, float *recv, int64_t n, int times, int odd)
{
    int owners = info.nnodes * info.gpus_per_node;
    for (int k = 0; k < times; k++) {
        int zero = k == 1 && caller_rank == odd;
        for (int64_t i = 0; i < n; i++)
            send[i] = (float)(1000 * k + info.owner_rank + 1);
        memset(recv, POISON, sizeof(float) * (size_t)n);
        ddl_status_t st = ddl_allreduce(send, recv, zero ? 0 : n, DDL_DTYPE_F32, DDL_REDOP_SUM, comm);
        if (k == 1 && odd >= 0) {
            CHECK(st == DDL_ERR_MISMATCH, "%s: call 1 (count 0 on caller %d) returned %d (%s), expected "
                  "DDL_ERR_MISMATCH", what, odd, st, ddl_last_error());
            if (info.role == DDL_ROLE_OWNER)
                CHECK(untouched((const unsigned char *)recv, sizeof(float) * (size_t)n), "%s: call 1 wrote the "
                      "receive buffer", what);
            if (info.rank == 0) /* the run checks that the others had started early, where they can */
                printf("%s, call 1: %s\n", what, ddl_last_error());
            continue;
        }
        CHECK(st == DDL_OK, "%s: call %d failed: %s", what, k, ddl_last_error());
        if (st != DDL_OK || info.role != DDL_ROLE_OWNER)
            continue;
        float want = (float)(1000 * k * owners + owners * (owners + 1) / 2);
        for (int64_t i = 0; i < n; i++)
            if (recv[i] != want) {
                CHECK(0, "%s: call %d, element %lld is %g, expected %g", what, k, (long long)i, recv[i], want);
                break;
            }
    }
}

/* Counts one apart across a size class boundary, after `prior` matching
 * calls (online selection may have settled the lower class or be half way
 * through exploring it): the two sizes may take different paths, and the
 * mismatch must still be found at once on every caller. */
static double across_classes(ddl_comm_t *comm, void *send, void *recv, int prior, int odd)
{
    for (int k = 0; k < prior; k++) {
        ddl_status_t st = ddl_allreduce(send, recv, CLASS_EDGE - 1, DDL_DTYPE_I32, DDL_REDOP_SUM, comm);
        CHECK(st == DDL_OK, "size classes: matching call %d of %d failed: %s", k, prior, ddl_last_error());
    }
    memset(recv, POISON, sizeof(int32_t) * CLASS_EDGE);
    double t0 = MPI_Wtime();
    ddl_status_t st = ddl_allreduce(send, recv, caller_rank == odd ? CLASS_EDGE : CLASS_EDGE - 1, DDL_DTYPE_I32,
                                    DDL_REDOP_SUM, comm);
    double took = MPI_Wtime() - t0;
    CHECK(st == DDL_ERR_MISMATCH, "size classes: %d against %d elements after %d calls returned %d (%s) in %.2f s, "
          "expected DDL_ERR_MISMATCH", CLASS_EDGE, CLASS_EDGE - 1, prior, st, ddl_last_error(), took);
    CHECK(took < DETECT_LIMIT_S, "size classes: the mismatch after %d calls took %.2f s to find (limit %.1f s)", prior,
          took, DETECT_LIMIT_S);
    if (info.role == DDL_ROLE_OWNER)
        CHECK(untouched(recv, sizeof(int32_t) * CLASS_EDGE), "size classes: the receive buffer was written");
    return took;
}

/* A call's send and receive buffers of `bytes` and the 4 KiB allocation
 * after them (which a mismatched call must leave untouched), or the job ends. */
static void test_buffers(ddl_comm_t *comm, size_t bytes, void **send, void **recv, void **next)
{
    if (ddl_malloc(comm, bytes, send) != DDL_OK || ddl_malloc(comm, bytes, recv) != DDL_OK ||
        ddl_malloc(comm, 4096, next) != DDL_OK) {
        fprintf(stderr, "ddl_malloc failed: %s\n", ddl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Lane calls of this communicator that sent their first chunk before the
 * owners' exchange of signatures (ddl_comm_phases' "early"). */
static unsigned long long early_calls(ddl_comm_t *comm)
{
    ddl_phase_stats_t ph[16];
    int n = ddl_comm_phases(comm, ph, 16);
    for (int i = 0; i < n; i++)
        if (!strcmp(ph[i].name, "early"))
            return ph[i].calls;
    return 0;
}

/* Between nodes a lane call that repeats one the nodes agreed on sends its
 * first chunk before the owners' exchange of signatures, under a tag of that
 * call's (algo/lane_early.c).  On a communicator of its own (after a failed
 * call nothing starts early again): repeated calls, right, most of them
 * early; then the last caller passes odd_count, never agreed on (on the
 * lanes, or 1: the MPI path).  Where it is its node's local rank 0 (one rank
 * per node; serve mode with one GPU per node) its node sends nothing early
 * while the others do; elsewhere its node's local rank 0 repeats the known
 * call and sends its first chunk before its node has met
 * (lane_path.c), and the node finds the difference (or the split
 * between paths) only then.  Every caller gets MISMATCH with nothing written,
 * and the calls after it (none early) are right, although the early
 * messages of the failed call wait unmatched (under the tag of an agreed
 * call's chunk they would be taken for the next call's). */
#define REPEATS 4

static void early_lane_calls(ddl_comm_t *comm, int64_t odd_count)
{
    size_t bytes = sizeof(float) * BIG;
    void *send, *recv, *next;
    test_buffers(comm, bytes, &send, &recv, &next);
    numbered_calls("repeated lane calls", comm, send, recv, BIG, REPEATS, -1);
    unsigned long long early = early_calls(comm);
    if (info.nnodes > 1)
        CHECK(early == REPEATS - 1, "%llu of %d repeated lane calls started early between nodes, expected %d", early,
              REPEATS, REPEATS - 1);
    else
        CHECK(early == 0, "%llu lane calls started early on one node", early);
    memset(send, 1, bytes);
    memset(recv, POISON, bytes);
    memset(next, POISON, 4096);
    int odd = caller_rank == callers - 1;
    ddl_status_t st = ddl_allreduce(send, recv, odd ? odd_count : BIG, DDL_DTYPE_F32, DDL_REDOP_SUM, comm);
    CHECK(st == DDL_ERR_MISMATCH, "a known lane call against count %lld: returned %d (%s), expected "
          "DDL_ERR_MISMATCH", (long long)odd_count, st, ddl_last_error());
    if (info.role == DDL_ROLE_OWNER) {
        CHECK(untouched(recv, bytes), "a known lane call against count %lld: the receive buffer was written",
              (long long)odd_count);
        CHECK(untouched(next, 4096), "a known lane call against count %lld: the next allocation was written",
              (long long)odd_count);
    }
    unsigned long long before = early_calls(comm);
    numbered_calls("lane calls after an early one failed", comm, send, recv, BIG, 3, -1);
    CHECK(early_calls(comm) == before, "a lane call started early after a failed call");
    ddl_free(comm, next);
    ddl_free(comm, recv);
    ddl_free(comm, send);
}

int main(int argc, char **argv)
{
    ddl_config_t cfg;
    ddl_comm_t *comm = ddl_test_comm(&argc, &argv, &cfg, &info), *lanes_comm[2] = {NULL, NULL};
    /* Two more communicators, one for each way the last caller departs from
     * the repeated call (after a failed call nothing starts early again): a
     * count never agreed on, on the lanes, and a count of 1, which takes the
     * MPI path (the node splits between paths).  Their calls of BIG take the
     * lanes with one plan each time (online selection would give each
     * candidate a key of its own, and a tuning file may send them to the
     * MPI path). */
    const int64_t odd_counts[2] = {BIG - 2, 1};
    const char *names[] = {"DDL_ALGO", "DDL_SELECT", "DDL_TUNING_FILE"}, *values[] = {"lane", "model", NULL};
    char *saved[3];
    for (int i = 0; i < 3; i++) {
        saved[i] = getenv(names[i]) ? strdup(getenv(names[i])) : NULL;
        values[i] ? setenv(names[i], values[i], 1) : unsetenv(names[i]);
    }
    for (int k = 0; k < 2; k++)
        if (ddl_comm_create(MPI_COMM_WORLD, &cfg, &lanes_comm[k]) != DDL_OK) {
            fprintf(stderr, "a communicator for repeated lane calls: %s\n", ddl_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    for (int i = 0; i < 3; i++) { /* as the run set them */
        saved[i] ? setenv(names[i], saved[i], 1) : unsetenv(names[i]);
        free(saved[i]);
    }
    int serve = cfg.helper_mode == DDL_HELPERS_SERVE;
    if (serve && info.role == DDL_ROLE_HELPER) {
        ddl_status_t st;
        for (int k = 0; k < 2; k++) {
            st = ddl_serve(lanes_comm[k]);
            CHECK(st == DDL_OK, "ddl_serve ended with %s", ddl_last_error());
            ddl_comm_destroy(lanes_comm[k]); /* with the owners, who destroyed it */
        }
        st = ddl_serve(comm);
        CHECK(st == DDL_OK, "ddl_serve ended with %s", ddl_last_error());
    } else {
        /* Callers: every rank in collective mode, the owners in serve mode. */
        callers = serve ? info.nnodes * info.gpus_per_node : info.size;
        caller_rank = serve ? info.owner_rank : info.rank;
        last_owner = serve ? callers - 1 : info.size - info.lanes;
        for (int k = 0; k < 2; k++) {
            early_lane_calls(lanes_comm[k], odd_counts[k]);
            ddl_comm_destroy(lanes_comm[k]);
        }
        size_t bytes = sizeof(double) * BIG;
        void *send, *recv, *next;
        test_buffers(comm, bytes, &send, &recv, &next);
        /* First, while no call has failed (after a failed call nothing
         * starts early again): a call that repeats the last one starts
         * early between hosts; right sums; a caller that deviates from the
         * repeat (count 0) makes it a mismatch everywhere, with nothing
         * written; after it, calls go on right. */
        numbered_calls("repeated medium calls", comm, send, recv, MEDIUM, 3, -1);
        int odd_owner = serve ? callers - 1 : last_owner; /* the MPI path's owners differ */
        numbered_calls("a skipped medium call after repeats", comm, send, recv, MEDIUM, 4, odd_owner);
        /* Lane path: the last caller (a helper in collective mode with lanes) counts one less. */
        mismatched("count", comm, send, recv, next, bytes, callers - 1, BIG, DDL_DTYPE_F32, DDL_REDOP_SUM, BIG - 1,
                   DDL_DTYPE_F32, DDL_REDOP_SUM);
        mismatched("type", comm, send, recv, next, bytes, 0, BIG, DDL_DTYPE_F32, DDL_REDOP_SUM, BIG, DDL_DTYPE_F64,
                   DDL_REDOP_SUM);
        mismatched("op", comm, send, recv, next, bytes, callers - 1, BIG, DDL_DTYPE_F32, DDL_REDOP_SUM, BIG,
                   DDL_DTYPE_F32, DDL_REDOP_MAX);
        /* Same byte count, another type: only the signature can tell. */
        mismatched("same-size type", comm, send, recv, next, bytes, callers - 1, BIG, DDL_DTYPE_F32, DDL_REDOP_SUM,
                   BIG, DDL_DTYPE_I32, DDL_REDOP_SUM);
        /* MPI path: owners differ (helpers of collective mode learn it from their owner). */
        mismatched("small count", comm, send, recv, next, bytes, odd_owner, SMALL, DDL_DTYPE_F32, DDL_REDOP_SUM,
                   SMALL - 1, DDL_DTYPE_F32, DDL_REDOP_SUM);
        mismatched("small type", comm, send, recv, next, bytes, odd_owner, SMALL, DDL_DTYPE_F32, DDL_REDOP_SUM, SMALL,
                   DDL_DTYPE_I32, DDL_REDOP_SUM);
        /* Between nodes the exchange's messages go in pieces of 4032 bytes, a
         * full one announcing the next: one piece (3840 B of data) against
         * two (3968 B), and two full pieces and an empty one (7936 B) against
         * three (8064 B).  A rank that waited for a piece never sent, or left
         * one unread for the next call, would fail here or in what follows. */
        mismatched("count across the exchange's first piece", comm, send, recv, next, bytes, odd_owner, 960,
                   DDL_DTYPE_F32, DDL_REDOP_SUM, 992, DDL_DTYPE_F32, DDL_REDOP_SUM);
        mismatched("count across the exchange's last piece", comm, send, recv, next, bytes, 0, 2016, DDL_DTYPE_F32,
                   DDL_REDOP_SUM, 1984, DDL_DTYPE_F32, DDL_REDOP_SUM);
        /* 256 bytes of data go apart from the key between ranks of one host
         * (two messages), 224 with it (one). */
        mismatched("count across the key sent apart", comm, send, recv, next, bytes, odd_owner, 64, DDL_DTYPE_F32,
                   DDL_REDOP_SUM, 56, DDL_DTYPE_F32, DDL_REDOP_SUM);
        /* Count 0 takes part: against a small count (the MPI path for both),
         * against a large one (the lanes; count 0 goes the MPI path), from an
         * owner and, in collective mode, from a helper. */
        mismatched("count 0 against 1000", comm, send, recv, next, bytes, odd_owner, 1000, DDL_DTYPE_F32,
                   DDL_REDOP_SUM, 0, DDL_DTYPE_F32, DDL_REDOP_SUM);
        mismatched("count 0 against a lane call", comm, send, recv, next, bytes, 0, BIG, DDL_DTYPE_F32, DDL_REDOP_SUM,
                   0, DDL_DTYPE_F32, DDL_REDOP_SUM);
        mismatched("count 0 from the last caller", comm, send, recv, next, bytes, callers - 1, BIG, DDL_DTYPE_F32,
                   DDL_REDOP_SUM, 0, DDL_DTYPE_F32, DDL_REDOP_SUM);
        numbered_calls("a skipped small call", comm, send, recv, SMALL, 4, odd_owner);
        numbered_calls("a skipped lane call", comm, send, recv, BIG, 4, 0);
        /* Medium calls after failures (no early starts): right sums, a count one less found. */
        numbered_calls("repeated medium calls", comm, send, recv, MEDIUM, 2, -1);
        mismatched("medium count after repeats", comm, send, recv, next, bytes, odd_owner, MEDIUM, DDL_DTYPE_F32,
                   DDL_REDOP_SUM, MEDIUM - 1, DDL_DTYPE_F32, DDL_REDOP_SUM);
        numbered_calls("medium calls after the mismatches", comm, send, recv, MEDIUM, 2, -1);
        /* Owners: a helper of collective mode whose count differs goes
         * unnoticed by the owners on the MPI path (docs/user-guide.md); it fails alone. */
        for (int prior = 0; prior <= 6; prior++) {
            double took = across_classes(comm, send, recv, prior, prior % 2 ? 0 : last_owner);
            slowest = took > slowest ? took : slowest;
        }
        correct_sum(comm, send, recv);
        ddl_free(comm, next);
        ddl_free(comm, recv);
        ddl_free(comm, send);
    }
    ddl_comm_destroy(comm);
    int total = 0;
    double worst = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&slowest, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (info.rank == 0)
        printf("%d nodes x %d GPUs x %d lanes, helpers %s: mismatches (across size classes found in %.3f s at "
               "most), %d failures\n", info.nnodes, info.gpus_per_node, info.lanes, serve ? "serve" : "collective",
               worst, total);
    MPI_Finalize();
    return total ? 1 : 0;
}
