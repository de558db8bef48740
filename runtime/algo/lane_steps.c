/* SPDX-License-Identifier: Apache-2.0 */
/* The lane's step list for one chunk between the nodes: the algorithm a
 * tuning band or DDL_LANE_ALGO fixed, or the cost model's choice for the
 * chunk's size (ring, recursive doubling, Rabenseifner; the multiring along a
 * DDL_TOPOLOGY grid).  Transports that run step lists (transport/host_mpi.c)
 * execute it. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "algo.h"
#include "inter.h"
#include "comm.h"
#include "log.h"
#include "model.h"

/* At INFO, rank 0 says once per power-of-two chunk size what the model chose and why. */
static void log_model_choice(ddl_comm_t *c, size_t bytes, int algo, const unsigned char *dims)
{
    int bucket = ddl_log2_floor(bytes);
    if (c->info.rank != 0 || (c->model_logged >> bucket) & 1)
        return;
    c->model_logged |= 1ull << bucket;
    const ddl_model_t *m = &c->set.tuning.model;
    if (!c->call->plan.multiring) {
        int p = c->info.nnodes;
        char costs[128] = "";
        for (int i = 0, len = 0; i < DDL_INTER_ALGOS; i++)
            len += snprintf(costs + len, sizeof(costs) - (size_t)len, "%s%s %.0f us", i ? ", " : "",
                            ddl_inter_algo_names[ddl_inter_algos[i].id],
                            ddl_inter_algos[i].cost(m, 0, p, (double)bytes) * 1e6);
        DDL_INFO(DDL_SUBSYS_COLL, "chunks of about %zu bytes between %d nodes: %s (cost model: %s)", (size_t)1 << bucket, p,
                 ddl_inter_algo_names[algo], costs);
        return;
    }
    char which[96] = "";
    for (int d = 1, len = 0; d < c->set.grid.ndims; d++)
        len += snprintf(which + len, sizeof(which) - (size_t)len, "%s%s", d > 1 ? "," : "", dims[d] ? "rd" : "ring");
    unsigned char all_ring[DDL_GRID_MAX_DIMS] = {0};
    DDL_INFO(DDL_SUBSYS_COLL, "chunks of about %zu bytes on the %d-dimension grid: dims=%s (cost model: %.0f us; all "
             "rings %.0f us)", (size_t)1 << bucket, c->set.grid.ndims - 1, which,
             ddl_model_multiring_cost(m, &c->set.grid, (double)bytes, dims) * 1e6,
             ddl_model_multiring_cost(m, &c->set.grid, (double)bytes, all_ring) * 1e6);
}

ddl_status_t ddl_lane_steps(ddl_comm_t *c, size_t n, size_t esize, ddl_step_t *steps, int *nsteps_out)
{
    int rank = c->info.node, size = c->info.nnodes;
    const ddl_model_t *model = &c->set.tuning.model;
    int nsteps, algo = c->call->plan.lane_algo;
    int modelled = algo == DDL_INTER_AUTO && !c->call->plan.multiring;
    if (modelled) /* the model decides per chunk */
        algo = ddl_model_lane_algo(model, size, (double)(n * esize), NULL);
    unsigned char dims[DDL_GRID_MAX_DIMS];
    if (c->call->plan.multiring) {
        modelled = !c->call->plan.dims_fixed;
        if (c->call->plan.dims_fixed)
            memcpy(dims, c->call->plan.dim_algo, sizeof(dims));
        else
            ddl_model_multiring(model, &c->set.grid, (double)(n * esize), dims);
    }
    if (modelled)
        log_model_choice(c, n * esize, algo, dims);
    const ddl_inter_algo_t *row = ddl_inter_algo(algo);
    if (c->call->plan.multiring)
        nsteps = ddl_multiring_build(rank, &c->set.grid, dims, n, steps);
    else
        nsteps = (row ? row : &ddl_inter_algos[0])->build(rank, size, n, steps); /* the ring, as before the table */
    /* Between two or more nodes every chunk moves: no steps would leave this
     * node's partial sums as the "result". */
    if (nsteps <= 0 && size > 1 && n > 0)
        return ddl_error(DDL_ERR_INTERNAL, "internal error: the %s schedule between %d nodes has no steps for a chunk "
                         "of %zu elements; please report it with DDL_DEBUG=INFO output",
                         c->call->plan.multiring ? "multiring" : ddl_inter_algo_names[algo], size, n);
    *nsteps_out = nsteps;
    return DDL_OK;
}

