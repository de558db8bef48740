/* SPDX-License-Identifier: Apache-2.0 */
/* The lane plan of one node: a pure function of (topology, the step's GPUs, its
 * allocated cores, lanes, local tasks).  Local task t serves the step's GPU
 * t / lanes as lane t % lanes.  Each GPU gets an equal share of the allocated
 * cores (cores / GPUs, rounded down): a helper takes one, the owner the rest,
 * as close to the GPU as the allocation allows (helpers and the owner's first
 * core before the owner's others); no two tasks share a core. */
#ifndef DDL_PLAN_H
#define DDL_PLAN_H

#include <stddef.h>

#include "ddl.h"
#include "topo.h"

typedef enum {
    DDL_NEAR_LOCAL = 0,   /* a core local to the GPU (its NUMA node) */
    DDL_NEAR_PACKAGE = 1, /* same package as the GPU */
    DDL_NEAR_ANY = 2,     /* any allocated core */
    DDL_NEAR_UNKNOWN = 3, /* the GPU or the core is not in the topology */
} ddl_nearness_t;

typedef struct {
    int gpu;      /* index in the step's GPU list (CUDA device ordinal) */
    int lane;
    ddl_role_t role;
    int core;     /* the task's first allocated core id */
    int pu;       /* OS PU of that core, -1: not in the topology (cannot bind) */
    ddl_nearness_t near; /* of the first core */
    int ncores;   /* 1 for helpers, the GPU's share minus its helpers for owners */
    int *cores;   /* ncores allocated core ids, ascending; cores[0] need not be core */
} ddl_task_plan_t;

typedef struct {
    int lanes, ntasks, ngpus;
    ddl_task_plan_t *tasks;
    int *core_store; /* the tasks' core lists */
} ddl_plan_t;

/* step_gpus[i]: the node-wide id of the step's i-th GPU (its index among the
 * node's GPUs in bus-id order; ids beyond topo->ngpus have unknown locality).
 * cores: allocated core ids (indices into topo's cores; larger ids are cores the
 * node claims but the topology does not have).  Returns DDL_OK, or
 * DDL_ERR_LAYOUT / DDL_ERR_INVALID_ARG with what to change written into why. */
ddl_status_t ddl_plan_make(const ddl_topo_t *topo, const int *step_gpus, int ngpus, const int *cores, int ncores,
                           int lanes, int ntasks, ddl_plan_t *plan, char *why, size_t whylen);
void ddl_plan_free(ddl_plan_t *plan);
const char *ddl_nearness_name(ddl_nearness_t near);

#endif
