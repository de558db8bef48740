/* SPDX-License-Identifier: Apache-2.0 */
/* The choice of algorithm for each call (select.c). */
#ifndef DDL_SELECT_H
#define DDL_SELECT_H

#include <stddef.h>

#include <mpi.h>

#include "algo.h"
#include "ddl.h"

struct ddl_comm;

/* At communicator creation, after the settings and the layout: resolves
 * DDL_MPI_THRESHOLD=auto and sets up online selection (DDL_SELECT). */
ddl_status_t ddl_select_init(struct ddl_comm *c);
/* Is online selection on (DDL_SELECT=online and DDL_ALGO not mpi)? */
int ddl_select_online(const struct ddl_comm *c);
/* The algorithm of the running call (c->call) of `bytes`; under online
 * selection c->call->cand is the candidate it runs, else NULL. */
ddl_algo_id_t ddl_select_algo(struct ddl_comm *c, size_t bytes);
/* Should the running call be timed for the selection? */
int ddl_select_wants_time(const struct ddl_comm *c, size_t bytes);
/* v = the elementwise maximum of every rank of comm's v (n numbers, at most
 * DDL_ONLINE_MAX_CANDIDATES: the timings of online selection and
 * DDL_EXPLORE).  Each rank sends its numbers to comm's rank 0, which answers
 * with the maxima.  Point to point, not an MPI
 * collective, so that a rank that never comes is known: rank 0 waits
 * DDL_TIMEOUT, then answers with that rank's number instead, and every rank's
 * DDL_ERR_TIMED_OUT names it; the others wait a little longer than rank 0 for
 * its answer. */
ddl_status_t ddl_agree_max(struct ddl_comm *c, MPI_Comm comm, double *v, int n);
/* After the running call ended with st: its time (negative: not timed) goes to
 * the selection, which may agree with the other ranks now (a collective over
 * the ranks that choose).  Returns st, or the agreement's failure. */
ddl_status_t ddl_select_record(struct ddl_comm *c, size_t bytes, double seconds, ddl_status_t st);

#endif
