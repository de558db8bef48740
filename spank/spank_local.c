/* SPDX-License-Identifier: Apache-2.0 */
/* srun: the lane count is checked by the option callback; here, only a hint
 * when DDL_LANES asks for lanes that the command line did not. */
#include "config.h"

#include <stdlib.h>

#include "spank_ddl.h"

int ddl_local_init_post_opt(spank_t sp)
{
    (void)sp;
    if (ddl_spank.lanes > 0)
        return 0;
    const char *env = getenv("DDL_LANES");
    char err[256];
    int lanes;
    if (env && *env && ddl_spank_parse_lanes(env, "DDL_LANES", ddl_spank.policy.max_lanes, &lanes, err,
                                             sizeof(err)) != 0) {
        slurm_error("ddl: %s", err);
        return -1;
    }
    return 0;
}
