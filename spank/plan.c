/* SPDX-License-Identifier: Apache-2.0 */
/* The lane plan of one node (plan.h).  Pure: reads only the topology struct. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

const char *ddl_nearness_name(ddl_nearness_t near)
{
    static const char *const names[] = {"local", "same-package", "remote", "unknown"};
    return names[near];
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* The OS PU to bind for a core id, -1 when the topology lacks the core. */
static int core_pu(const ddl_topo_t *topo, int core) { return core < topo->ncores ? topo->core_pu[core] : -1; }

static ddl_nearness_t nearness(const ddl_topo_t *topo, int gpu_id, int core)
{
    if (gpu_id < 0 || gpu_id >= topo->ngpus || core >= topo->ncores)
        return DDL_NEAR_UNKNOWN;
    const ddl_topo_gpu_t *g = &topo->gpus[gpu_id];
    if (g->local && g->local[core])
        return DDL_NEAR_LOCAL;
    if (g->package >= 0 && topo->core_package[core] == g->package)
        return DDL_NEAR_PACKAGE;
    return DDL_NEAR_ANY;
}

/* When all of a GPU's cores are equally near it, lay them out in order: the
 * owner on the lowest (contiguous when the allocation is), then the helpers,
 * instead of the order in which the passes found them. */
static void regroup(const ddl_topo_t *topo, int gpu_id, ddl_task_plan_t *tasks, int lanes)
{
    int *all = tasks[0].cores, n = 0; /* the GPU's cores are consecutive in core_store */
    for (int l = 0; l < lanes; l++)
        n += tasks[l].ncores;
    int same = 1;
    for (int i = 1; i < n; i++)
        same &= nearness(topo, gpu_id, all[i]) == nearness(topo, gpu_id, all[0]);
    if (!same) {
        for (int l = 0; l < lanes; l++)
            qsort(tasks[l].cores, (size_t)tasks[l].ncores, sizeof(int), cmp_int);
        return;
    }
    qsort(all, (size_t)n, sizeof(int), cmp_int);
    for (int l = 0; l < lanes; l++) {
        ddl_task_plan_t *tp = &tasks[l];
        tp->core = tp->cores[0];
        tp->pu = core_pu(topo, tp->core);
    }
}

ddl_status_t ddl_plan_make(const ddl_topo_t *topo, const int *step_gpus, int ngpus, const int *cores, int ncores,
                           int lanes, int ntasks, ddl_plan_t *plan, char *why, size_t whylen)
{
    memset(plan, 0, sizeof(*plan));
    if (lanes < 1) {
        snprintf(why, whylen, "--ddl-lanes=%d: give at least 1 lane per GPU", lanes);
        return DDL_ERR_INVALID_ARG;
    }
    if (ngpus == 0) {
        snprintf(why, whylen, "--ddl-lanes=%d needs GPUs, but the step has none on this node: request them with "
                 "--gpus-per-node=N (or --gpus=N)", lanes);
        return DDL_ERR_LAYOUT;
    }
    if (ntasks != ngpus * lanes) {
        snprintf(why, whylen, "--ddl-lanes=%d with %d GPU%s on this node needs %d tasks here, the step has %d: add "
                 "--ntasks-per-gpu=%d (inside a job with lanes, --ntasks-per-node=%d)", lanes, ngpus,
                 ngpus > 1 ? "s" : "", ngpus * lanes, ntasks, lanes, ngpus * lanes);
        return DDL_ERR_LAYOUT;
    }
    if (ncores < ntasks) {
        snprintf(why, whylen, "%d tasks (%d GPUs x %d lanes) need a core each, the step has %d core%s on this "
                 "node: ask for --cpus-per-task=1 and enough cores, or fewer lanes", ntasks, ngpus, lanes, ncores,
                 ncores == 1 ? "" : "s");
        return DDL_ERR_LAYOUT;
    }
    int share = ncores / ngpus, owner_cores = share - (lanes - 1);
    plan->tasks = calloc((size_t)ntasks, sizeof(*plan->tasks));
    plan->core_store = calloc((size_t)ngpus * (size_t)share, sizeof(int));
    unsigned char *used = calloc((size_t)ncores, 1);
    if (!plan->tasks || !plan->core_store || !used) {
        free(used);
        ddl_plan_free(plan);
        snprintf(why, whylen, "out of memory");
        return DDL_ERR_NO_MEMORY;
    }
    plan->lanes = lanes;
    plan->ntasks = ntasks;
    plan->ngpus = ngpus;
    for (int t = 0, o = 0; t < ntasks; t++) {
        ddl_task_plan_t *tp = &plan->tasks[t];
        tp->gpu = t / lanes;
        tp->lane = t % lanes;
        tp->role = t % lanes == 0 ? DDL_ROLE_OWNER : DDL_ROLE_HELPER;
        tp->core = -1;
        tp->cores = plan->core_store + o;
        o += tp->role == DDL_ROLE_OWNER ? owner_cores : 1;
    }
    /* Pass by pass from the nearest class outwards, each GPU takes, in GPU order,
     * the lowest free cores of that class for its lanes still without a core; so
     * a GPU never takes a far core while a near one of its own is free, and
     * cores local to one GPU go to that GPU before a later GPU's remote lanes.
     * Then the owners' other cores, the same way. */
    for (int round = 0; round < 2; round++)
        for (int pass = DDL_NEAR_LOCAL; pass <= DDL_NEAR_UNKNOWN; pass++)
            for (int t = 0; t < ntasks; t++) {
                ddl_task_plan_t *tp = &plan->tasks[t];
                int want = round == 0 ? 1 : tp->role == DDL_ROLE_OWNER ? owner_cores : 1;
                int gpu_id = step_gpus[tp->gpu];
                for (int i = 0; i < ncores && tp->ncores < want; i++) {
                    if (used[i] || (int)nearness(topo, gpu_id, cores[i]) != pass)
                        continue;
                    used[i] = 1;
                    tp->cores[tp->ncores++] = cores[i];
                    if (tp->core < 0) {
                        tp->core = cores[i];
                        tp->near = (ddl_nearness_t)pass;
                        tp->pu = core_pu(topo, cores[i]);
                    }
                }
            }
    for (int g = 0; g < ngpus; g++)
        regroup(topo, step_gpus[g], &plan->tasks[g * lanes], lanes);
    free(used);
    return DDL_OK;
}

void ddl_plan_free(ddl_plan_t *plan)
{
    free(plan->tasks);
    free(plan->core_store);
    memset(plan, 0, sizeof(*plan));
}
