/* SPDX-License-Identifier: Apache-2.0 */
/* DDL_EXPLORE (explore.h): the first calls of each chunk size time the
 * candidates.  Uses the algorithm table, the cost model and the ranks'
 * agreement (core/agree.c). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "algo.h"
#include "comm.h"
#include "explore.h"
#include "inter.h"
#include "log.h"
#include "model.h"
#include "agree.h"
#include "steps.h"

static int bucket_of(size_t bytes)
{
    int b = ddl_log2_floor(bytes);
    return b < DDL_EXPLORE_BUCKETS ? b : DDL_EXPLORE_BUCKETS - 1;
}

/* Dimensions explored: the lane's ring (0) alone, or the grid's node dimensions. */
static int first_dim(const ddl_grid_t *g) { return g ? 1 : 0; }
static int end_dim(const ddl_grid_t *g) { return g ? g->ndims : 1; }
static int candidates(const ddl_grid_t *g) { return g ? 2 : DDL_INTER_ALGOS; }

/* Candidate k as a plan entry: multiring dimensions take ddl_dim_algo_t, the
 * lane takes ddl_inter_algo_id_t. */
#define lane_candidate(k) ((int)ddl_inter_algos[k].id)

void ddl_explore_plan(ddl_explore_t *e, const ddl_grid_t *grid, size_t chunk_bytes, ddl_call_plan_t *plan)
{
    int k = bucket_of(chunk_bytes);
    ddl_explore_bucket_t *b = &e->b[k];
    if (!e->started[k]) {
        memset(b, 0, sizeof(*b));
        b->dim = first_dim(grid);
        e->started[k] = 1;
    }
    int exploring = b->dim < end_dim(grid);
    if (exploring) {
        b->algo[b->dim] = (unsigned char)b->trial; /* undecided outer dimensions stay 0: ring */
        plan->explore = k;
    }
    if (grid) {
        plan->dims_fixed = 1;
        memcpy(plan->dim_algo, b->algo, sizeof(plan->dim_algo));
    } else {
        plan->lane_algo = lane_candidate(b->algo[0]);
    }
}

void ddl_explore_begin(ddl_comm_t *c)
{
    for (int d = 0; d < DDL_GRID_MAX_DIMS; d++)
        c->explore->before[d] = c->counts[d].seconds;
}

ddl_status_t ddl_explore_record(ddl_comm_t *c, const ddl_call_plan_t *plan)
{
    const ddl_grid_t *grid = plan->multiring ? &c->set.grid : NULL;
    ddl_explore_bucket_t *b = &c->explore->b[plan->explore];
    /* The time in the explored dimension and every dimension outside it. */
    double slowest = 0;
    for (int d = b->dim; d < end_dim(grid); d++)
        slowest += c->counts[d].seconds - c->explore->before[d];
    ddl_status_t st = ddl_agree_max(c, c->world, &slowest, 1);
    if (st != DDL_OK)
        return ddl_fail(st, "DDL_EXPLORE: %s", ddl_last_error());
    /* Serve-mode helpers follow their owners' plans and keep no exploration
     * state: they only take part in the agreement. */
    if (!c->explore->started[plan->explore])
        return DDL_OK;
    b->t[b->trial] = slowest;
    if (++b->trial < candidates(grid))
        return DDL_OK;
    int best = 0;
    for (int k = 1; k < candidates(grid); k++)
        if (b->t[k] < b->t[best])
            best = k;
    b->algo[b->dim] = (unsigned char)best;
    if (c->info.rank == 0) {
        char timed[128] = "";
        for (int k = 0, len = 0; k < candidates(grid); k++)
            len += snprintf(timed + len, sizeof(timed) - (size_t)len, "%s%s %.0f us", k ? ", " : "",
                            ddl_inter_algo_names[lane_candidate(k)], b->t[k] * 1e6);
        DDL_INFO(DDL_SUBSYS_COLL, "DDL_EXPLORE: chunks of about %zu bytes, dimension %d: %s (timed: %s)",
                 (size_t)1 << plan->explore, b->dim, ddl_inter_algo_names[lane_candidate(best)], timed);
    }
    b->dim++;
    b->trial = 0;
    return DDL_OK;
}
