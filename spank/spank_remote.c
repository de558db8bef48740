/* SPDX-License-Identifier: Apache-2.0 */
/* slurmstepd: plan the node once per step (user_init), then give each task its
 * place, environment, core and, for helpers in daemon mode, the helper program
 * (task_init, in the task as the user, before exec). */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "bind.h"
#include "cpulist.h"
#include "ddl_limits.h"
#include "fabric.h"
#include "plan.h"
#include "port.h"
#include "spank_ddl.h"

#define MAX_IDS 4096
#define DDL_SPANK_REFUSED_EXIT 1 /* a task of a refused step; the reason is the step's "ddl:" error */

static struct {
    int active;         /* this step runs with lanes */
    char error[1024];   /* a plan that cannot be met: every task fails with it */
    ddl_plan_t plan;
    int nodeid, nnodes;
    int gpu_ids[DDL_MAX_GPUS];
    char gpu_list[256]; /* the step's GPUs, for CUDA_VISIBLE_DEVICES */
    char master_addr[256];
    int master_port;
    ddl_rail_t rails[8];   /* the site's rails= as this node has them */
    int *task_rail;        /* each task's rail (index in rails) */
} remote;

static int getenv_str(spank_t sp, const char *name, char *buf, int len)
{
    return spank_getenv(sp, name, buf, len) == ESPANK_SUCCESS && buf[0];
}

/* Where a step's lane count came from: the site, the environment (DDL_LANES,
 * which the library reads too), the job's --ddl-lanes (sbatch, salloc), or
 * the step's own. */
typedef enum { LANES_SITE_DEFAULT, LANES_ENVIRONMENT, LANES_JOB, LANES_OPTION } lanes_from_t;

/* Lanes: --ddl-lanes, else DDL_LANES in the job's environment, else the site
 * default; *from says which. */
static int resolve_lanes(spank_t sp, int *lanes, lanes_from_t *from)
{
    char buf[64], err[256];
    *from = getenv_str(sp, DDL_SPANK_LANES_FROM_JOB, buf, sizeof(buf)) ? LANES_JOB : LANES_OPTION;
    if (ddl_spank.lanes > 0) {
        *lanes = ddl_spank.lanes;
        return 0;
    }
    *from = LANES_ENVIRONMENT;
    if (getenv_str(sp, "DDL_LANES", buf, sizeof(buf))) {
        if (ddl_spank_parse_lanes(buf, "DDL_LANES", ddl_spank.policy.max_lanes, lanes, err, sizeof(err)) != 0) {
            snprintf(remote.error, sizeof(remote.error), "%s", err);
            return -1;
        }
        return 0;
    }
    *from = LANES_SITE_DEFAULT;
    *lanes = ddl_spank.policy.default_lanes;
    return 0;
}

static int step_gpus(spank_t sp)
{
    char buf[256];
    if (!getenv_str(sp, "SLURM_STEP_GPUS", buf, sizeof(buf)) && !getenv_str(sp, "CUDA_VISIBLE_DEVICES", buf, sizeof(buf)))
        return 0;
    int n = ddl_cpulist_parse(buf, remote.gpu_ids, DDL_MAX_GPUS);
    if (n < 0) {
        snprintf(remote.error, sizeof(remote.error), "cannot read the step's GPUs from '%s'", buf);
        return -1;
    }
    snprintf(remote.gpu_list, sizeof(remote.gpu_list), "%s", buf);
    return n;
}

/* The first node's name when it resolves (as on sites with DNS for their
 * nodes), else its NodeAddr from slurmctld (one RPC, only then): a rendezvous
 * at a name that does not resolve waits until killed. */
static void reachable_address(const char *node, char *out, size_t len)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    snprintf(out, len, "%s", node);
    if (getaddrinfo(node, NULL, &hints, &res) == 0) {
        freeaddrinfo(res);
        return;
    }
    node_info_msg_t *msg = NULL;
    if (slurm_load_node_single(&msg, (char *)node, SHOW_ALL) == 0 && msg && msg->record_count > 0 &&
        msg->node_array[0].node_addr && msg->node_array[0].node_addr[0])
        snprintf(out, len, "%s", msg->node_array[0].node_addr);
    if (msg)
        slurm_free_node_info_msg(msg);
}

/* torch.distributed's env:// rendezvous for the owners: the step's first node
 * (an address that resolves), and a port that concurrent steps do not share
 * (port.h).  Values the user set are kept. */
