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
#include "fabric.h"
#include "options.h"
#include "parse.h"
#include "plan.h"
#include "topo.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ddl-topo [--xml FILE] [--gpus LIST] [--cores LIST] [--lanes N] [--tasks N] [--rails LIST]\n"
            "                [--fabric STACKS] [--sysfs DIR] [--json] [--version]\n"
            "Print the node's cores and GPUs and the plan spank_ddl makes for --ddl-lanes=N.\n"
            "  --xml FILE    an hwloc XML description of the node (default: this machine)\n"
            "  --gpus LIST   the step's GPUs as node-wide ids, bus-id order (default: all GPUs found)\n"
            "  --cores LIST  allocated cores (default: all cores), e.g. 0-7,16-23\n"
            "  --lanes N     lanes per GPU (default 1)\n"
            "  --tasks N     tasks on the node (default: GPUs x lanes)\n"
            "  --rails LIST  the plugstack line's rails=, e.g. eth1,eth2 or mlx5_0:1,mlx5_1:1\n"
            "  --fabric S    the plugstack line's fabric= (default auto: every stack's variables)\n"
            "  --sysfs DIR   resolve the rails in this sysfs tree (default /sys: this machine's)\n"
            "  --json        machine-readable output\n");
}

/* The lanes' rails, as the plugin would give them (rails.h, fabric.h). */
typedef struct {
    int n;                          /* 0: no rails (none given, or 1 lane per GPU) */
    ddl_rail_t rails[8];
    const ddl_spank_policy_t *pol;
    int *task_rail;
} lane_rails_t;

/* The variables a task would get, "NAME=value" separated by `sep`. */
struct env_text {
    char *buf;
    size_t len, used;
    const char *sep, *quote, *is;
};

static void env_text_add(void *ctx, const char *var, const char *value, const char *unless)
{
    struct env_text *e = ctx;
    (void)unless;
    e->used += (size_t)snprintf(e->buf + e->used, e->used < e->len ? e->len - e->used : 0, "%s%s%s%s%s%s%s%s",
                                e->used ? e->sep : "", e->quote, var, e->quote, e->is, e->quote, value, e->quote);
}

static const char *task_env(const lane_rails_t *lr, const ddl_plan_t *p, int task, int json, char *buf, size_t len)
{
    struct env_text e = {buf, len, 0, json ? ", " : " ", json ? "\"" : "", json ? ": " : "="};
    buf[0] = '\0';
    env_text_add(&e, "DDL_RAIL", lr->pol->rails[lr->task_rail[task]], NULL);
    ddl_fabric_env(lr->pol->stacks, lr->rails, lr->task_rail, p->ntasks, task, env_text_add, &e);
    return buf;
}

static void print_text(const ddl_topo_t *t, const ddl_plan_t *p, const int *gpus, const lane_rails_t *lr)
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
    printf("  %4s %4s %6s %4s %6s %-10s %5s %5s  %-13s %s\n", "task", "gpu", "gpu_id", "lane", "role", "rail", "core",
           "pu", "nearness", "cores");
    for (int i = 0; i < p->ntasks; i++) {
        const ddl_task_plan_t *tp = &p->tasks[i];
        char cores[1024];
        printf("  %4d %4d %6d %4d %6s %-10s %5d %5d  %-13s %s\n", i, tp->gpu, gpus[tp->gpu], tp->lane,
               tp->role == DDL_ROLE_OWNER ? "owner" : "helper", lr->n ? lr->pol->rails[lr->task_rail[i]] : "-",
               tp->core, tp->pu, ddl_nearness_name(tp->near),
               ddl_cpulist_format(tp->cores, tp->ncores, cores, sizeof(cores)));
    }
    if (!lr->n)
        return;
    printf("rails:\n");
    for (int r = 0; r < lr->n; r++) {
        char what[160];
        printf("  %-10s %s%s\n", lr->rails[r].name, ddl_rail_describe(&lr->rails[r], what, sizeof(what)),
               lr->rails[r].found ? "" : " (not on this machine: by its name's form)");
    }
    printf("variables (a value in the job's environment wins):\n");
    for (int i = 0; i < p->ntasks; i++) {
        char env[8192];
        printf("  task %d: %s\n", i, task_env(lr, p, i, 0, env, sizeof(env)));
    }
}

