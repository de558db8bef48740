/* State shared by the plugin's contexts: the site policy and the user's
 * --ddl-lanes value.  Each context keeps the rest of its state to itself. */
#ifndef DDL_SPANK_DDL_H
#define DDL_SPANK_DDL_H

#include <stdint.h> /* spank.h uses uint32_t without including it */
#include <slurm/spank.h>

#include "options.h"

typedef struct {
    ddl_spank_policy_t policy;
    int lanes;         /* from --ddl-lanes; 0 when not given */
} ddl_spank_t;

extern ddl_spank_t ddl_spank;

/* srun */
int ddl_local_init_post_opt(spank_t sp);
/* sbatch, salloc */
int ddl_alloc_option(const char *value);
/* slurmstepd */
int ddl_remote_user_init(spank_t sp);
int ddl_remote_task_init(spank_t sp);
void ddl_remote_exit(void);

#endif