static void rendezvous(spank_t sp)
{
    char buf[4096];
    uint32_t jobid = 0, stepid = 0;
    spank_get_item(sp, S_JOB_ID, &jobid);
    spank_get_item(sp, S_JOB_STEPID, &stepid);
    remote.master_port = ddl_master_port(jobid, stepid,
                                         getenv_str(sp, "SLURM_STEP_RESV_PORTS", buf, sizeof(buf)) ? buf : NULL);
    if (getenv_str(sp, "SLURM_STEP_NODELIST", buf, sizeof(buf)) || getenv_str(sp, "SLURM_NODELIST", buf, sizeof(buf))) {
        hostlist_t hl = slurm_hostlist_create(buf);
        char *first = hl ? slurm_hostlist_shift(hl) : NULL;
        if (first)
            reachable_address(first, remote.master_addr, sizeof(remote.master_addr));
        free(first);
        if (hl)
            slurm_hostlist_destroy(hl);
    }
}

/* A task count that does not match GPUs x lanes: the cli_filter (ddl_lanes.lua)
 * sets it unless the user gave one.  Ask slurmctld whether the filter is on
 * (only on this error path: it is one RPC). */
static const char *task_count_hint(void)
{
    slurm_conf_t *conf = NULL;
    int filter = -1;
    if (slurm_load_ctl_conf((time_t)0, &conf) == 0 && conf) {
        filter = conf->cli_filter_plugins && strstr(conf->cli_filter_plugins, "lua") != NULL;
        slurm_free_ctl_conf(conf);
    }
    if (filter == 1)
        return ", or give no task count (-n, --ntasks-per-node) and the cli_filter sets it";
    if (filter == 0)
        return " (or ask your admin to enable the DDL cli_filter, which does this for you)";
    return "";
}

static int plan_node(spank_t sp, int lanes)
{
    uint32_t ntasks = 0, nodeid = 0, nnodes = 0;
    char *cores_str = NULL;
    spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &ntasks);
    spank_get_item(sp, S_JOB_NODEID, &nodeid);
    spank_get_item(sp, S_JOB_NNODES, &nnodes);
    remote.nodeid = (int)nodeid;
    remote.nnodes = (int)nnodes;
    rendezvous(sp);
    int ngpus = step_gpus(sp);
    if (ngpus < 0)
        return -1;
    static int cores[MAX_IDS];
    int ncores = 0;
    if (spank_get_item(sp, S_STEP_ALLOC_CORES, &cores_str) == ESPANK_SUCCESS && cores_str)
        ncores = ddl_cpulist_parse(cores_str, cores, MAX_IDS);
    if (ncores < 0) {
        snprintf(remote.error, sizeof(remote.error), "cannot read the step's cores from '%s'", cores_str);
        return -1;
    }
    ddl_topo_t topo;
    char err[256];
    if (ddl_topo_load(NULL, &topo, err, sizeof(err)) != 0) {
        snprintf(remote.error, sizeof(remote.error), "%s", err);
        return -1;
    }
    char why[400];
    ddl_status_t st = ddl_plan_make(&topo, remote.gpu_ids, ngpus, cores, ncores, lanes, (int)ntasks, &remote.plan,
                                    why, sizeof(why));
    if (st != DDL_OK)
        snprintf(remote.error, sizeof(remote.error), "%s%s", why,
                 st == DDL_ERR_LAYOUT && ngpus > 0 && (int)ntasks != ngpus * lanes ? task_count_hint() : "");
    else
        for (int t = 0; t < remote.plan.ntasks; t++) {
            const ddl_task_plan_t *tp = &remote.plan.tasks[t];
            char list[512];
            slurm_verbose("ddl: node %d task %d: GPU %d (id %d) lane %d %s, cores %s (first %s)", remote.nodeid, t,
                          tp->gpu, remote.gpu_ids[tp->gpu], tp->lane, tp->role == DDL_ROLE_OWNER ? "owner" : "helper",
                          ddl_cpulist_format(tp->cores, tp->ncores, list, sizeof(list)), ddl_nearness_name(tp->near));
        }
    ddl_topo_free(&topo);
    return st == DDL_OK ? 0 : -1;
}

/* In daemon mode a missing helper program would only show when the helpers
 * fail to exec, with the owners left waiting for them: refuse the step now. */
