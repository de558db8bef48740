/* hwloc XML into the lane plan: whatever topology the XML describes, the plan
 * is made or refused with a reason; a plan puts every task on a distinct
 * allocated core. */
#define _GNU_SOURCE
#include "config.h"

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "plan.h"
#include "topo.h"

DDL_FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int lanes = 1 + data[0] % 4;
    int fd = memfd_create("ddl-fuzz-xml", 0);
    if (fd < 0)
        return 0;
    if (write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) {
        close(fd);
        return 0;
    }
    char path[64], err[512];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    ddl_topo_t topo;
    if (ddl_topo_load(path, &topo, err, sizeof(err)) == 0) {
        int ngpus = topo.ngpus < 64 ? topo.ngpus : 64, gpus[64];
        int *cores = malloc(sizeof(int) * (size_t)(topo.ncores + 1));
        for (int g = 0; g < ngpus; g++)
            gpus[g] = g;
        for (int c = 0; c < topo.ncores && cores; c++)
            cores[c] = c;
        ddl_plan_t plan;
        if (cores && ddl_plan_make(&topo, gpus, ngpus, cores, topo.ncores, lanes, ngpus * lanes, &plan, err,
                                   sizeof(err)) == DDL_OK) {
            for (int i = 0; i < plan.ntasks; i++)
                for (int j = 0; j < i; j++)
                    FUZZ_ASSERT(plan.tasks[i].core != plan.tasks[j].core);
            ddl_plan_free(&plan);
        }
        free(cores);
        ddl_topo_free(&topo);
    }
    close(fd);
    return 0;
}
