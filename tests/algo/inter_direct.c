/* SPDX-License-Identifier: Apache-2.0 */
/* A lane algorithm built only in tests (configure --enable-test-algos), to
 * show that a new algorithm is one file and one row (direct.def): "direct",
 * on two nodes, swaps the whole chunk with the other node in one step, and
 * both combine with the lower node's data first, so both compute the same
 * bits.  On other node counts it is recursive doubling. */
#include "config.h"

#include "inter.h"
#include "steps.h"

int ddl_direct_build(int rank, int size, size_t n, ddl_step_t *steps)
{
    if (size != 2)
        return ddl_rd_build(rank, size, n, steps);
    int peer = 1 - rank;
    steps[0] = (ddl_step_t){.send_peer = peer, .send_off = 0, .send_n = n, .recv_peer = peer, .recv_off = 0,
                            .recv_n = n, .combine = peer < rank ? DDL_COMBINE_RECV_FIRST : DDL_COMBINE_RECV_SECOND,
                            .dim = 0};
    return 1;
}

int ddl_direct_max_steps(int size) { return size == 2 ? 1 : ddl_rd_max_steps(size); }

/* One message each way and one reduction of the chunk. */
double ddl_direct_cost(const ddl_model_t *m, int dim, int p, double bytes)
{
    if (p != 2)
        return ddl_model_rd(m, dim, p, bytes);
    const ddl_link_t *l = &m->link[dim];
    return l->alpha + bytes * (l->beta + m->gamma);
}
