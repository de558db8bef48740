/* SPDX-License-Identifier: Apache-2.0 */
/* The lane plan over any node: the input describes the topology as the plan
 * reads it (topo.h's plain struct: cores with PU, NUMA node and package; GPUs
 * with their local cores), the step's GPUs and cores, lanes and tasks.  The
 * plan is made or refused with a reason; a plan puts every task on a distinct
 * allocated core, every GPU's lanes on that GPU, and names real GPUs.
 * (hwloc's XML reader itself is not fuzzed here: hwloc 2.9 crashes on some
 * malformed documents, tests/fuzz/hwloc/; the plugin reads only the live
 * machine, and ddl-topo --xml reads files its user gives it.) */
#include "config.h"

#include <stdio.h>

#include "fuzz.h"
#include "plan.h"
#include "topo.h"

DDL_FUZZ_QUIET

/* Bytes in order, 0 once they run out. */
typedef struct {
    const uint8_t *p;
    size_t n;
} reader_t;

static unsigned next(reader_t *r)
{
    if (!r->n)
        return 0;
    r->n--;
    return *r->p++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader_t r = {data, size};
    ddl_topo_t t = {0};
    t.ncores = 1 + (int)(next(&r) | next(&r) << 8) % 1024;
    t.ngpus = (int)next(&r) % 17;
    int lanes = 1 + (int)next(&r) % 8, ntasks_delta = (int)next(&r) % 5 - 2;
    t.core_pu = calloc((size_t)t.ncores, sizeof(int));
    t.core_numa = calloc((size_t)t.ncores, sizeof(int));
    t.core_package = calloc((size_t)t.ncores, sizeof(int));
    t.gpus = calloc((size_t)t.ngpus + 1, sizeof(*t.gpus));
    int *cores = calloc((size_t)t.ncores, sizeof(int)), gpus[16];
    int sockets = 1 + (int)next(&r) % 4;
    for (int c = 0; c < t.ncores; c++) {
        t.core_package[c] = c * sockets / t.ncores;
        t.core_numa[c] = t.core_package[c];
        t.core_pu[c] = next(&r) % 8 ? c : -1; /* some cores cannot be bound */
    }
    for (int g = 0; g < t.ngpus; g++) {
        ddl_topo_gpu_t *gp = &t.gpus[g];
        snprintf(gp->busid, sizeof(gp->busid), "0000:%02x:00.0", (unsigned)g & 0xffu);
        gp->vendor = 0x10de;
        gp->numa = gp->package = (int)next(&r) % sockets;
        gp->local = calloc((size_t)t.ncores, 1);
        for (int c = 0; c < t.ncores; c++)
            gp->local[c] = t.core_package[c] == gp->package;
    }
    /* The step: a subset of the GPUs and of the cores (allocations are unordered sets). */
    int ngpus = 0, ncores = 0;
    unsigned gmask = next(&r) | next(&r) << 8;
    for (int g = 0; g < t.ngpus; g++)
        if (gmask >> g & 1)
            gpus[ngpus++] = g;
    unsigned stride = 1 + next(&r) % 4, offset = next(&r) % 4;
    for (int c = (int)offset; c < t.ncores; c += (int)stride)
        cores[ncores++] = c;
    int ntasks = ngpus * lanes + ntasks_delta;
    ddl_plan_t plan;
    char why[512];
    if (ddl_plan_make(&t, gpus, ngpus, cores, ncores, lanes, ntasks, &plan, why, sizeof(why)) == DDL_OK) {
        FUZZ_ASSERT(plan.ntasks == ngpus * lanes && plan.ngpus == ngpus && plan.lanes == lanes);
        /* Every task's cores are allocated and its own; a helper has one, an
         * owner its GPU's share minus one per helper. */
        int share = ncores / ngpus;
        for (int i = 0; i < plan.ntasks; i++) {
            const ddl_task_plan_t *tp = &plan.tasks[i];
            FUZZ_ASSERT(tp->gpu == i / lanes && tp->lane == i % lanes);
            FUZZ_ASSERT(tp->ncores == (tp->lane == 0 ? share - (lanes - 1) : 1));
            int has_first = 0;
            for (int c = 0; c < tp->ncores; c++)
                has_first |= tp->cores[c] == tp->core;
            FUZZ_ASSERT(has_first);
            for (int c = 0; c < tp->ncores; c++) {
                int allocated = 0;
                for (int k = 0; k < ncores; k++)
                    allocated |= cores[k] == tp->cores[c];
                FUZZ_ASSERT(allocated);
                for (int j = 0; j < i; j++)
                    for (int d = 0; d < plan.tasks[j].ncores; d++)
                        FUZZ_ASSERT(tp->cores[c] != plan.tasks[j].cores[d]);
            }
        }
        ddl_plan_free(&plan);
    } else {
        FUZZ_ASSERT(why[0] != '\0');
    }
    for (int g = 0; g < t.ngpus; g++)
        free(t.gpus[g].local);
    free(t.gpus);
    free(t.core_pu);
    free(t.core_numa);
    free(t.core_package);
    free(cores);
    return 0;
}
