/* SPDX-License-Identifier: Apache-2.0 */
/* The ranks' agreement on numbers (agree.h): point to point through the
 * first rank, with the deadline and the failure protocol of the
 * communicator.  Uses core only. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "comm.h"
#include "log.h"
#include "node.h"

#define AGREE_TAG 0x5e1 /* point-to-point on the choosing ranks' communicator */

ddl_status_t ddl_agree_max(ddl_comm_t *c, MPI_Comm comm, double *v, int n)
{
    if (n < 1 || n > DDL_AGREE_MAX)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_agree_max: %d numbers (1 to %d)", n, DDL_AGREE_MAX);
    int size, rank;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    double answer[DDL_AGREE_MAX + 1];
    int missing = -1;
    ddl_status_t st = DDL_OK;
    ddl_wait_how_t w = {"the agreement on the timings", c->set.timeout, ddl_node_abort_flag(&c->node), NULL,
                    "it may have stopped, or stopped calling ddl_allreduce"};
    if (rank == 0) {
        double *all = calloc((size_t)size, sizeof(double) * (size_t)n);
        MPI_Request *req = calloc((size_t)size, sizeof(MPI_Request));
        if (!all || !req) {
            free(all);
            free(req);
            return ddl_error(DDL_ERR_NO_MEMORY, "out of memory agreeing on the timings");
        }
        for (int r = 1; r < size; r++)
            MPI_Irecv(all + (size_t)r * (size_t)n, n, MPI_DOUBLE, r, AGREE_TAG, comm, &req[r]);
        ddl_mpi_wait_t rq = {req + 1, NULL, size - 1};
        st = ddl_wait_until(&w, ddl_mpi_done, &rq); /* on a timeout, the message below names the rank */
        for (int r = 1; r < size && st == DDL_ERR_TIMED_OUT && missing < 0; r++) {
            int done = 0;
            MPI_Test(&req[r], &done, MPI_STATUS_IGNORE);
            if (!done)
                missing = r;
        }
        for (int i = 0; i < n; i++) {
            answer[i] = v[i];
            for (int r = 1; r < size; r++)
                answer[i] = all[(size_t)r * (size_t)n + i] > answer[i] ? all[(size_t)r * (size_t)n + i] : answer[i];
        }
        answer[n] = missing >= 0 ? ddl_comm_world_rank(c, comm, missing) : st == DDL_OK ? -1 : -2;
        for (int r = 1; r < size; r++)
            if (req[r] != MPI_REQUEST_NULL) { /* after a failure: what never came */
                MPI_Cancel(&req[r]);
                MPI_Request_free(&req[r]);
            }
        /* The answer goes out even after a failure, so that the others learn
         * it; then a send to a rank that never comes cannot complete, so its
         * buffer (a copy) is left to MPI. */
        double *out = malloc(sizeof(answer));
        if (out) {
            memcpy(out, answer, sizeof(answer));
            for (int r = 1; r < size; r++)
                MPI_Isend(out, n + 1, MPI_DOUBLE, r, AGREE_TAG, comm, &req[r]);
            rq = (ddl_mpi_wait_t){req + 1, NULL, size - 1};
            if (st != DDL_OK) {
                for (int r = 1; r < size; r++)
                    MPI_Request_free(&req[r]);
            } else if ((st = ddl_wait_until(&w, ddl_mpi_done, &rq)) == DDL_OK) {
                free(out);
            }
        } else if (st == DDL_OK) {
            st = ddl_error(DDL_ERR_NO_MEMORY, "out of memory agreeing on the timings");
        }
        free(req);
        free(all);
    } else {
        /* Buffers of requests that may never complete are left to MPI: copies. */
        double *io = malloc(sizeof(double) * (size_t)(2 * n + 1));
        if (!io)
            return ddl_error(DDL_ERR_NO_MEMORY, "out of memory agreeing on the timings");
        memcpy(io, v, sizeof(double) * (size_t)n);
        MPI_Request req[2];
        MPI_Isend(io, n, MPI_DOUBLE, 0, AGREE_TAG, comm, &req[0]);
        MPI_Irecv(io + n, n + 1, MPI_DOUBLE, 0, AGREE_TAG, comm, &req[1]);
        ddl_mpi_wait_t rq = {req, NULL, 2};
        w.timeout += ddl_failure_grace(c->set.timeout); /* rank 0 answers at its own deadline */
        st = ddl_wait_until(&w, ddl_mpi_done, &rq);
        if (st == DDL_OK) {
            memcpy(answer, io + n, sizeof(double) * (size_t)(n + 1));
            free(io);
        }
        if (st == DDL_OK && answer[n] >= 0)
            missing = (int)answer[n];
        else if (st == DDL_OK && answer[n] < -1)
            st = DDL_ERR_PEER_FAILED; /* rank 0 failed for another reason, which its node tells */
        else if (st == DDL_ERR_TIMED_OUT)
            missing = ddl_comm_world_rank(c, comm, 0);
    }
    if (missing >= 0) {
        char whom[DDL_HOST_LEN + 32];
        snprintf(whom, sizeof(whom), "rank %d on %s", missing, c->hosts[missing]);
        return ddl_timed_out(w.what, c->set.timeout, whom, w.hint);
    }
    if (st == DDL_ERR_PEER_FAILED)
        return ddl_comm_abandoned(c, "the agreement on the timings");
    if (st != DDL_OK)
        return ddl_error(st, "the exchange of the timings failed in MPI");
    memcpy(v, answer, sizeof(double) * (size_t)n);
    return DDL_OK;
}
