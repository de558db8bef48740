/* SPDX-License-Identifier: Apache-2.0 */
/* The multi-ring grid (PowerAI DDL's "4x16x4": GPUs per node x nodes per rack x
 * racks ...): parsing, checking against the job, and node coordinates. */
#ifndef DDL_GRID_H
#define DDL_GRID_H

#include <stddef.h>

#include "ddl.h"

#define DDL_GRID_MAX_DIMS 8

typedef struct {
    int ndims;                   /* 0: no grid */
    int dims[DDL_GRID_MAX_DIMS]; /* dims[0]: GPUs per node; dims[1..]: nodes, racks, ... */
} ddl_grid_t;

/* "4x8x2" -> dims; DDL_ERR_INVALID_ARG with the reason as the last error (ddl_fail). */
ddl_status_t ddl_grid_parse(const char *s, ddl_grid_t *g);
/* Does the grid match G GPUs per node on nnodes nodes?  Else DDL_ERR_LAYOUT, the
 * last error showing both shapes. */
ddl_status_t ddl_grid_check(const ddl_grid_t *g, int gpus, int nnodes);
/* Coordinate of node `node` along dimension d >= 1 (nodes of a rack are consecutive). */
int ddl_grid_coord(const ddl_grid_t *g, int node, int d);
/* The node with `node`'s coordinates but `value` along dimension d. */
int ddl_grid_peer(const ddl_grid_t *g, int node, int d, int value);

/* Bytes sent and time spent per dimension, summed over calls (the lanes'
 * schedules count them; ddl_comm_dims reports them). */
typedef struct {
    unsigned long long bytes_sent;
    double seconds;
} ddl_dim_count_t;

#endif
