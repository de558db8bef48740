/* SPDX-License-Identifier: Apache-2.0 */
/* The chunk pipeline, written once for every path between nodes: chunk k is
 * reduced into slot k % depth (fill) and handed to the transport; chunk
 * k - depth + 1 is then finished and written back (drain), so that `depth`
 * (DDL_INFLIGHT) chunks are in flight and the reduction of one, the transfer of
 * the next and the write-back overlap. */
#ifndef DDL_PIPELINE_H
#define DDL_PIPELINE_H

#include "chunks.h"
#include "transport.h"

struct ddl_comm;

typedef struct {
    /* Reduce the node's elements [off, off + n) of the slice into slot's
     * buffer; *buf: that buffer, as the transport takes it. */
    ddl_status_t (*fill)(void *ctx, int slot, size_t off, size_t n, void **buf);
    /* buf holds the lane's result for [off, off + n): write it to the owners. */
    ddl_status_t (*drain)(void *ctx, int slot, size_t off, size_t n, void *buf);
    void *ctx;
} ddl_pipeline_ops_t;

/* The chunks of plan (offsets relative to `off`) through transport t.  The
 * call's signature, on its way between nodes, is waited for after the first
 * chunk has been filled, before anything moves. */
ddl_status_t ddl_pipeline_run(struct ddl_comm *c, const ddl_transport_t *t, const ddl_chunks_t *plan, size_t off,
                              ddl_dtype_t dtype, ddl_redop_t op, const ddl_pipeline_ops_t *ops);

#endif
