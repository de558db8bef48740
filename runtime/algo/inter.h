/* SPDX-License-Identifier: Apache-2.0 */
/* The lane algorithms between nodes, as one table built from the rows of
 * inter_algos.def, which the step lists (lane_steps.c), the step arrays
 * (root/create.c), the cost model (model.c), online selection
 * (select/online.c), ddl-info and ddl-sim iterate: a new
 * algorithm is its file (e.g. inter_rd.c) and one row there. */
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
    /* A bound on build's number of steps for `size` ranks. */
    int (*max_steps)(int size);
    /* The cost model's time for `bytes` among p ranks along dimension dim. */
    double (*cost)(const ddl_model_t *m, int dim, int p, double bytes);
    /* The model chooses it only when it beats the others by this factor. */
    double margin;
    /* Online selection times it on online_min_nodes nodes and more, up to
     * online_max_nodes (0: no limit); DDL_EXPLORE times every row. */
    int online_min_nodes, online_max_nodes;
} ddl_inter_algo_t;

/* Each row's functions (defined in its file). */
#define DDL_INTER_ROW(ID, name, build, max_steps, cost, ...) \
    int build(int rank, int size, size_t n, ddl_step_t *steps); \
    int max_steps(int size); \
    double cost(const ddl_model_t *m, int dim, int p, double bytes);
#include "inter_algos.def"
#undef DDL_INTER_ROW

/* One ring pass over m ranks (this one at index i, with its right and left
 * neighbours) on elements [off, off + n): the reduce-scatter (after which index
 * i holds block (i + 1) % m of the m slices) or the allgather.  m - 1 steps.
 * The ring's rows and the multiring share it. */
int ddl_ring_pass(int i, int m, int right, int left, size_t off, size_t n, int gather, int dim, ddl_step_t *steps);
/* The multiring along grid g (not a row: its choice is per dimension).
 * dim_algo[d] (d >= 1): ddl_dim_algo_t of dimension d. */
int ddl_multiring_max_steps(const ddl_grid_t *g);
int ddl_multiring_build(int node, const ddl_grid_t *g, const unsigned char *dim_algo, size_t n, ddl_step_t *steps);

/* Row i has id i + 1 (DDL_INTER_<ID>). */
extern const ddl_inter_algo_t ddl_inter_algos[DDL_INTER_ALGOS];

/* The row of id; NULL for DDL_INTER_AUTO or an unknown id. */
const ddl_inter_algo_t *ddl_inter_algo(int id);
/* Does online selection time row `a` on nnodes nodes? */
int ddl_inter_algo_candidate(const ddl_inter_algo_t *a, int nnodes);
/* The most steps any row, or the multiring on grid (when not NULL), builds
 * for nnodes ranks: the size of a schedule's step array. */
int ddl_inter_max_steps(int nnodes, const ddl_grid_t *grid);

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