static int check_helper_program(int lanes)
{
    const char *path = ddl_spank.policy.helper_path;
    struct stat st;
    if (lanes < 2 || ddl_spank.policy.helpers != DDL_SPANK_HELPERS_DAEMON)
        return 0;
    int exists = stat(path, &st) == 0;
    if (!exists || !S_ISREG(st.st_mode) || !(st.st_mode & 0111)) {
        snprintf(remote.error, sizeof(remote.error), "the helper program %s (plugstack helper=) %s on this node: "
                 "install ddl-lanes here or fix the plugstack line (ask your admin)", path,
                 exists ? "is not an executable file" : "does not exist");
        return -1;
    }
    return 0;
}

/* The site's rails, as this node has them, and each task's.  A rail the node
 * lacks refuses the step here, before any program starts: otherwise the lanes
 * would go wherever their stack's default puts them, or the stack would fail
 * later and less clearly. */
static int resolve_rails(void)
{
    const ddl_spank_policy_t *pol = &ddl_spank.policy;
    if (pol->nrails == 0 || remote.plan.lanes < 2)
        return 0;
    for (int i = 0; i < pol->nrails; i++) {
        ddl_rail_resolve("/sys", pol->rails[i], &remote.rails[i]);
        if (!remote.rails[i].found) {
            char host[256] = "";
            gethostname(host, sizeof(host) - 1);
            snprintf(remote.error, sizeof(remote.error), "the site's rails= names %s, which node %s does not have (no "
                     "network interface, RDMA device or cxi device of that name in this node's network namespace "
                     "and /sys/class): the step does not start; ask your admin to fix the plugstack line's rails=, "
                     "or run without --ddl-lanes", pol->rails[i], host);
            return -1;
        }
    }
    int G = remote.plan.ngpus;
    remote.task_rail = malloc(sizeof(int) * (size_t)remote.plan.ntasks);
    if (!remote.task_rail) {
        snprintf(remote.error, sizeof(remote.error), "out of memory for the rails of %d tasks", remote.plan.ntasks);
        return -1;
    }
    for (int t = 0; t < remote.plan.ntasks; t++)
        remote.task_rail[t] = ddl_spank_rail_index(pol, remote.plan.tasks[t].gpu, remote.plan.tasks[t].lane, G);
    return 0;
}

/* Slurm's special steps (batch script, extern, interactive) carry step ids at
 * the top of the range; the lanes belong to the job's regular steps. */
#define DDL_FIRST_SPECIAL_STEP 0xfffffff0u

int ddl_remote_user_init(spank_t sp)
{
    int lanes;
    lanes_from_t from;
    uint32_t stepid = 0;
    memset(&remote, 0, sizeof(remote));
    if (spank_get_item(sp, S_JOB_STEPID, &stepid) == ESPANK_SUCCESS && stepid >= DDL_FIRST_SPECIAL_STEP)
        return 0;
    if (resolve_lanes(sp, &lanes, &from) != 0) {
        remote.active = 1;
        slurm_error("ddl: %s", remote.error);
        return 0; /* the tasks fail (task_init): a failed user_init ends the step with status 0 */
    }
    if (lanes == 0)
        return 0;
    /* The site default and DDL_LANES in the environment (the library's own
     * variable, inherited by every step of a job) do not apply to steps
     * without GPUs; only --ddl-lanes asks for them.  Nor do lanes the step
     * inherited apply to a step whose own task count does not fit them (srun
     * -n1 prepare.py in a job with lanes): it runs as a plain step. */
    if (from != LANES_OPTION) {
        int ngpus = step_gpus(sp);
        uint32_t ntasks = 0;
        spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &ntasks);
        if (ngpus <= 0)
            return 0;
        if (from == LANES_JOB && (int)ntasks != ngpus * lanes) {
            slurm_verbose("ddl: this step has %u tasks on this node, where the job's %d lanes per GPU need %d: it "
                          "runs without lanes", ntasks, lanes, ngpus * lanes);
            return 0;
        }
    }
    remote.active = 1;
    if (plan_node(sp, lanes) != 0 || check_helper_program(lanes) != 0 || resolve_rails() != 0) {
        slurm_error("ddl: %s", remote.error);
        return 0;
    }
    if (ddl_spank.policy.helpers == DDL_SPANK_HELPERS_DAEMON && ddl_owner_table_create(remote.plan.ntasks) != 0)
        slurm_info("ddl: warning: no table of task pids: helpers will not follow their owners");
    return 0;
}

