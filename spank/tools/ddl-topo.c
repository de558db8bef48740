/* SPDX-License-Identifier: Apache-2.0 */
/* ddl-topo: print the lane plan the plugin would make on a node, from this
 * machine or from an hwloc XML file, in text or JSON. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "ddl_limits.h"
#include "options.h"
#include "parse.h"
#include "plan.h"
#include "topo.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ddl-topo [--xml FILE] [--gpus LIST] [--cores LIST] [--lanes N] [--tasks N] [--json] [--version]\n"
            "Print the node's cores and GPUs and the plan spank_ddl makes for --ddl-lanes=N.\n"
            "  --xml FILE    an hwloc XML description of the node (default: this machine)\n"
            "  --gpus LIST   the step's GPUs as node-wide ids, bus-id order (default: all GPUs found)\n"
            "  --cores LIST  allocated cores (default: all cores), e.g. 0-7,16-23\n"
            "  --lanes N     lanes per GPU (default 1)\n"
            "  --tasks N     tasks on the node (default: GPUs x lanes)\n"
            "  --json        machine-readable output\n");
}

static void print_text(const ddl_topo_t *t, const ddl_plan_t *p, const int *gpus, int ngpus)
{
    printf("node: %d cores, %d GPUs\n", t->ncores, t->ngpus);
    /* Sized by the node: a node may have any number of cores. */
    int *ids = malloc(sizeof(int) * (size_t)(t->ncores > 0 ? t->ncores : 1));
    size_t list_len = 16 * (size_t)(t->ncores > 0 ? t->ncores : 1);
    char *list = malloc(list_len);
    if (!ids || !list) {
        fprintf(stderr, "ddl-topo: out of memory for %d cores\n", t->ncores);
        exit(1);
    }
    for (int g = 0; g < t->ngpus; g++) {
        int n = 0;
        for (int c = 0; c < t->ncores; c++)
            if (t->gpus[g].local[c])
                ids[n++] = c;
        printf("  GPU %d  %s  [%04x:%04x]  NUMA %d  local cores %s\n", g, t->gpus[g].busid, t->gpus[g].vendor,
               t->gpus[g].device, t->gpus[g].numa, n ? ddl_cpulist_format(ids, n, list, list_len) : "-");
    }
    free(ids);
    free(list);
    printf("plan: %d GPUs x %d lanes = %d tasks\n", p->ngpus, p->lanes, p->ntasks);
    printf("  %4s %4s %6s %4s %6s %5s %5s  %-13s %s\n", "task", "gpu", "gpu_id", "lane", "role", "core", "pu", "nearness",
           "cores");
    for (int i = 0; i < p->ntasks; i++) {
        const ddl_task_plan_t *tp = &p->tasks[i];
        char cores[1024];
        printf("  %4d %4d %6d %4d %6s %5d %5d  %-13s %s\n", i, tp->gpu, gpus[tp->gpu], tp->lane,
               tp->role == DDL_ROLE_OWNER ? "owner" : "helper", tp->core, tp->pu, ddl_nearness_name(tp->near),
               ddl_cpulist_format(tp->cores, tp->ncores, cores, sizeof(cores)));
    }
    (void)ngpus;
}

