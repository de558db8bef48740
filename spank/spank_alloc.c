/* SPDX-License-Identifier: Apache-2.0 */
/* sbatch and salloc: the option becomes DDL_LANES in the job's environment, so
 * the job's steps get the same lanes without repeating the flag. */
#include "config.h"

#include <stdlib.h>

#include "spank_ddl.h"

int ddl_alloc_option(const char *value)
{
    if (setenv("DDL_LANES", value, 1) != 0) {
        slurm_error("ddl: cannot set DDL_LANES for the job");
        return -1;
    }
    return 0;
}
