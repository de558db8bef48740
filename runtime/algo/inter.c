/* SPDX-License-Identifier: Apache-2.0 */
/* The table of lane algorithms between nodes (inter.h). */
#include "config.h"

#include "inter.h"

const ddl_inter_algo_t ddl_inter_algos[DDL_INTER_ALGOS] = {
    {DDL_INTER_RING, ddl_ring_build, ddl_model_ring, 1.0},
    {DDL_INTER_RD, ddl_rd_build, ddl_model_rd, 1.0},
    /* The model sees one link class; the ring talks to neighbours only, so
     * with nodes numbered by rack it crosses the uplinks least, where
     * Rabenseifner's first steps pair distant nodes: its edge is latency. */
    {DDL_INTER_RAB, ddl_rab_build, ddl_model_rab, DDL_MODEL_RAB_MARGIN},
};

const ddl_inter_algo_t *ddl_inter_algo(int id)
{
    for (int i = 0; i < DDL_INTER_ALGOS; i++)
        if ((int)ddl_inter_algos[i].id == id)
            return &ddl_inter_algos[i];
    return NULL;
}
