/* SPDX-License-Identifier: Apache-2.0 */
/* srun: the lane count is checked by the option callback; here, a hint when
 * DDL_LANES asks for lanes that the command line did not, and the step's
 * word to slurmstepd on where its lanes come from (in srun's environment,
 * which the step's tasks get). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spank_ddl.h"

/* Inside a job, srun takes sbatch's or salloc's --ddl-lanes from the
 * environment Slurm gives the job's steps; on srun's own command line it is
 * the step's.  (getopt takes any unambiguous prefix: the plugin's options all
 * start --ddl-.) */
static int lanes_from_job(void)
{
    if (!getenv("SLURM_JOB_ID") || !getenv("SLURM_SPANK__SLURM_SPANK_OPTION_ddl_ddl_lanes"))
        return 0;
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (!f)
        return 0;
    char arg[4096];
    int c, n = 0, own = 0;
    while ((c = fgetc(f)) != EOF) {
        if (c != '\0') {
            if (n < (int)sizeof(arg) - 1)
                arg[n++] = (char)c;
            continue;
        }
        arg[n] = '\0';
        n = 0;
        if (strcmp(arg, "--") == 0)
            break;
        own |= strncmp(arg, "--ddl-", 6) == 0;
    }
    fclose(f);
    return !own;
}

int ddl_local_init_post_opt(spank_t sp)
{
    (void)sp;
    /* slurmstepd runs a step whose task count does not fit the job's lanes
     * as a plain step (srun -n1 prepare.py in a job with lanes), and refuses
     * one whose own --ddl-lanes does not fit. */
    if (ddl_spank.lanes > 0 && lanes_from_job() && setenv(DDL_SPANK_LANES_FROM_JOB, "1", 1) != 0)
        slurm_info("ddl: warning: cannot tell the step that its lanes are the job's");
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
