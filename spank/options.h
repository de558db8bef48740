/* SPDX-License-Identifier: Apache-2.0 */
/* Site policy from plugstack.conf arguments and the user's lane request, parsed
 * by one set of functions for the --ddl-lanes option, its DDL_LANES mirror and
 * the plugstack default.  Pure: unit-tested without Slurm. */
#ifndef DDL_SPANK_OPTIONS_H
#define DDL_SPANK_OPTIONS_H

#include <stddef.h>

#include "rails.h"

typedef enum { DDL_SPANK_HELPERS_APP = 0, DDL_SPANK_HELPERS_DAEMON = 1 } ddl_spank_helpers_t;

typedef struct {
    int default_lanes; /* 0: off unless the user asks */
    int max_lanes;
    int bind;          /* bind each task to its planned cores */
    int owner_cores;   /* cores an owner gets unless the user asks (0: one per lane); read by the cli_filter */
    ddl_spank_helpers_t helpers;
    char helper_path[512];
    /* The node's rails, as the site names its NICs (an interface, an RDMA
     * device[:port], a cxi device): with lanes > 1 each lane gets the one
     * ddl_spank_rail_of names, in the variables of every stack in `stacks`
     * (fabric.h). */
    char rails[8][DDL_RAIL_NAME_MAX];
    int nrails;
    unsigned stacks;
} ddl_spank_policy_t;

void ddl_spank_policy_defaults(ddl_spank_policy_t *p);
/* Parse plugstack arguments "key=value": default_lanes, max_lanes, bind,
 * helpers, helper, rails (device names, comma-separated), fabric, owner_cores.  Returns 0, or -1 with the offending argument named in err. */
int ddl_spank_policy_parse(int argc, char **argv, ddl_spank_policy_t *p, char *err, size_t errlen);
/* The rail of lane `lane` of the step's GPU `gpu`, with `gpus` GPUs on the
 * node: the node's lanes, numbered lane-major (k G + g), take the rails in
 * turn.  So every rail carries an equal share (to within one lane) whatever
 * the lanes per GPU; the owners (lane 0) are spread over the rails, so that
 * the system MPI path over them uses them all; with as many rails as GPUs,
 * every lane of GPU g is on rail g (its own NIC when the rails are listed in
 * GPU order); and a lane has the same rail on every node (its peers). */
const char *ddl_spank_rail_of(const ddl_spank_policy_t *p, int gpu, int lane, int gpus);
/* Its index in p->rails. */
int ddl_spank_rail_index(const ddl_spank_policy_t *p, int gpu, int lane, int gpus);
/* Parse a lane count from `source` ("--ddl-lanes", "DDL_LANES", ...): an integer
 * from 1 to max.  Returns 0, or -1 with a message for the user in err. */
int ddl_spank_parse_lanes(const char *value, const char *source, int max, int *lanes, char *err, size_t errlen);

#endif
