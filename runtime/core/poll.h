/* SPDX-License-Identifier: Apache-2.0 */
/* Waiting with a deadline: the poll loop every wait of the runtime runs
 * (through ddl_comm_wait, comm.h, where a communicator waits), and its step
 * for MPI requests.  Below the node's control block and the signatures,
 * which both wait. */
#ifndef DDL_POLL_H
#define DDL_POLL_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

#include "ddl.h"

/* Polls step(arg) until it returns 1 (done) or a negative ddl_status_t; every
 * 16 looks while it spins, and after every look once it naps, it checks the
 * deadline (timeout seconds from its first check) and the node's abort flag
 * (abort may be NULL); after the first 250 us it naps between looks
 * (oversubscribed nodes: let the peers and the training run).
 * Returns DDL_OK, step's status, or DDL_ERR_TIMED_OUT / DDL_ERR_PEER_FAILED
 * without a message: the caller says what it waited for. */
ddl_status_t ddl_poll(int (*step)(void *arg), void *arg, double timeout, const _Atomic int32_t *abort);

/* The ddl_poll step for MPI requests: 1 once all n are complete (their
 * statuses in status, when not NULL), DDL_ERR_MPI on an error. */
typedef struct {
    MPI_Request *req;
    MPI_Status *status;
    int n;
} ddl_mpi_wait_t;
int ddl_mpi_done(void *arg);

#endif
