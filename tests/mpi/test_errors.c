/* SPDX-License-Identifier: Apache-2.0 */
/* Bad input: every invalid argument returns an error code with a message, and
 * the communicator keeps working afterwards. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddl.h"
#include "testcomm.h"

static int failures;

#define EXPECT(call, status, text)                                                                 \
    do {                                                                                           \
        ddl_status_t got_ = (call);                                                                \
        if (got_ != (status) || !strstr(ddl_last_error(), (text))) {                               \
            fprintf(stderr, "FAIL %s:%d: %s returned %d (%s), expected %d with '%s'\n", __FILE__,  \
                    __LINE__, #call, got_, ddl_last_error(), (status), (text));                    \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    ddl_config_t cfg;
    ddl_comm_info_t info;
    ddl_comm_t *comm = ddl_test_comm(&argc, &argv, &cfg, &info);
    float buf[64] = {0};
    int owner = info.role == DDL_ROLE_OWNER;

    /* Every rank refuses the same arguments: each call still takes its number
     * in the agreement (every rank fails it), and each rank keeps its own
     * message. */
    EXPECT(ddl_allreduce(buf, buf, -1, DDL_DTYPE_F32, DDL_REDOP_SUM, comm), DDL_ERR_INVALID_ARG, "negative");
    EXPECT(ddl_allreduce(buf, buf, 4, (ddl_dtype_t)42, DDL_REDOP_SUM, comm), DDL_ERR_INVALID_ARG, "datatype 42");
    EXPECT(ddl_allreduce(buf, buf, 4, DDL_DTYPE_F32, (ddl_redop_t)-3, comm), DDL_ERR_INVALID_ARG, "op -3");
    /* NULL buffers are refused on owners only (a collective-mode helper's
     * are not used); its helpers' calls fail with their owner's. */
    EXPECT(ddl_allreduce(buf, owner ? NULL : buf, 4, DDL_DTYPE_F32, DDL_REDOP_SUM, comm), DDL_ERR_INVALID_ARG,
           owner ? "recvbuf is NULL" : "failed on this helper's owner");
    EXPECT(ddl_allreduce(owner ? NULL : buf, buf, 4, DDL_DTYPE_F32, DDL_REDOP_SUM, comm), DDL_ERR_INVALID_ARG,
           owner ? "sendbuf is NULL" : "failed on this helper's owner");
    EXPECT(ddl_allreduce(buf, buf, 4, DDL_DTYPE_F32, DDL_REDOP_SUM, NULL), DDL_ERR_INVALID_ARG, "not a live");
    char choice[64];
    EXPECT((ddl_status_t)ddl_comm_choice(NULL, 8, choice, sizeof(choice)), DDL_ERR_INVALID_ARG, "not a live");
    EXPECT((ddl_status_t)ddl_comm_choice(comm, 8, NULL, 0), DDL_ERR_INVALID_ARG, "no buffer");
    /* DDL_SELECT=model: fixed rules, settled before any call; on one node the
     * small sizes take the MPI path, the large ones the lanes. */
    const char *select = getenv("DDL_SELECT");
    if (select && !strcmp(select, "model") && info.nnodes == 1) {
        int small = ddl_comm_choice(comm, 8, choice, sizeof(choice));
        if (small != 1 || strcmp(choice, "mpi") != 0) {
            fprintf(stderr, "FAIL: ddl_comm_choice of 8 bytes: %d, '%s', expected 1, 'mpi'\n", small, choice);
            failures++;
        }
        int large = ddl_comm_choice(comm, (size_t)64 << 20, choice, sizeof(choice));
        if (large != 1 || strcmp(choice, "lane") != 0) {
            fprintf(stderr, "FAIL: ddl_comm_choice of 64 MiB: %d, '%s', expected 1, 'lane'\n", large, choice);
            failures++;
        }
    }
    /* 2^62 floats are 2^64 bytes: refused at once, not wrapped into a small count. */
    EXPECT(ddl_allreduce(buf, buf, (int64_t)1 << 62, DDL_DTYPE_F32, DDL_REDOP_SUM, comm), DDL_ERR_INVALID_ARG,
           "more bytes than a buffer can hold");
    EXPECT(ddl_allreduce(buf, buf, INT64_MAX, DDL_DTYPE_U8, DDL_REDOP_SUM, comm), DDL_ERR_INVALID_ARG,
           "more bytes than a buffer can hold");
    EXPECT(ddl_free(comm, buf), DDL_ERR_INVALID_ARG, "not returned by ddl_malloc");
    /* A count past the end of a ddl_malloc buffer fails on every rank (the next
     * allocation stays as it was), and the communicator stays usable. */
    {
        float *a = NULL, *next = NULL;
        if (ddl_malloc(comm, 8192 * sizeof(float), (void **)&a) != DDL_OK ||
            ddl_malloc(comm, 4096, (void **)&next) != DDL_OK)
            MPI_Abort(MPI_COMM_WORLD, 1);
        memset(next, 0x5a, 4096);
        /* The lane path, then the MPI path (8 bytes left at the end of the buffer). */
        EXPECT(ddl_allreduce(a, a, 8192 + 2048, DDL_DTYPE_F32, DDL_REDOP_SUM, comm), DDL_ERR_INVALID_ARG,
               info.local_rank == 0 ? "holds 32768 bytes" : "cannot share"); /* the node names its first bad owner */
        EXPECT(ddl_allreduce(a + 8190, a + 8190, 8, DDL_DTYPE_F32, DDL_REDOP_SUM, comm), DDL_ERR_INVALID_ARG,
               owner ? "holds 8 bytes" : "");
        /* One owner's buffer too short, the others' fine (the MPI path): the
         * others learn it from its signature and fail too, their buffers
         * unwritten, instead of reducing data it never posted. */
        int short_one = owner && info.owner_rank == 0;
        float *mine = short_one ? a + 8190 : a;
        for (int i = 0; owner && !short_one && i < 8; i++)
            a[i] = -1;
        EXPECT(ddl_allreduce(mine, mine, 8, DDL_DTYPE_F32, DDL_REDOP_SUM, comm), DDL_ERR_INVALID_ARG,
               short_one ? "holds 8 bytes" : owner ? "passed buffers it cannot use" : "");
        for (int i = 0; owner && !short_one && i < 8; i++)
            if (a[i] != -1) {
                fprintf(stderr, "FAIL: owner %d's buffer was written by a call that failed\n", info.owner_rank);
                failures++;
                break;
            }
        for (int i = 0; i < 8192; i++)
            a[i] = 1;
        EXPECT(ddl_allreduce(a, a, 8192, DDL_DTYPE_F32, DDL_REDOP_SUM, comm), DDL_OK, "");
        if (owner && a[8191] != (float)info.owner_size) {
            fprintf(stderr, "FAIL: after the refused calls, the sum is %g, expected %d\n", a[8191], info.owner_size);
            failures++;
        }
        for (int i = 0; owner && i < 4096; i++)
            if (((unsigned char *)next)[i] != 0x5a) {
                fprintf(stderr, "FAIL: the allocation after the buffer was written\n");
                failures++;
                break;
            }
        ddl_free(comm, next);
        ddl_free(comm, a);
        /* The room of a repeated call's buffers is remembered while the heap
         * does not change: a smaller allocation in the same place is known
         * as such at once. */
        float *b = NULL;
        if (ddl_malloc(comm, 1024 * sizeof(float), (void **)&b) != DDL_OK)
            MPI_Abort(MPI_COMM_WORLD, 1);
        if (owner && b != a) {
            fprintf(stderr, "FAIL: a heap freed of all allocations placed the next one elsewhere (%p, not %p)\n",
                    (void *)b, (void *)a);
            failures++;
        }
        EXPECT(ddl_allreduce(b, b, 8192, DDL_DTYPE_F32, DDL_REDOP_SUM, comm), DDL_ERR_INVALID_ARG,
               info.local_rank == 0 ? "holds 4096 bytes" : "cannot share");
        ddl_free(comm, b);
    }
    if (owner) {
        void *p;
        EXPECT(ddl_malloc(comm, (size_t)1 << 62, &p), DDL_ERR_NO_MEMORY, "DDL_HEAP_SIZE");
    }
    if (ddl_serve(comm) == DDL_OK) {
        fprintf(stderr, "FAIL: ddl_serve succeeded in collective mode\n");
        failures++;
    }

    /* DDL_CHECK=1: a mismatch is reported on every rank instead of corrupting memory. */
    setenv("DDL_CHECK", "1", 1);
    ddl_comm_t *checked;
    if (ddl_comm_create(MPI_COMM_WORLD, &cfg, &checked) != DDL_OK) {
        fprintf(stderr, "set-up with DDL_CHECK failed: %s\n", ddl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int64_t count = info.rank == info.size - 1 ? 7 : 8;
    EXPECT(ddl_allreduce(buf, buf, count, DDL_DTYPE_F32, DDL_REDOP_SUM, checked), DDL_ERR_MISMATCH, "count 7");
    EXPECT(ddl_allreduce(buf, buf, 8, info.rank == 0 ? DDL_DTYPE_F64 : DDL_DTYPE_F32, DDL_REDOP_SUM, checked),
           DDL_ERR_MISMATCH, "double");
    /* Still usable after the reports. */
    for (int i = 0; i < 8; i++)
        buf[i] = 1;
    EXPECT(ddl_allreduce(buf, buf, 8, DDL_DTYPE_F32, DDL_REDOP_SUM, checked), DDL_OK, "");
    if (owner && buf[3] != (float)info.owner_size) {
        fprintf(stderr, "FAIL: after the checks, sum is %g, expected %d\n", buf[3], info.owner_size);
        failures++;
    }
    ddl_comm_destroy(checked);

    /* A destroyed communicator is refused, not used. */
    ddl_comm_destroy(comm);
    EXPECT(ddl_allreduce(buf, buf, 4, DDL_DTYPE_F32, DDL_REDOP_SUM, comm), DDL_ERR_INVALID_ARG, "not a live");
    EXPECT(ddl_comm_destroy(comm), DDL_ERR_INVALID_ARG, "not a live");

    /* A layout that does not fit fails on every rank with the reason. */
    ddl_config_t bad = cfg;
    bad.lanes = info.size + 1;
    ddl_comm_t *none = NULL;
    EXPECT(ddl_comm_create(MPI_COMM_WORLD, &bad, &none), DDL_ERR_LAYOUT, "do not divide");

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (info.rank == 0)
        printf("error handling: %d failures\n", total);
    MPI_Finalize();
    return total ? 1 : 0;
}
