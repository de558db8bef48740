/* SPDX-License-Identifier: Apache-2.0 */
/* The path each call takes (route.c): the selection's choice, applied per call. */
#ifndef DDL_ROUTE_H
#define DDL_ROUTE_H

#include <stddef.h>

#include <mpi.h>

#include "algo.h"
#include "call.h"
#include "ddl.h"

struct ddl_comm;

/* At communicator creation, after the settings and the layout: resolves
 * DDL_MPI_THRESHOLD=auto and sets up online selection (DDL_SELECT). */
ddl_status_t ddl_select_init(struct ddl_comm *c);
/* Is online selection on (DDL_SELECT=online and DDL_ALGO not mpi)? */
int ddl_select_online(const struct ddl_comm *c);
/* The algorithm of call, of `bytes`; under online selection call->cand is
 * the candidate it runs, else NULL (call->mpi_form: the MPI path's form,
 * ddl_mpi_form_t). */
ddl_algo_id_t ddl_select_algo(struct ddl_comm *c, ddl_call_t *call, size_t bytes);
/* Should call be timed for the selection? */
int ddl_select_wants_time(const struct ddl_comm *c, const ddl_call_t *call, size_t bytes);
/* The lane path for call (multiring: on the grid): its plan (algorithm and
 * chunk: tuning band, settings, the model, online selection's candidate) and
 * the lane allreduce.  Serve-mode helpers (ddl_serve) come here too and follow
 * their owner's plan. */
ddl_status_t ddl_route_lane(struct ddl_comm *c, ddl_call_t *call, int multiring);
/* After call ended with st: its time (negative: not timed) goes to
 * the selection, which may agree with the other ranks now (a collective over
 * the ranks that choose).  Returns st, or the agreement's failure. */
ddl_status_t ddl_select_record(struct ddl_comm *c, const ddl_call_t *call, size_t bytes, double seconds,
                               ddl_status_t st);
/* What an owner tells its collective-mode helpers it recorded (its doorbell
 * carries it, ddl_node_ring_outcome): a call of `bytes` of collective coll,
 * one number per collective and size class. */
int ddl_select_owner_class(ddl_coll_t coll, size_t bytes);
/* A collective-mode helper's record of the call its owner recorded
 * (ddl_select_owner_class; -1: none): the same bookkeeping and agreements,
 * with no time of its own. */
ddl_status_t ddl_select_replay(struct ddl_comm *c, int owner_class);

#endif
