/* SPDX-License-Identifier: Apache-2.0 */
/* The algorithms' descriptions, which ddl-info prints (ddl_algo_table).  Their
 * ids and names are the settings' values (core/choices.h); the lane
 * algorithms' come from their rows (inter_algos.def), which selection iterates
 * (inter.h); the path is dispatched in engine/collective.c. */
#ifndef DDL_ALGO_H
#define DDL_ALGO_H

#include <stddef.h>

#include "choices.h"

typedef struct {
    /* "allreduce" (DDL_ALGO), "form" (the MPI path's: a tuning band's or a
     * candidate's name), "lane" (DDL_LANE_ALGO) or "gpu" (DDL_GPU_TRANSPORT) */
    const char *scope;
    int id;
    const char *name;
    const char *description;
} ddl_algo_desc_t;

const ddl_algo_desc_t *ddl_algo_table(size_t *count);

#endif
