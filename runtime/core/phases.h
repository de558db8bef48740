/* SPDX-License-Identifier: Apache-2.0 */
/* A lane call's phases, in order, and their names (ddl_comm_phases, the
 * TRACE log, DDL_TRACE's events).  DDL_PH_REDUCE to DDL_PH_WRITE_BACK are the
 * stages of the chunk pipeline between nodes (algo/pipeline.h), parts of
 * DDL_PH_NODES.  The next two measure a call's fixed cost before its data
 * moves, across the others: "queued" from a request's posting to the lane
 * path taking it up (0 for a blocking call), "start" from there to the first
 * chunk handed to the transport (one node: to the node's reduce).  "early"
 * counts the calls whose first chunk left before the owners' exchange of
 * signatures (algo/lane_early.c), and their time from then until the
 * exchange ended: the wait for the other nodes that the first chunk's
 * transfer now overlaps. */
#ifndef DDL_PHASES_H
#define DDL_PHASES_H

enum { DDL_PH_COPY_IN, DDL_PH_BARRIER_IN, DDL_PH_SIGNATURES, DDL_PH_NODES, DDL_PH_BARRIER_OUT, DDL_PH_COPY_OUT,
       DDL_PH_REDUCE, DDL_PH_WAIT, DDL_PH_WRITE_BACK, DDL_PH_QUEUED, DDL_PH_START, DDL_PH_EARLY, DDL_PH_COUNT };
#define DDL_STAGE_NAMES "intra-node reduce", "wait between nodes", "write-back"
#define DDL_PHASE_NAMES \
    "copy in", "node barrier", "signatures", "reduce and exchange", "results barrier", "copy out", DDL_STAGE_NAMES, \
    "queued", "start", "early"
extern const char *const ddl_phase_names[DDL_PH_COUNT]; /* core/comm.c */

#endif
