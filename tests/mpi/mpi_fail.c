/* SPDX-License-Identifier: Apache-2.0 */
/* A failed MPI call, on purpose, for run-failure.sh: preloaded into a rank
 * (LD_PRELOAD), it makes that rank's Nth MPI_Isend fail as a broken link
 * would.  DDL_TEST_MPI_FAIL="RANK:N" (world ranks).  The call invokes its
 * communicator's error handler with MPI_ERR_OTHER and returns that code
 * without sending, as MPI does with a handler that returns; every other call
 * goes to MPI itself (its profiling interface, PMPI_). */
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static _Atomic int isends;

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    int fail_rank = -1, fail_at = 0, me = -2;
    const char *e = getenv("DDL_TEST_MPI_FAIL");
    if (e && sscanf(e, "%d:%d", &fail_rank, &fail_at) == 2 && PMPI_Comm_rank(MPI_COMM_WORLD, &me) == MPI_SUCCESS &&
        me == fail_rank && atomic_fetch_add(&isends, 1) + 1 == fail_at) {
        fprintf(stderr, "rank %d: mpi_fail: MPI_Isend number %d fails (DDL_TEST_MPI_FAIL=%s)\n", me, fail_at, e);
        *req = MPI_REQUEST_NULL;
        PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
        return MPI_ERR_OTHER;
    }
    return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}
