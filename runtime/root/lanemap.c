/* SPDX-License-Identifier: Apache-2.0 */
/* Which GPU and lane a node-local rank serves (lanemap.h).  Pure; uses the log
 * for its messages. */
#include "config.h"

#include <stdio.h>

#include "lanemap.h"
#include "log.h"

ddl_status_t ddl_lanemap_layout(int local_size, int lanes, int gpus_cfg, int *gpus)
{
    if (lanes < 1)
        return ddl_fail(DDL_ERR_LAYOUT, "lanes per GPU is %d; it must be at least 1", lanes);
    if (gpus_cfg < 0)
        return ddl_fail(DDL_ERR_LAYOUT, "GPUs per node is %d; give 0 (derive) or a positive count", gpus_cfg);
    if (gpus_cfg == 0) {
        if (local_size % lanes != 0)
            return ddl_fail(DDL_ERR_LAYOUT, "%d ranks on a node do not divide into GPUs of %d lanes; "
                            "launch a multiple of %d ranks per node or change DDL_LANES", local_size, lanes, lanes);
        *gpus = local_size / lanes;
        return DDL_OK;
    }
    if (gpus_cfg * lanes != local_size)
        return ddl_fail(DDL_ERR_LAYOUT, "a node has %d ranks but %d GPUs x %d lanes need %d; launch %d "
                        "ranks per node or change DDL_GPUS_PER_NODE / DDL_LANES", local_size, gpus_cfg, lanes,
                        gpus_cfg * lanes, gpus_cfg * lanes);
    *gpus = gpus_cfg;
    return DDL_OK;
}
