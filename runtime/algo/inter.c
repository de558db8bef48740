/* SPDX-License-Identifier: Apache-2.0 */
/* The table of lane algorithms between nodes (the rows of
 * inter_algos.def), and the one place a chunk's steps are built from it
 * (inter.h). */
#include "config.h"

#include <string.h>

#include "inter.h"

const ddl_inter_algo_t ddl_inter_algos[DDL_INTER_ALGOS] = {
#define DDL_INTER_ROW(ID, name, build, max_steps, cost, margin, online_min, online_max, description) \
    {DDL_INTER_##ID, build, max_steps, cost, margin, online_min, online_max},
#include "inter_algos.def"
#undef DDL_INTER_ROW
};

const ddl_inter_algo_t *ddl_inter_algo(int id)
{
    for (int i = 0; i < DDL_INTER_ALGOS; i++)
        if ((int)ddl_inter_algos[i].id == id)
            return &ddl_inter_algos[i];
    return NULL;
}

int ddl_inter_algo_candidate(const ddl_inter_algo_t *a, int nnodes)
{
    return nnodes >= a->online_min_nodes && (a->online_max_nodes == 0 || nnodes <= a->online_max_nodes);
}

int ddl_inter_max_steps(int nnodes, const ddl_grid_t *grid)
{
    int most = grid && grid->ndims ? ddl_multiring_max_steps(grid) : 0;
    for (int i = 0; i < DDL_INTER_ALGOS; i++)
        if (ddl_inter_algos[i].max_steps(nnodes) > most)
            most = ddl_inter_algos[i].max_steps(nnodes);
    return most;
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
