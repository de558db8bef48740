/* SPDX-License-Identifier: Apache-2.0 */
/* What a rank of the node sees of a lane call (lane_path.c): the owners'
 * buffers for this round, and how its slice of them is reduced into a chunk
 * and written back.  The allreduce's slice is of the message; the
 * reduce-scatter's and the allgather's is of the node's region, the node's G
 * blocks of `block` elements each (lane_blocks.c). */
#ifndef DDL_LANE_VIEW_H
#define DDL_LANE_VIEW_H

#include <stddef.h>

#include "ddl.h"
#include "ddl_limits.h"
#include "reduce.h"

typedef struct {
    const char *in[DDL_MAX_GPUS];
    char *out[DDL_MAX_GPUS];
    int gpus;
    size_t esize;
    ddl_dtype_t dtype;
    ddl_redop_t op;
    int divisor; /* DDL_REDOP_AVG: GPUs in the job; else 1 */
    ddl_reduce_fn_t fn;
    int stream; /* out-of-place outputs take streaming stores */
    /* Reduce-scatter and allgather (coll, ddl_coll_t). */
    int coll;
    int node, nnodes;
    size_t block;                  /* elements of each GPU's block in this round */
    size_t in_stride[DDL_MAX_GPUS];  /* elements from one block of a reduce-scatter's input to the next */
    size_t out_stride[DDL_MAX_GPUS]; /* the same for an allgather's output */
} lane_view_t;

/* The chunk buffer of elements [off, off + n) of the node's region: one
 * piece of n elements per node, node m's at ddl_lane_piece(v, m) x n.  The
 * reduce-scatter fills every piece (node m's blocks, reduced over this
 * node's owners); the allgather this node's (its owners' own data). */
void ddl_lane_blocks_fill(const lane_view_t *v, size_t off, size_t n, char *buf);
/* After the ring's half between nodes: the reduce-scatter's own piece into
 * its owners' outputs; every piece of the allgather into every owner's. */
void ddl_lane_blocks_drain(const lane_view_t *v, size_t off, size_t n, char *buf);

/* One node's allgather of elements [off, off + n) of the region: each
 * owner's data straight into every owner's output (no chunk to fill). */
void ddl_lane_blocks_gather_node(const lane_view_t *v, size_t off, size_t n);

/* Where node m's piece lies in a chunk: a ring's reduce-scatter pass leaves
 * node i with block (i + 1) mod P (algo/inter_ring.c), and its allgather
 * pass starts from there. */
static inline size_t ddl_lane_piece(const lane_view_t *v, int m)
{
    return (size_t)((m + 1) % v->nnodes);
}

#endif
