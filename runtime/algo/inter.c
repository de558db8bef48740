/* SPDX-License-Identifier: Apache-2.0 */
/* The one place a chunk's steps between nodes are built (inter.h): from the
 * plan's grid, its algorithm, or the cost model's choice among the rows of
 * the table (inter_table.c). */
#include "config.h"

#include <string.h>

#include "inter.h"

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
