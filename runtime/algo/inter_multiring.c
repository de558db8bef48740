/* SPDX-License-Identifier: Apache-2.0 */
/* PowerAI DDL's multi-ring between nodes: a ring reduce-scatter along each
 * grid dimension in turn (nodes of a rack, then racks, ...), each on the block
 * the previous one left, then ring allgathers in reverse.  The outer links
 * carry the data already divided by the inner dimensions.  A dimension may use
 * recursive doubling instead: a whole allreduce of its block along that
 * dimension (log2 of its size in steps, for small blocks), after which the
 * next dimension works on the same, undivided block. */
#include "config.h"

#include <math.h>

#include "model.h"
#include "inter.h"
#include "steps.h"
#include "slice.h"

int ddl_multiring_max_steps(const ddl_grid_t *g)
{
    int k = 0;
    for (int d = 1; d < g->ndims; d++) {
        int ring = 2 * (g->dims[d] - 1), rd = ddl_rd_max_steps(g->dims[d]);
        k += ring > rd ? ring : rd;
    }
    return k;
}

/* Recursive doubling along dimension d on [off, off + n): the lane builder's
 * steps, with its ranks turned into this dimension's nodes. */
static int rd_along(int node, const ddl_grid_t *g, int d, size_t off, size_t n, ddl_step_t *steps)
{
    int k = ddl_rd_build(ddl_grid_coord(g, node, d), g->dims[d], n, steps);
    for (int s = 0; s < k; s++) {
        ddl_step_t *st = &steps[s];
        if (st->send_peer >= 0)
            st->send_peer = ddl_grid_peer(g, node, d, st->send_peer);
        if (st->recv_peer >= 0)
            st->recv_peer = ddl_grid_peer(g, node, d, st->recv_peer);
        st->send_off += off;
        st->recv_off += off;
        st->dim = d;
    }
    return k;
}

/* One ring pass (reduce-scatter or allgather) along dimension d. */
static int pass(int node, const ddl_grid_t *g, int d, size_t off, size_t n, int gather, ddl_step_t *steps)
{
    int m = g->dims[d], i = ddl_grid_coord(g, node, d);
    return ddl_ring_pass(i, m, ddl_grid_peer(g, node, d, (i + 1) % m), ddl_grid_peer(g, node, d, (i + m - 1) % m),
                         off, n, gather, d, steps);
}

int ddl_multiring_build(int node, const ddl_grid_t *g, const unsigned char *dim_algo, size_t n, ddl_step_t *steps)
{
    size_t off[DDL_GRID_MAX_DIMS + 1], len[DDL_GRID_MAX_DIMS + 1];
    int k = 0;
    off[1] = 0;
    len[1] = n;
    for (int d = 1; d < g->ndims; d++) {
        if (dim_algo[d] == DDL_DIM_RD) {
            k += rd_along(node, g, d, off[d], len[d], steps + k);
            off[d + 1] = off[d];
            len[d + 1] = len[d];
            continue;
        }
        k += pass(node, g, d, off[d], len[d], 0, steps + k);
        /* After the reduce-scatter this node holds block i + 1 of the range complete. */
        int m = g->dims[d], i = ddl_grid_coord(g, node, d);
        size_t bo, bn;
        ddl_slice(len[d], (size_t)m, (size_t)((i + 1) % m), &bo, &bn);
        off[d + 1] = off[d] + bo;
        len[d + 1] = bn;
    }
    for (int d = g->ndims - 1; d >= 1; d--)
        if (dim_algo[d] != DDL_DIM_RD)
            k += pass(node, g, d, off[d], len[d], 1, steps + k);
    return k;
}

double ddl_model_multiring_cost(const ddl_model_t *m, const ddl_grid_t *g, double bytes, const unsigned char algo[])
{
    /* Reduce-scatters inward divide the block by each ring dimension; the
     * allgathers on the way out cost what the reduce-scatters did, which the
     * ring formula already counts. */
    double t = 0, block = bytes;
    for (int d = 1; d < g->ndims; d++) {
        int p = g->dims[d];
        if (algo[d] == DDL_DIM_RD) {
            t += ddl_model_rd(m, d, p, block);
        } else {
            t += ddl_model_ring(m, d, p, block);
            block /= p;
        }
    }
    return t;
}

double ddl_model_multiring(const ddl_model_t *m, const ddl_grid_t *g, double bytes, unsigned char algo[])
{
    int n = g->ndims > 1 ? g->ndims - 1 : 0;
    double best = INFINITY;
    unsigned char trial[DDL_GRID_MAX_DIMS] = {0};
    for (unsigned mask = 0; mask < (1u << n); mask++) {
        for (int d = 1; d <= n; d++)
            trial[d] = (mask >> (d - 1)) & 1 ? DDL_DIM_RD : DDL_DIM_RING;
        double t = ddl_model_multiring_cost(m, g, bytes, trial);
        if (t < best) {
            best = t;
            for (int d = 0; d < DDL_GRID_MAX_DIMS; d++)
                algo[d] = d <= n ? trial[d] : DDL_DIM_RING;
        }
    }
    algo[0] = DDL_DIM_RING;
    return n ? best : 0;
}
