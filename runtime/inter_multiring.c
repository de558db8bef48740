/* PowerAI DDL's multi-ring between nodes: a ring reduce-scatter along each
 * grid dimension in turn (nodes of a rack, then racks, ...), each on the block
 * the previous one left, then ring allgathers in reverse.  The outer links
 * carry the data already divided by the inner dimensions. */
#include "config.h"

#include "steps.h"
#include "slice.h"

int ddl_multiring_max_steps(const ddl_grid_t *g)
{
    int k = 0;
    for (int d = 1; d < g->ndims; d++)
        k += 2 * (g->dims[d] - 1);
    return k;
}

/* One ring pass (reduce-scatter or allgather) along dimension d. */
static int pass(int node, const ddl_grid_t *g, int d, size_t off, size_t n, int gather, ddl_step_t *steps)
{
    int m = g->dims[d], i = ddl_grid_coord(g, node, d);
    return ddl_ring_pass(i, m, ddl_grid_peer(g, node, d, (i + 1) % m), ddl_grid_peer(g, node, d, (i + m - 1) % m),
                         off, n, gather, d, steps);
}

int ddl_multiring_build(int node, const ddl_grid_t *g, size_t n, ddl_step_t *steps)
{
    size_t off[DDL_GRID_MAX_DIMS + 1], len[DDL_GRID_MAX_DIMS + 1];
    int k = 0;
    off[1] = 0;
    len[1] = n;
    for (int d = 1; d < g->ndims; d++) {
        k += pass(node, g, d, off[d], len[d], 0, steps + k);
        /* After the reduce-scatter this node holds block i + 1 of the range complete. */
        int m = g->dims[d], i = ddl_grid_coord(g, node, d);
        size_t bo, bn;
        ddl_slice(len[d], (size_t)m, (size_t)((i + 1) % m), &bo, &bn);
        off[d + 1] = off[d] + bo;
        len[d + 1] = bn;
    }
    for (int d = g->ndims - 1; d >= 1; d--)
        k += pass(node, g, d, off[d], len[d], 1, steps + k);
    return k;
}
