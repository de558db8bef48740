/* SPDX-License-Identifier: Apache-2.0 */
/* The lane map: which GPU and lane a node-local rank serves, and whether a
 * node's rank count fits G GPUs x L lanes.  Pure functions. */
#ifndef DDL_LANEMAP_H
#define DDL_LANEMAP_H

#include <stddef.h>
#include "ddl.h"

typedef struct {
    int gpu;
    int lane;
    ddl_role_t role;
} ddl_place_t;

/* Local rank t serves GPU t / lanes as lane t % lanes; lane 0 is the owner. */
static inline ddl_place_t ddl_lanemap_place(int local_rank, int lanes)
{
    ddl_place_t p = {local_rank / lanes, local_rank % lanes,
                     local_rank % lanes == 0 ? DDL_ROLE_OWNER : DDL_ROLE_HELPER};
    return p;
}

/* Resolve the GPUs per node from a node's rank count, the lanes and the configured
 * GPUs (0: derive).  On a layout that does not fit, DDL_ERR_LAYOUT, the last
 * error (ddl_fail) saying what is wrong and what to change. */
ddl_status_t ddl_lanemap_layout(int local_size, int lanes, int gpus_cfg, int *gpus);

#endif
