/* SPDX-License-Identifier: Apache-2.0 */
/* The lane algorithms between nodes, as one table that the step lists
 * (lane_steps.c), the cost model (select/model.c), DDL_EXPLORE
 * (select/explore.c) and ddl-tune all iterate: a new algorithm is its step
 * builder (one file, e.g. inter_ring.c) and one row in inter.c. */
#ifndef DDL_INTER_H
#define DDL_INTER_H

#include <stddef.h>

#include "algo.h"
#include "model.h"
#include "steps.h"

typedef struct {
    ddl_inter_algo_id_t id; /* what DDL_LANE_ALGO and tuning bands name (ddl_inter_algo_names) */
    /* The steps of rank `rank` of `size` for a chunk of n elements; their number. */
    int (*build)(int rank, int size, size_t n, ddl_step_t *steps);
    /* The cost model's time for `bytes` among p ranks along dimension dim. */
    double (*cost)(const ddl_model_t *m, int dim, int p, double bytes);
    /* The model chooses it only when it beats the others by this factor. */
    double margin;
} ddl_inter_algo_t;

#define DDL_INTER_ALGOS 3
extern const ddl_inter_algo_t ddl_inter_algos[DDL_INTER_ALGOS];

/* The row of id; NULL for DDL_INTER_AUTO or an unknown id. */
const ddl_inter_algo_t *ddl_inter_algo(int id);

/* What a chunk's steps are built from: the lane ring over all nodes (grid
 * NULL) with lane_algo, or the multiring along grid with dim_algo; what is
 * left open (DDL_INTER_AUTO, dim_algo NULL) the model chooses per chunk, for
 * one lane's share of it: a chunk carries `lanes` lanes' data (1 in the
 * runtime; ddl-sim's --fold). */
typedef struct {
    const ddl_model_t *model;
    const ddl_grid_t *grid;
    int lane_algo;
    const unsigned char *dim_algo;
    int lanes;
} ddl_step_plan_t;

/* The steps of node `node` of nnodes for a chunk of n elements of esize bytes;
 * their number.  *algo (lane ring) or dims[1..] (multiring) get the choice. */
int ddl_steps_build(const ddl_step_plan_t *p, int node, int nnodes, size_t n, size_t esize, ddl_step_t *steps,
                    int *algo, unsigned char dims[DDL_GRID_MAX_DIMS]);

#endif
