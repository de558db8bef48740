/* SPDX-License-Identifier: Apache-2.0 */
/* DDL_EXPLORE, PowerAI DDL's p: mode: instead of the cost model, the first
 * calls of each chunk size time the candidates and later calls keep the
 * fastest.  Dimension by dimension from the innermost out (the lane's ring over
 * all nodes is one dimension: ring, rd, rab; each multiring dimension: ring, rd),
 * each candidate runs once with the dimensions already decided fixed and the
 * undecided ones on the ring; what counts is the time spent in that dimension
 * and the ones outside it (their blocks depend on the choice).  Every exploring
 * call ends with an MPI_Allreduce of the times over all ranks, so every rank
 * takes the same decision. */
#ifndef DDL_EXPLORE_H
#define DDL_EXPLORE_H

#include <stddef.h>

#include "algo.h"
#include "ddl.h"
#include "grid.h"
#include "node.h"

#define DDL_EXPLORE_BUCKETS 64 /* by log2 of the chunk bytes */
/* Each lane algorithm (inter_algos.def), or a grid dimension's ring and rd. */
#define DDL_EXPLORE_CANDIDATES (DDL_INTER_ALGOS > 2 ? DDL_INTER_ALGOS : 2)

typedef struct {
    int dim;        /* the dimension being explored; past the last: decided */
    int trial;      /* the candidate the next exploring call runs */
    double t[DDL_EXPLORE_CANDIDATES];
    unsigned char algo[DDL_GRID_MAX_DIMS]; /* decided and trial choices */
} ddl_explore_bucket_t;

typedef struct ddl_explore {
    ddl_explore_bucket_t b[DDL_EXPLORE_BUCKETS];
    int started[DDL_EXPLORE_BUCKETS];
    double before[DDL_GRID_MAX_DIMS]; /* the per-dimension seconds when the call started */
} ddl_explore_t;

/* Fill the plan of a call whose chunks hold about chunk_bytes: the candidate
 * to time (plan->explore = its bucket), or the decision once there is one.
 * grid is NULL for the lane algorithm. */
void ddl_explore_plan(ddl_explore_t *e, const ddl_grid_t *grid, size_t chunk_bytes, ddl_call_plan_t *plan);

struct ddl_comm;
/* At the start of an exploring call (every rank): remember the counters. */
void ddl_explore_begin(struct ddl_comm *c);
/* At its end (every rank, collective over the communicator): record the time. */
ddl_status_t ddl_explore_record(struct ddl_comm *c, const ddl_call_plan_t *plan);

#endif
