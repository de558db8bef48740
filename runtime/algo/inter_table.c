/* SPDX-License-Identifier: Apache-2.0 */
/* The table of lane algorithms between nodes: the rows of inter_algos.def,
 * and what is asked of it (inter.h).  Below the cost model, which weighs the
 * rows, and the step building, which asks the model. */
#include "config.h"

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
