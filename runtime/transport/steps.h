/* SPDX-License-Identifier: Apache-2.0 */
/* Inter-node allreduce of one chunk among the ranks of a lane, as a list of
 * steps (send, receive, combine) that an executor progresses without blocking,
 * so that two chunks can be in flight while the node reduces the next one.
 * The step list and its executor are the transport's (host-p2p runs it); each
 * lane algorithm only builds a list (algo/inter_ring.c, inter_rd.c,
 * inter_rab.c, from the rows of core/inter_algos.def). */
#ifndef DDL_STEPS_H
#define DDL_STEPS_H

#include <mpi.h>
#include <stddef.h>

#include "ddl.h"
#include "grid.h"
#include "reduce.h"

typedef enum {
    DDL_COMBINE_NONE = 0,
    DDL_COMBINE_RECV_FIRST,  /* buf = op(received, buf): the sender holds the lower ranks */
    DDL_COMBINE_RECV_SECOND, /* buf = op(buf, received) */
} ddl_combine_t;

/* Offsets and lengths in elements of the chunk; a peer of -1 means no transfer. */
typedef struct ddl_step {
    int send_peer;
    size_t send_off, send_n;
    int recv_peer;
    size_t recv_off, recv_n;
    ddl_combine_t combine; /* NONE: receive into buf; else into tmp, then combine */
    int dim;               /* grid dimension it travels along (0: all nodes, one lane ring) */
} ddl_step_t;

/* The largest k with 2^k <= v (0 for v <= 1): the power-of-two core of a rank
 * count, or the size class of a byte count. */
static inline int ddl_log2_floor(size_t v)
{
    int k = 0;
    while (k + 1 < (int)(8 * sizeof(size_t)) && ((size_t)1 << (k + 1)) <= v)
        k++;
    return k;
}

/* The step lists themselves are built by the lane algorithms (algo/inter.h). */

typedef struct ddl_sched {
    MPI_Comm comm;
    int tag;           /* this chunk's messages (ddl_sched_start) */
    int early;         /* started before its call's agreement: the first step receives into tmp
                          (copied to buf where it does not combine), the one buffer that
                          ddl_sched_abandon may leave to MPI */
    ddl_step_t *steps; /* capacity fixed at init */
    int nsteps, cur, posted;
    char *buf, *tmp;
    size_t esize;
    ddl_reduce_fn_t fn;
    MPI_Request req[2];
    int nreq;
    double posted_at;
    double traced_at; /* ddl_now() at posting, with DDL_TRACE */
    ddl_dim_count_t *counts; /* [DDL_GRID_MAX_DIMS], owned by the communicator */
} ddl_sched_t;

ddl_status_t ddl_sched_init(ddl_sched_t *s, MPI_Comm comm, int max_steps, ddl_dim_count_t *counts);
void ddl_sched_fini(ddl_sched_t *s);
/* Take over a built step list on buf (with tmp as large as any receive), its
 * messages under tag; early: see ddl_sched_t. */
void ddl_sched_start(ddl_sched_t *s, int tag, int early, int nsteps, void *buf, void *tmp, size_t esize,
                     ddl_reduce_fn_t fn);
/* Advance as far as possible without blocking: 1 when done, 0 while in flight,
 * or a negative ddl_status_t. */
int ddl_sched_progress(ddl_sched_t *s);
/* The lane rank the current step waits for (-1 when none). */
int ddl_sched_waiting_for(const ddl_sched_t *s);
/* Stop an early schedule where it stands, without waiting (its call's
 * ranks disagreed, and a peer may never answer): the pending receive is
 * cancelled and both requests are left to MPI, so a receive already matched
 * may still complete into tmp, which the caller must leave to MPI too. */
void ddl_sched_abandon(ddl_sched_t *s);

#endif
