/* SPDX-License-Identifier: Apache-2.0 */
/* The always-on agreement check (no DDL_CHECK): ranks that call ddl_allreduce
 * with a different count, type or op get DDL_ERR_MISMATCH on every calling
 * rank, naming the values, and nothing is written: not the receive buffer (it
 * keeps its poison) and not the ddl_malloc allocation after it.  The
 * communicator then still gives correct sums.  Run on one node and across
 * virtual nodes, collective and serve mode, lane path and MPI path. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddl.h"
#include "testcomm.h"

#define BIG 100003 /* elements: the lane path on any layout here */
#define SMALL 16   /* elements: the MPI path (DDL_ALGO=auto) */
#define POISON 0x5a

static int failures;
static ddl_comm_info_t info;
static int caller_rank, callers, last_owner; /* among the ranks that call ddl_allreduce */

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

int main(int argc, char **argv)
{
    ddl_config_t cfg;
    ddl_comm_t *comm = ddl_test_comm(&argc, &argv, &cfg, &info);
    int serve = cfg.helper_mode == DDL_HELPERS_SERVE;
    if (serve && info.role == DDL_ROLE_HELPER) {
        ddl_status_t st = ddl_serve(comm);
        CHECK(st == DDL_OK, "ddl_serve ended with %s", ddl_last_error());
    } else {
        /* Callers: every rank in collective mode, the owners in serve mode. */
        callers = serve ? info.nnodes * info.gpus_per_node : info.size;
        caller_rank = serve ? info.owner_rank : info.rank;
        last_owner = serve ? callers - 1 : info.size - info.lanes;
        size_t bytes = sizeof(double) * BIG;
        void *send, *recv, *next;
        if (ddl_malloc(comm, bytes, &send) != DDL_OK || ddl_malloc(comm, bytes, &recv) != DDL_OK ||
            ddl_malloc(comm, 4096, &next) != DDL_OK) {
            fprintf(stderr, "ddl_malloc failed: %s\n", ddl_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
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
        int odd_owner = serve ? callers - 1 : last_owner;
        mismatched("small count", comm, send, recv, next, bytes, odd_owner, SMALL, DDL_DTYPE_F32, DDL_REDOP_SUM,
                   SMALL - 1, DDL_DTYPE_F32, DDL_REDOP_SUM);
        mismatched("small type", comm, send, recv, next, bytes, odd_owner, SMALL, DDL_DTYPE_F32, DDL_REDOP_SUM, SMALL,
                   DDL_DTYPE_I32, DDL_REDOP_SUM);
        correct_sum(comm, send, recv);
        ddl_free(comm, next);
        ddl_free(comm, recv);
        ddl_free(comm, send);
    }
    ddl_comm_destroy(comm);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (info.rank == 0)
        printf("%d nodes x %d GPUs x %d lanes, helpers %s: mismatches, %d failures\n", info.nnodes,
               info.gpus_per_node, info.lanes, serve ? "serve" : "collective", total);
    MPI_Finalize();
    return total ? 1 : 0;
}
