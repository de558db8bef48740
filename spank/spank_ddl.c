/* SPDX-License-Identifier: Apache-2.0 */
/* The spank_ddl plugin: option and policy, and one dispatch per hook to the
 * file of the calling context (spank_local.c, spank_alloc.c, spank_remote.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "spank_ddl.h"

SPANK_PLUGIN(ddl, 1);

ddl_spank_t ddl_spank;

static int lanes_option(int val, const char *optarg, int remote);

static struct spank_option lanes_opt = {
    "ddl-lanes", "N",
    "[ddl] run N processes (lanes) per GPU: lane 0 owns the GPU and runs the program on the GPU's cores but "
    "one per helper, lanes 1..N-1 help it on one core each (also DDL_LANES)",
    1, 0, lanes_option};

static int lanes_option(int val, const char *optarg, int remote)
{
    (void)val;
    (void)remote;
    char err[256];
    if (ddl_spank_parse_lanes(optarg, "--ddl-lanes", ddl_spank.policy.max_lanes, &ddl_spank.lanes, err,
                              sizeof(err)) != 0) {
        slurm_error("ddl: %s", err);
        return -1;
    }
    if (spank_context() == S_CTX_ALLOCATOR)
        return ddl_alloc_option(optarg);
    return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    char err[256];
    ddl_spank.lanes = 0;
    ddl_spank_policy_defaults(&ddl_spank.policy);
    if (ddl_spank_policy_parse(ac, av, &ddl_spank.policy, err, sizeof(err)) != 0) {
        slurm_error("ddl: plugstack.conf: %s", err);
        return -1;
    }
    switch (spank_context()) {
    case S_CTX_LOCAL:
    case S_CTX_ALLOCATOR:
        /* The cli_filter (ddl_lanes.lua), which runs later in this process,
         * sizes the request from the site's owner_cores. */
        if (ddl_spank.policy.owner_cores > 0) {
            char buf[16];
            snprintf(buf, sizeof(buf), "%d", ddl_spank.policy.owner_cores);
            setenv("DDL_SITE_OWNER_CORES", buf, 1);
        }
        /* fall through */
    case S_CTX_REMOTE:
        /* sbatch and salloc accept only registered options, not a table. */
        if (spank_option_register(sp, &lanes_opt) != ESPANK_SUCCESS) {
            slurm_error("ddl: cannot register --ddl-lanes");
            return -1;
        }
        return 0;
    default:
        return 0;
    }
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    return spank_context() == S_CTX_LOCAL ? ddl_local_init_post_opt(sp) : 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    return spank_remote(sp) ? ddl_remote_user_init(sp) : 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    return spank_remote(sp) ? ddl_remote_task_init(sp) : 0;
}

int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    return spank_remote(sp) ? ddl_remote_task_post_fork(sp) : 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (spank_remote(sp))
        ddl_remote_exit();
    return 0;
}
