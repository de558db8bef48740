/* SPDX-License-Identifier: Apache-2.0 */
/* The table of lane algorithms between nodes, and the one place a chunk's
 * steps are built from it (inter.h). */
#include "config.h"

#include <string.h>

#include "inter.h"

const ddl_inter_algo_t ddl_inter_algos[DDL_INTER_ALGOS] = {
    {DDL_INTER_RING, ddl_ring_build, ddl_model_ring, 1.0},
    {DDL_INTER_RD, ddl_rd_build, ddl_model_rd, 1.0},
    /* The model sees one link class, so Rabenseifner needs a margin over
     * the ring: measured when its first steps paired distant nodes (across
     * the uplinks, with the largest blocks).  It pairs neighbours first now
     * (inter_rab.c; ddl-sim found the cost, bench/SCALE.md); the margin stays
     * until the emulated racks measure it again. */
    {DDL_INTER_RAB, ddl_rab_build, ddl_model_rab, DDL_MODEL_RAB_MARGIN},
};

const ddl_inter_algo_t *ddl_inter_algo(int id)
{
    for (int i = 0; i < DDL_INTER_ALGOS; i++)
        if ((int)ddl_inter_algos[i].id == id)
            return &ddl_inter_algos[i];
    return NULL;
}

int ddl_steps_build(const ddl_step_plan_t *p, int node, int nnodes, size_t n, size_t esize, ddl_step_t *steps,
                    int *algo, unsigned char dims[DDL_GRID_MAX_DIMS])
{
    double lane_bytes = (double)(n * esize) / (p->lanes > 1 ? p->lanes : 1);
    if (p->grid) {
        if (p->dim_algo)
            memcpy(dims, p->dim_algo, DDL_GRID_MAX_DIMS);
        else
            ddl_model_multiring(p->model, p->grid, lane_bytes, dims);
        *algo = DDL_INTER_AUTO;
        return ddl_multiring_build(node, p->grid, dims, n, steps);
    }
    *algo = p->lane_algo == DDL_INTER_AUTO ? ddl_model_lane_algo(p->model, nnodes, lane_bytes, NULL) : p->lane_algo;
    const ddl_inter_algo_t *row = ddl_inter_algo(*algo);
    return (row ? row : &ddl_inter_algos[0])->build(node, nnodes, n, steps); /* the ring, as before the table */
}