int ddl_remote_task_post_fork(spank_t sp)
{
    if (remote.active && !remote.error[0])
        ddl_owner_record(sp);
    return 0;
}

/* A default for the task: a value already in the job's environment wins.
 * Returns 0, or -1 when it cannot be set. */
/* name=value in the task's environment (a value already there stays unless
 * overwrite); on failure the task's stderr says which variable and Slurm's
 * reason, and -1. */
static int set_env(spank_t sp, const char *name, const char *value, int overwrite)
{
    spank_err_t e = spank_setenv(sp, name, value, overwrite);
    if (e == ESPANK_SUCCESS || (!overwrite && e == ESPANK_ENV_EXISTS))
        return 0;
    fprintf(stderr, "ddl: cannot set %s=%s in the task's environment (spank_setenv: %s); the task does not start: "
            "report it to the site's admin, with slurmd's log of this step\n", name, value, spank_strerror(e));
    return -1;
}

static int set_unless_given(spank_t sp, const char *name, const char *value)
{
    return set_env(sp, name, value, 0);
}

static int set_int(spank_t sp, const char *name, int v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%d", v);
    return set_env(sp, name, buf, 1);
}

/* A stack's variable for the lane's rail: a value in the job's environment
 * wins, and none is set beside a variable of the job's that it conflicts with. */
struct rail_env {
    spank_t sp;
    int rc;
};

static void set_rail_env(void *ctx, const char *var, const char *value, const char *unless)
{
    struct rail_env *env = ctx;
    char buf[64];
    if (unless && getenv_str(env->sp, unless, buf, sizeof(buf))) {
        slurm_verbose("ddl: %s not set: the job sets %s", var, unless);
        return;
    }
    env->rc |= set_unless_given(env->sp, var, value);
}

static void bind_task(int task, const ddl_task_plan_t *tp)
{
    char msg[1024], cores[512];
    int rc = ddl_bind_cores(tp->cores, tp->ncores, msg, sizeof(msg));
    ddl_cpulist_format(tp->cores, tp->ncores, cores, sizeof(cores));
    if (rc == 0)
        slurm_verbose("ddl: task %d (cores %s): %s", task, cores, msg);
    else
        slurm_info("ddl: warning: task %d (cores %s) %s%s", task, cores, rc < 0 ? "not bound: " : "", msg);
}

/* A daemon-mode helper runs the helper program in place of the application and
 * follows its owner: DDL_OWNER_PID and DDL_OWNER_START name the owner's process,
 * which ddl-helper watches (without them it falls back to DDL_TIMEOUT). */
static int become_helper(spank_t sp, const ddl_task_plan_t *tp)
{
    pid_t pid;
    unsigned long long start;
    int rc = 0;
    if (ddl_owner_lookup(tp->gpu * remote.plan.lanes, &pid, &start) == 0) {
        char buf[32];
        snprintf(buf, sizeof(buf), "%llu", start);
        rc |= set_int(sp, "DDL_OWNER_PID", (int)pid);
        rc |= set_env(sp, "DDL_OWNER_START", buf, 1);
    }
    int argc = 0;
    char **argv = NULL;
    spank_err_t e = rc ? ESPANK_SUCCESS : spank_get_item(sp, S_JOB_ARGV, &argc, &argv);
    if (rc || e != ESPANK_SUCCESS || argc < 1) {
        if (!rc)
            fprintf(stderr, "ddl: cannot run the helper program %s in place of the application: spank_get_item"
                    "(S_JOB_ARGV) gave %s; helpers=daemon needs the task's argv (Slurm 22.05 or later), so set "
                    "helpers=app in the plugstack line to run the application on every lane\n",
                    ddl_spank.policy.helper_path, e != ESPANK_SUCCESS ? spank_strerror(e) : "no arguments");
        return -1;
    }
    argv[0] = ddl_spank.policy.helper_path; /* run in place of the application */
    return 0;
}

