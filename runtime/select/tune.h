/* SPDX-License-Identifier: Apache-2.0 */
/* The tool interface of ddl-tune (runtime/tools/ddl-tune.c): what a tuning
 * run asks of a communicator, so that the tool reads no internal state
 * (core/comm.h).  A run measures the cost model's numbers on the allocation,
 * then makes calls of each size until online selection has decided it, and
 * writes the decisions as a tuning file (core/tuning.h's format). */
#ifndef DDL_TUNE_H
#define DDL_TUNE_H

#include <stddef.h>
#include <stdio.h>

#include "ddl.h"

/* What this rank does in a tuning run. */
typedef enum {
    DDL_TUNE_CALL,    /* makes the calls: owners, and helpers in collective mode */
    DDL_TUNE_SERVE,   /* a helper in serve mode: runs ddl_serve */
    DDL_TUNE_NOTHING, /* DDL_ALGO=mpi: nothing to choose (every rank answers the same) */
} ddl_tune_role_t;
ddl_tune_role_t ddl_tune_role(const ddl_comm_t *c);

/* The cost model's numbers, collective over the communicator: between nodes
 * each link class's latency and bandwidth (ping-pong between owner 0 of node
 * 0 and its neighbour in that dimension), and the host reduction's speed.
 * Every rank takes rank 0's, so that all plan the same chunks.  Every wait
 * has DDL_TIMEOUT; a failure has its message. */
ddl_status_t ddl_tune_measure_model(ddl_comm_t *c);

/* Rounds of each candidate (0: online selection's default, by size). */
void ddl_tune_set_rounds(ddl_comm_t *c, int rounds);

/* How the size class of `bytes` stands after a call. */
typedef enum { DDL_TUNE_NOT_ONLINE, DDL_TUNE_EXPLORING, DDL_TUNE_DECIDED } ddl_tune_state_t;
ddl_tune_state_t ddl_tune_state(const ddl_comm_t *c, size_t bytes);

/* A decided class: its choice ("lane/ring chunk=64K") into chosen, and into
 * timed the candidates' agreed times when there were several (else ""). */
void ddl_tune_describe(const ddl_comm_t *c, size_t bytes, char *chosen, size_t chosen_len, char *timed,
                       size_t timed_len);

/* The tuning file for the sizes measured (ascending): a comment naming the
 * layout, each class's timings, the model's links and reduction, and a band
 * per decision from each measured size to the next.  The bands go to `also`
 * too when not NULL.  Returns the bands written. */
int ddl_tune_write(const ddl_comm_t *c, const size_t *sizes, int nsizes, FILE *f, FILE *also);

#endif
