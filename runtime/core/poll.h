/* SPDX-License-Identifier: Apache-2.0 */
/* Waiting with a deadline: the one wait of the runtime (ddl_wait_until; where a
 * communicator waits, through ddl_comm_wait, comm.h, which adds the
 * communicator's failure protocol), its step for MPI requests, and the one
 * message a timeout gets.  Below the node's control block, which sleeps on
 * its own futex word but says its timeouts in the same words. */
#ifndef DDL_POLL_H
#define DDL_POLL_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

#include "ddl.h"

/* What a wait is and how it ends, for ddl_wait_until. */
typedef struct {
    /* Opens the timeout's message: "ddl_allreduce: the owners' exchange of
     * signatures"; NULL: a probe for something that may not come (a
     * peer's word on why it failed), whose timeout is no error. */
    const char *what;
    double timeout;               /* seconds (DDL_TIMEOUT) */
    const _Atomic int32_t *abort; /* the node's abort flag; NULL: none */
    /* After a timeout only: whom the wait was for, into buf ("rank 3 on n1
     * (an owner)"), read from step's arg; NULL: no one to name. */
    void (*waiting_for)(void *arg, char *buf, size_t len);
    /* After whom: what the reader may do or suspect ("it may have stopped
     * calling ddl_allreduce"); NULL: nothing. */
    const char *hint;
} ddl_wait_how_t;

/* The one wait: polls step(arg) until it returns 1 (done) or a negative
 * ddl_status_t (poll.c says how it spins, then naps), checking the deadline
 * (timeout seconds from its first check) and the abort flag.  Returns
 * DDL_OK; step's status; DDL_ERR_PEER_FAILED, without a message, when the
 * abort flag was raised (the node's failed rank says why, comm.h); or
 * DDL_ERR_TIMED_OUT with the one timeout message (ddl_timed_out; none for
 * a probe). */
ddl_status_t ddl_wait_until(const ddl_wait_how_t *w, int (*step)(void *arg), void *arg);

/* The one timeout message: "<what> timed out after T s (DDL_TIMEOUT)",
 * then ", waiting for <whom>" (whom NULL or "": none), then "; <why>" (why
 * NULL or "": none); returns DDL_ERR_TIMED_OUT.  Also for a timeout learnt
 * from a peer (the rank that waited tells the others whom it missed). */
ddl_status_t ddl_timed_out(const char *what, double timeout, const char *whom, const char *why);

/* The wait step for MPI requests: 1 once all n are complete (their
 * statuses in status, when not NULL), DDL_ERR_MPI on an error. */
typedef struct {
    MPI_Request *req;
    MPI_Status *status;
    int n;
} ddl_mpi_wait_t;
int ddl_mpi_done(void *arg);

#endif