static void print_json(const ddl_topo_t *t, const ddl_plan_t *p, const int *gpus)
{
    printf("{\n  \"cores\": %d,\n  \"gpus\": [", t->ncores);
    for (int g = 0; g < t->ngpus; g++) {
        printf("%s\n    {\"id\": %d, \"busid\": \"%s\", \"vendor\": \"%04x\", \"device\": \"%04x\", \"numa\": %d, "
               "\"local_cores\": [", g ? "," : "", g, t->gpus[g].busid, t->gpus[g].vendor, t->gpus[g].device,
               t->gpus[g].numa);
        int first = 1;
        for (int c = 0; c < t->ncores; c++)
            if (t->gpus[g].local[c]) {
                printf("%s%d", first ? "" : ", ", c);
                first = 0;
            }
        printf("]}");
    }
    printf("\n  ],\n  \"lanes\": %d,\n  \"tasks\": [", p->lanes);
    for (int i = 0; i < p->ntasks; i++) {
        const ddl_task_plan_t *tp = &p->tasks[i];
        printf("%s\n    {\"task\": %d, \"gpu\": %d, \"gpu_id\": %d, \"lane\": %d, \"role\": \"%s\", \"core\": %d, "
               "\"pu\": %d, \"nearness\": \"%s\", \"cores\": [", i ? "," : "", i, tp->gpu, gpus[tp->gpu], tp->lane,
               tp->role == DDL_ROLE_OWNER ? "owner" : "helper", tp->core, tp->pu, ddl_nearness_name(tp->near));
        for (int c = 0; c < tp->ncores; c++)
            printf("%s%d", c ? ", " : "", tp->cores[c]);
        printf("]}");
    }
    printf("\n  ]\n}\n");
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"xml", required_argument, 0, 'x'},   {"gpus", required_argument, 0, 'g'},
        {"cores", required_argument, 0, 'c'}, {"lanes", required_argument, 0, 'l'},
        {"tasks", required_argument, 0, 't'}, {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},        {"version", no_argument, 0, 'V'}, {0, 0, 0, 0}};
    const char *xml = NULL, *gpu_list = NULL, *core_list = NULL;
    int lanes = 1, tasks = -1, json = 0, opt;
    long v;
    char err[256];
    while ((opt = getopt_long(argc, argv, "x:g:c:l:t:jh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'x': xml = optarg; break;
        case 'g': gpu_list = optarg; break;
        case 'c': core_list = optarg; break;
        case 'l':
            if (ddl_spank_parse_lanes(optarg, "--lanes", DDL_MAX_LANES, &lanes, err, sizeof(err)) != 0) {
                fprintf(stderr, "ddl-topo: %s\n", err);
                return 2;
            }
            break;
        case 't':
            if (ddl_parse_long(optarg, 0, DDL_MAX_CPU_ID, &v) != 0) {
                fprintf(stderr, "ddl-topo: --tasks=%s is not a task count\n", optarg);
                return 2;
            }
            tasks = (int)v;
            break;
        case 'j': json = 1; break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("ddl-topo (DDL lanes) %s\n", PACKAGE_VERSION); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ddl-topo: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    ddl_topo_t topo;
    if (ddl_topo_load(xml, &topo, err, sizeof(err)) != 0) {
        fprintf(stderr, "ddl-topo: %s\n", err);
        return 1;
    }
    /* No GPU seen is hwloc's view, not the user's request: say so, and how to
     * plan anyway (the step's GPUs may be hidden from this process, or fake). */
    if (topo.ngpus == 0 && !gpu_list) {
        fprintf(stderr, "ddl-topo: hwloc finds no GPU in %s (no NVIDIA or AMD display-class PCI device; GPUs "
                "hidden from this process or emulated are not seen): give --gpus LIST (the step's GPU ids, such as "
                "0-1) to plan for them anyway, or --xml FILE with a GPU node's description (made there with "
                "'lstopo --of xml FILE')\n", xml ? xml : "this machine");
        ddl_topo_free(&topo);
        return 1;
    }
    if (topo.ngpus == 0)
        fprintf(stderr, "ddl-topo: warning: hwloc finds no GPU in %s; the plan below is for --gpus ids whose "
                "places it does not know\n", xml ? xml : "this machine");
    static int gpus[DDL_MAX_GPUS];
    int ngpus = 0, ncores = 0;
    int *cores = malloc(sizeof(int) * (DDL_MAX_CPU_ID + 1)); /* any list the parser accepts fits */
    if (!cores) {
        fprintf(stderr, "ddl-topo: out of memory\n");
        return 1;
    }
    if (gpu_list) {
        if ((ngpus = ddl_cpulist_parse(gpu_list, gpus, DDL_MAX_GPUS)) < 0) {
            fprintf(stderr, "ddl-topo: --gpus=%s is not a list of GPU ids such as 0-3\n", gpu_list);
            free(cores);
            return 2;
        }
    } else {
        for (ngpus = 0; ngpus < topo.ngpus && ngpus < DDL_MAX_GPUS; ngpus++)
            gpus[ngpus] = ngpus;
    }
    if (core_list) {
        if ((ncores = ddl_cpulist_parse(core_list, cores, DDL_MAX_CPU_ID + 1)) < 0) {
            fprintf(stderr, "ddl-topo: --cores=%s is not a list of core ids such as 0-7,16\n", core_list);
            free(cores);
            return 2;
        }
    } else {
        for (ncores = 0; ncores < topo.ncores && ncores <= DDL_MAX_CPU_ID; ncores++)
            cores[ncores] = ncores;
    }
    if (tasks < 0)
        tasks = ngpus * lanes;
    ddl_plan_t plan;
    char why[400];
    if (ddl_plan_make(&topo, gpus, ngpus, cores, ncores, lanes, tasks, &plan, why, sizeof(why)) != DDL_OK) {
        fprintf(stderr, "ddl-topo: no plan: %s\n", why);
        ddl_topo_free(&topo);
        free(cores);
        return 1;
    }
    if (json)
        print_json(&topo, &plan, gpus);
    else
        print_text(&topo, &plan, gpus, ngpus);
    ddl_plan_free(&plan);
    ddl_topo_free(&topo);
    free(cores);
    return 0;
}
