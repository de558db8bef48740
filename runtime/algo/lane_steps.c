/* SPDX-License-Identifier: Apache-2.0 */
/* The lane's step list for one chunk between the nodes: the algorithm a
 * tuning band or DDL_LANE_ALGO fixed, or the cost model's choice for the
 * chunk's size (ring, recursive doubling, Rabenseifner; the multiring along a
 * DDL_TOPOLOGY grid).  Transports that run step lists (transport/host_p2p.c)
 * execute it. */
#include "config.h"

#include <stdio.h>

#include "algo.h"
#include "comm.h"
#include "inter.h"
#include "log.h"
#include "model.h"
#include "paths.h"

/* At INFO, rank 0 says once per power-of-two chunk size what the model chose and why. */
static void log_model_choice(ddl_comm_t *c, int multiring, size_t bytes, int algo, const unsigned char *dims)
{
    int bucket = ddl_log2_floor(bytes);
    if (c->info.rank != 0 || (c->model_logged >> bucket) & 1)
        return;
    c->model_logged |= 1ull << bucket;
    const ddl_model_t *m = &c->set.tuning.model;
    if (!multiring) {
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

/* A reduce-scatter's or allgather's chunk: the ring's one half over the
 * nodes, one piece of the chunk per node (algo/lane_view.h). */
static int ring_half(const ddl_comm_t *c, int coll, size_t n, ddl_step_t *steps)
{
    int node = c->info.node, nnodes = c->info.nnodes;
    return ddl_ring_pass(node, nnodes, (node + 1) % nnodes, (node + nnodes - 1) % nnodes, 0, n,
                         coll == DDL_COLL_ALLGATHER, 0, steps);
}

ddl_status_t ddl_lane_steps(ddl_comm_t *c, const ddl_call_plan_t *cp, size_t n, size_t esize, ddl_step_t *steps,
                            int *nsteps_out)
{
    if (cp->coll != DDL_COLL_ALLREDUCE) {
        *nsteps_out = ring_half(c, cp->coll, n, steps);
        return DDL_OK;
    }
    ddl_step_plan_t plan = {&c->set.tuning.model, cp->multiring ? &c->set.grid : NULL, cp->lane_algo,
                            cp->multiring && cp->dims_fixed ? cp->dim_algo : NULL, 1};
    int algo;
    unsigned char dims[DDL_GRID_MAX_DIMS];
    int nsteps = ddl_steps_build(&plan, c->info.node, c->info.nnodes, n, esize, steps, &algo, dims);
    if (cp->multiring ? !cp->dims_fixed : cp->lane_algo == DDL_INTER_AUTO) /* the model decided */
        log_model_choice(c, cp->multiring, n * esize, algo, dims);
    /* Between two or more nodes every chunk moves: no steps would leave this
     * node's partial sums as the "result". */
    if (nsteps <= 0 && c->info.nnodes > 1 && n > 0)
        return ddl_error(DDL_ERR_INTERNAL, "internal error: the %s schedule between %d nodes has no steps for a chunk "
                         "of %zu elements; please report it with DDL_DEBUG=INFO output",
                         cp->multiring ? "multiring" : ddl_inter_algo_names[algo], c->info.nnodes, n);
    *nsteps_out = nsteps;
    return DDL_OK;
}
