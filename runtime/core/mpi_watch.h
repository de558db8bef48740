/* SPDX-License-Identifier: Apache-2.0 */
/* The deadline of the system MPI's blocking collectives on the data path
 * (the MPI path's MPI_Allreduce, MPI_Reduce_scatter_block and
 * MPI_Allgather).  Every other wait inside a call gives up after DDL_TIMEOUT,
 * but a blocking MPI collective cannot: a peer that gave up on the call
 * after the owners' signatures agreed (its own deadline ran out first, and
 * its signature was already on its way), or that stopped inside the
 * collective, leaves the others in it for good, and MPI has no way out of a
 * collective.  The watch ends the job instead of hanging it: a thread per
 * communicator, started by its first such call, that calls MPI_Abort with a
 * message naming the call, the rank and the deadline once a call has lasted
 * past DDL_TIMEOUT.  Every owner has agreed before the call starts, so a
 * call that long is a failure, not a slow peer. */
#ifndef DDL_MPI_WATCH_H
#define DDL_MPI_WATCH_H

#include "comm.h"

/* Before a blocking system MPI collective named `what` (a static string). */
void ddl_mpi_watch_enter(ddl_comm_t *c, const char *what);
/* After it returned. */
void ddl_mpi_watch_leave(ddl_comm_t *c);
/* At destruction: the thread, if any, ends and is joined. */
void ddl_mpi_watch_stop(ddl_comm_t *c);

#endif
