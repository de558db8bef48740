/* SPDX-License-Identifier: Apache-2.0 */
/* The chunk pipeline, written once for every path between nodes: chunk k is
 * reduced into slot k % depth (fill) and handed to the transport; chunk
 * k - depth + 1 is then finished and written back (drain), so that `depth`
 * (DDL_INFLIGHT) chunks are in flight and the reduction of one, the transfer of
 * the next and the write-back overlap.  The driver (ddl_pipeline_drive) knows
 * no communicator, so that ddl-sim (bench/sim) runs the same order of stages
 * on a simulated platform. */
#ifndef DDL_PIPELINE_H
#define DDL_PIPELINE_H

#include "call.h"
#include "chunks.h"
#include "ddl.h"
#include "ddl_limits.h"
#include "phases.h"

/* The most chunks in flight (DDL_INFLIGHT's upper bound). */
#define DDL_PIPELINE_MAX_DEPTH DDL_INFLIGHT_MAX /* ddl_limits.h */

struct ddl_comm;
struct ddl_transport;

typedef struct {
    /* Reduce the node's elements [off, off + n) of the slice into slot's
     * buffer; *buf: that buffer, as the transport takes it. */
    ddl_status_t (*fill)(void *ctx, int slot, size_t off, size_t n, void **buf);
    /* buf holds the lane's result for [off, off + n): write it to the owners. */
    ddl_status_t (*drain)(void *ctx, int slot, size_t off, size_t n, void *buf);
    void *ctx;
} ddl_pipeline_ops_t;

/* How a chunk travels between the nodes and comes back reduced. */
typedef struct {
    ddl_status_t (*start)(void *ctx, int slot, void *buf, size_t n);
    ddl_status_t (*finish)(void *ctx, int slot, void *buf, size_t n);
    /* Once, after the first chunk is filled: before it starts, or right after
     * where early (may be NULL: never) says it may leave first; ready then
     * stops that chunk itself if it fails.  May be NULL. */
    ddl_status_t (*ready)(void *ctx);
    int (*early)(void *ctx);
    void *ctx;
} ddl_pipeline_link_t;

/* The stages whose time the driver adds up, in this order (the last three of a
 * lane call's phases, ddl_comm_phases). */
enum { DDL_STAGE_FILL, DDL_STAGE_WAIT, DDL_STAGE_DRAIN, DDL_STAGES };

/* The chunks of plan (offsets relative to `off`, elements of esize bytes) with
 * `depth` in flight; stage_seconds[DDL_STAGES] gets each stage's time added. */
ddl_status_t ddl_pipeline_drive(size_t depth, const ddl_chunks_t *plan, size_t off, size_t esize,
                                const ddl_pipeline_ops_t *ops, const ddl_pipeline_link_t *link,
                                double *stage_seconds);

/* The lane's pipeline through transport t for call (its type, op and plan):
 * the driver with the communicator's DDL_INFLIGHT and phase counters.  The
 * call's signature, on its way between nodes, is waited for after the first
 * chunk has been filled: before it leaves, or, for a call that starts early
 * (call->early), right after; always before any chunk is finished.  So is
 * the rest of the node's meeting where local rank 0 went ahead of it
 * (call->meet_rest). */
ddl_status_t ddl_pipeline_run(struct ddl_comm *c, ddl_call_t *call, const struct ddl_transport *t,
                              const ddl_chunks_t *plan, size_t off, const ddl_pipeline_ops_t *ops);

#endif
