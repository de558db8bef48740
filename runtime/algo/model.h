/* SPDX-License-Identifier: Apache-2.0 */
/* The alpha-beta cost model that chooses between-node algorithms and chunk
 * sizes.  A message of b bytes over a link costs alpha + b * beta; reducing b
 * bytes on the host costs b * gamma.  For P ranks of a lane (one per node):
 *
 *   ring  2 (P-1) alpha + 2 (P-1)/P b beta + (P-1)/P b gamma
 *   rd    s alpha + s b (beta + gamma),            s = log2 P (+2 when P is not a power of two)
 *   rab   2 log2 P' alpha + 2 (P'-1)/P' b beta + (P'-1)/P' b gamma  (+2 alpha + 2 b beta + b gamma
 *         when P is not a power of two, P' = its power-of-two core)
 *
 * Links have one (alpha, beta) per grid dimension: dimension 0 is the lane's
 * ring over all nodes, 1.. the multiring grid's node dimensions (nodes of a
 * rack, racks, ...).  The numbers come from the tuning file's `link` and
 * `reduce` lines, which ddl-tune measures on the allocation; without them, from
 * the defaults below, measured on the emulated 1 Gbit/s cluster
 * (bench/JOURNAL.md). */
#ifndef DDL_MODEL_H
#define DDL_MODEL_H

#include <stddef.h>

#include "grid.h"
#include "tuning.h" /* the model's numbers (ddl_model_t), as the tuning file carries them */

/* Rabenseifner is chosen only when the model makes it this much faster than
 * the ring (its row in inter_algos.def says why): measured on 2 emulated racks, where it took
 * 1.6x to 2x the ring's time (bench/JOURNAL.md). */
#define DDL_MODEL_RAB_MARGIN (1.0 / 0.8)

/* Each lane algorithm's cost (ddl_model_ring, _rd, _rab) is declared with its
 * row (inter.h) and defined in its file (inter_ring.c, inter_rd.c,
 * inter_rab.c). */

/* The cheapest lane algorithm (a row of inter_algos.def, by its cost and
 * margin) for a chunk of `bytes` over p nodes; *cost gets its modelled seconds when not NULL. */
int ddl_model_lane_algo(const ddl_model_t *m, int p, double bytes, double *cost);

/* The cheapest per-dimension choice for a chunk of `bytes` on grid g (every
 * combination of ring and rd over dimensions 1..ndims-1); returns its cost. */
double ddl_model_multiring(const ddl_model_t *m, const ddl_grid_t *g, double bytes, unsigned char algo[]);
/* The cost of a given per-dimension choice. */
double ddl_model_multiring_cost(const ddl_model_t *m, const ddl_grid_t *g, double bytes, const unsigned char algo[]);

/* Chunk size for pipelining a slice of `bytes` between nodes, along the lane
 * ring over p nodes (grid NULL) or along a multiring grid, for a node of
 * `gpus` GPUs.  A chunk's trip is a row of stages: the lane's thread (reducing
 * it across the G buffers, G - 1 passes or one copy for G = 1, and later
 * writing it back to the G buffers: one stage, since one thread does both),
 * then the transfers (the lane's ring; or each dimension's reduce-scatter
 * inward and allgather outward, on the block left by the inner dimensions).
 * With chunks of c bytes the call costs about (bytes / c) A + bytes B + c G: A
 * is the stages' latency per chunk, B the slowest stage's time per byte, and G
 * the other stages' time per byte (the pipeline's fill and drain).  The total
 * is least at c = sqrt(bytes A / G), kept between 64 KiB and max_chunk, in 4
 * KiB steps. */
size_t ddl_model_chunk(const ddl_model_t *m, const ddl_grid_t *grid, int p, int gpus, size_t bytes, size_t max_chunk);
/* The model's time for a lane's slice of `bytes` in chunks of `chunk`: per
 * chunk the slower of the lane's thread (as above) and its transfers (the
 * model's choice of algorithm, or of per-dimension algorithms on grid), every
 * chunk, plus the faster of the two once (the pipeline's fill and drain). */
double ddl_model_lane_time(const ddl_model_t *m, const ddl_grid_t *grid, int p, int gpus, double bytes, double chunk);

#endif