static void print_json(const ddl_topo_t *t, const ddl_plan_t *p, const int *gpus, const lane_rails_t *lr)
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
        printf("]");
        if (lr->n) {
            char env[8192];
            printf(", \"rail\": \"%s\", \"env\": {%s}", lr->pol->rails[lr->task_rail[i]],
                   task_env(lr, p, i, 1, env, sizeof(env)));
        }
        printf("}");
    }
    printf("\n  ]");
    if (lr->n) {
        printf(",\n  \"rails\": [");
        for (int r = 0; r < lr->n; r++) {
            const ddl_rail_t *x = &lr->rails[r];
            printf("%s\n    {\"name\": \"%s\", \"netdev\": \"%s\", \"rdma\": \"%s\", \"port\": %d, \"cxi\": %d, "
                   "\"found\": %s}", r ? "," : "", x->name, x->netdev, x->rdma, x->port, x->cxi,
                   x->found ? "true" : "false");
        }
        printf("\n  ]");
    }
    printf("\n}\n");
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"xml", required_argument, 0, 'x'},   {"gpus", required_argument, 0, 'g'},
        {"cores", required_argument, 0, 'c'}, {"lanes", required_argument, 0, 'l'},
        {"tasks", required_argument, 0, 't'}, {"json", no_argument, 0, 'j'},
        {"rails", required_argument, 0, 'r'}, {"fabric", required_argument, 0, 'f'},
        {"sysfs", required_argument, 0, 's'},
        {"help", no_argument, 0, 'h'},        {"version", no_argument, 0, 'V'}, {0, 0, 0, 0}};
    const char *xml = NULL, *gpu_list = NULL, *core_list = NULL, *sysfs = "/sys";
    /* The plugstack line's rails= and fabric=, through the plugin's own parser. */
    char rails_arg[512] = "", fabric_arg[128] = "";
    ddl_spank_policy_t pol;
    ddl_spank_policy_defaults(&pol);
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
        case 'r': snprintf(rails_arg, sizeof(rails_arg), "rails=%s", optarg); break;
        case 'f': snprintf(fabric_arg, sizeof(fabric_arg), "fabric=%s", optarg); break;
        case 's': sysfs = optarg; break;
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
    char *policy_args[2];
    int npolicy = 0;
    if (rails_arg[0])
        policy_args[npolicy++] = rails_arg;
    if (fabric_arg[0])
        policy_args[npolicy++] = fabric_arg;
    if (ddl_spank_policy_parse(npolicy, policy_args, &pol, err, sizeof(err)) != 0) {
        fprintf(stderr, "ddl-topo: %s\n", err);
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
    /* As the plugin: rails only with more than one lane per GPU. */
    lane_rails_t lr = {.n = lanes > 1 ? pol.nrails : 0, .pol = &pol, .task_rail = NULL};
    if (lr.n) {
        lr.task_rail = malloc(sizeof(int) * (size_t)plan.ntasks);
        if (!lr.task_rail) {
            fprintf(stderr, "ddl-topo: out of memory\n");
            return 1;
        }
        for (int r = 0; r < lr.n; r++)
            ddl_rail_resolve(sysfs, pol.rails[r], &lr.rails[r]);
        for (int i = 0; i < plan.ntasks; i++)
            lr.task_rail[i] = ddl_spank_rail_index(&pol, plan.tasks[i].gpu, plan.tasks[i].lane, plan.ngpus);
    } else if (pol.nrails > 0)
        fprintf(stderr, "ddl-topo: note: with 1 lane per GPU the plugin gives no rails (the MPI's own choice)\n");
    if (json)
        print_json(&topo, &plan, gpus, &lr);
    else
        print_text(&topo, &plan, gpus, &lr);
    free(lr.task_rail);
    ddl_plan_free(&plan);
    ddl_topo_free(&topo);
    free(cores);
    return 0;
}