int ddl_remote_task_init(spank_t sp)
{
    if (!remote.active)
        return 0;
    /* user_init's slurm_error told the user, once for the node.  A failed
     * task_init fails the step only when the plugstack line says `required`;
     * under `optional` Slurm would run the task without lanes, so the task
     * ends here, before the application starts, whichever the site chose. */
    if (remote.error[0])
        _exit(DDL_SPANK_REFUSED_EXIT);
    int task = -1;
    if (spank_get_item(sp, S_TASK_ID, &task) != ESPANK_SUCCESS || task < 0 || task >= remote.plan.ntasks) {
        fprintf(stderr, "ddl: task id %d is outside the plan of %d tasks\n", task, remote.plan.ntasks);
        return -1;
    }
    const ddl_task_plan_t *tp = &remote.plan.tasks[task];
    int G = remote.plan.ngpus, owner = tp->role == DDL_ROLE_OWNER, daemon = ddl_spank.policy.helpers == DDL_SPANK_HELPERS_DAEMON;
    int rc = 0;
    rc |= set_int(sp, "DDL_LANES", remote.plan.lanes);
    rc |= set_int(sp, "DDL_LANE", tp->lane);
    rc |= set_int(sp, "DDL_GPU", tp->gpu);
    rc |= set_int(sp, "DDL_GPU_ID", remote.gpu_ids[tp->gpu]);
    rc |= set_int(sp, "DDL_GPUS_PER_NODE", G);
    rc |= set_int(sp, "DDL_NODE", remote.nodeid);
    rc |= set_int(sp, "DDL_NNODES", remote.nnodes);
    rc |= set_int(sp, "DDL_LOCAL_RANK", task);
    rc |= set_int(sp, "DDL_CORE", tp->core);
    char cores[512];
    rc |= set_env(sp, "DDL_CORES", ddl_cpulist_format(tp->cores, tp->ncores, cores, sizeof(cores)), 1);
    /* What Slurm said of every task (its --cpus-per-task) is not this task's
     * share: thread pools size themselves from these.  A user's
     * OMP_NUM_THREADS is kept. */
    rc |= set_int(sp, "SLURM_CPUS_PER_TASK", tp->ncores);
    char omp[32];
    snprintf(omp, sizeof(omp), "%d", tp->ncores);
    rc |= set_unless_given(sp, "OMP_NUM_THREADS", omp);
    rc |= set_env(sp, "DDL_ROLE", owner ? "owner" : "helper", 1);
    rc |= set_env(sp, "DDL_HELPERS", daemon ? "serve" : "collective", 1);
    /* Every lane sees all of the node's GPUs (CUDA IPC, NCCL); DDL_GPU says which is its own. */
    rc |= set_env(sp, "CUDA_VISIBLE_DEVICES", remote.gpu_list, 1);
    /* The plan numbers GPUs in PCI bus order; CUDA must too (its default puts
     * the fastest first). */
    rc |= set_env(sp, "CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
    if (owner) {
        /* A framework that initialises from the environment sees one rank per GPU. */
        rc |= set_int(sp, "RANK", remote.nodeid * G + tp->gpu);
        rc |= set_int(sp, "WORLD_SIZE", remote.nnodes * G);
        rc |= set_int(sp, "LOCAL_RANK", tp->gpu);
        rc |= set_int(sp, "LOCAL_WORLD_SIZE", G);
        char buf[256];
        if (!getenv_str(sp, "MASTER_ADDR", buf, sizeof(buf)) && remote.master_addr[0])
            rc |= set_env(sp, "MASTER_ADDR", remote.master_addr, 1);
        if (!getenv_str(sp, "MASTER_PORT", buf, sizeof(buf)))
            rc |= set_int(sp, "MASTER_PORT", remote.master_port);
    }
    if (rc)
        return -1; /* set_env said which */
    const ddl_spank_policy_t *pol = &ddl_spank.policy;
    if (pol->nrails > 0 && remote.plan.lanes > 1) {
        /* The node's lanes take the rails in turn, so that they drive all
         * links, and the owners are spread over them; each stack learns the
         * lane's rail from its own variables (fabric.h). */
        struct rail_env env = {sp, 0};
        rc |= set_env(sp, "DDL_RAIL", pol->rails[remote.task_rail[task]], 1);
        ddl_fabric_env(pol->stacks, remote.rails, remote.task_rail, remote.plan.ntasks, task, set_rail_env, &env);
        if (rc || env.rc)
            return -1; /* set_env said which */
    }
    if (pol->bind)
        bind_task(task, tp);
    if (!owner && daemon)
        return become_helper(sp, tp);
    return 0;
}

void ddl_remote_exit(void)
{
    free(remote.task_rail);
    remote.task_rail = NULL;
    ddl_plan_free(&remote.plan);
    ddl_owner_table_free();
}
