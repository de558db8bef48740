#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "algo.h"
#include "gpu.h"
#include "grid.h"
#include "log.h"
#include "params.h"
#include "parse.h"
#include "ddl_limits.h"

static const char *const helper_modes[] = {"collective", "serve", NULL};
static const char *const debug_levels[] = {"NONE", "WARN", "INFO", "TRACE", NULL};

static const ddl_param_t params[] = {
    {"DDL_LANES", DDL_PARAM_INT, "1", NULL, 1, DDL_MAX_LANES,
     "processes (lanes) per GPU; local rank t serves GPU t / lanes as lane t % lanes"},
    {"DDL_GPUS_PER_NODE", DDL_PARAM_INT, "0", NULL, 0, DDL_MAX_GPUS,
     "GPUs per node; 0 derives it as ranks per node / lanes"},
    {"DDL_NODE_SIZE", DDL_PARAM_INT, "0", NULL, 0, DDL_MAX_NODE_SIZE,
     "emulation switch for tests and benchmarks: split each host into virtual nodes of this many "
     "ranks (0: a node is a host)"},
    {"DDL_HELPERS", DDL_PARAM_ENUM, "collective", helper_modes, 0, 0,
     "how helpers take part: collective (every rank calls ddl_allreduce) or serve (helpers run "
     "ddl_serve, for example the ddl-helper program)"},
    {"DDL_TIMEOUT", DDL_PARAM_SECONDS, "300", NULL, 0, 0,
     "seconds any wait for a peer may last before the call fails with DDL_ERR_TIMED_OUT"},
    {"DDL_CHECK", DDL_PARAM_BOOL, "0", NULL, 0, 0,
     "verify before each allreduce that every rank passed the same count, type and op"},
    {"DDL_ALGO", DDL_PARAM_ENUM, "auto", ddl_algo_names, 0, 0,
     "allreduce algorithm: auto chooses by message size (see DDL_MPI_THRESHOLD)"},
    {"DDL_LANE_ALGO", DDL_PARAM_ENUM, "auto", ddl_inter_algo_names, 0, 0,
     "inter-node algorithm of each lane: auto chooses per chunk from the cost model (see ddl-tune)"},
    {"DDL_GPU_TRANSPORT", DDL_PARAM_ENUM, "auto", ddl_gpu_transport_names, 0, 0,
     "how device buffers go between nodes: auto, staged (through pinned host memory), mpi (CUDA-aware "
     "MPI on device memory) or nccl (one NCCL communicator per lane)"},
    {"DDL_MPI_THRESHOLD", DDL_PARAM_SIZE, "auto", NULL, 0, 0,
     "with DDL_ALGO=auto, messages below this many bytes use the system MPI_Allreduce on the "
     "owners; auto: 512 on one node, 128K across nodes (measured crossovers, bench/RESULTS.md)"},
    {"DDL_EXPLORE", DDL_PARAM_BOOL, "0", NULL, 0, 0,
     "PowerAI DDL's p: mode: the first calls of each chunk size time ring and recursive doubling along "
     "every multiring dimension, and later calls keep the faster per dimension"},
    {"DDL_CHUNK_SIZE", DDL_PARAM_SIZE, "auto", NULL, 0, 0,
     "bytes of a rank's slice moved per pipeline step between nodes, so that the intra-node "
     "reduction, the transfer and the write-back overlap; auto: from the cost model, 64K to 4M"},
    {"DDL_INFLIGHT", DDL_PARAM_INT, "2", NULL, 2, 4,
     "chunks of a rank's slice in flight between nodes at once: more let the phases of a multiring "
     "grid's dimensions run side by side"},
    {"DDL_STAGE_SIZE", DDL_PARAM_SIZE, "16M", NULL, 0, 0,
     "bytes of shared memory per owner for buffers not from ddl_malloc; larger messages go "
     "through in rounds of this size"},
    {"DDL_HEAP_SIZE", DDL_PARAM_SIZE, "16G", NULL, 0, 0,
     "address space reserved per owner for ddl_malloc (memory is used only as allocated)"},
    {"DDL_TOPOLOGY", DDL_PARAM_STRING, "", NULL, 0, 0,
     "multi-ring grid as GPUs per node x nodes per rack x racks ..., e.g. 4x8x2 (nodes of a rack "
     "are consecutive node indices); used by DDL_ALGO=multiring, and by auto instead of lane; unset: "
     "derived from Slurm's SLURM_TOPOLOGY_ADDR (topology/tree) when its leaf switches hold equal numbers "
     "of consecutive nodes"},
    {"DDL_TUNING_FILE", DDL_PARAM_STRING, "", NULL, 0, 0,
     "size bands and their algorithms as ddl-tune wrote them; unset: " DDL_TUNING_DEFAULT " when it exists, "
     "else the defaults above"},
    {"DDL_DEBUG", DDL_PARAM_ENUM, "WARN", debug_levels, 0, 0,
     "log level: NONE, WARN, INFO (lane map and algorithm choices) or TRACE"},
    {"DDL_DEBUG_SUBSYS", DDL_PARAM_STRING, "ALL", NULL, 0, 0,
     "subsystems to log, comma-separated from INIT, COLL, SHM, NET, ENV, ALL; ^ inverts"},
    {"DDL_DEBUG_FILE", DDL_PARAM_STRING, "", NULL, 0, 0,
     "log to this file instead of stderr; %h is replaced by the host, %p by the pid"},
};

const ddl_param_t *ddl_params_table(size_t *count)
{
    *count = sizeof(params) / sizeof(params[0]);
    return params;
}

const char *ddl_param_kind_name(ddl_param_kind_t kind)
{
    static const char *const names[] = {"int", "size", "seconds", "enum", "bool", "string"};
    return names[kind];
}

static const ddl_param_t *find_param(const char *name)
{
    for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++)
        if (strcmp(params[i].name, name) == 0)
            return &params[i];
    return NULL;
}

const char *ddl_param_string(const char *name)
{
    const ddl_param_t *p = find_param(name);
    const char *v = getenv(name);
    if (v && *v)
        return v;
    return p ? p->defval : "";
}

static ddl_status_t bad_value(const ddl_param_t *p, const char *value, const char *expect)
{
    return ddl_error(DDL_ERR_INVALID_ARG, "%s=%s is not %s; unset it for the default (%s) or give a valid value",
                     p->name, value, expect, p->defval);
}

ddl_status_t ddl_param_long(const char *name, long *out)
{
    const ddl_param_t *p = find_param(name);
    const char *v = ddl_param_string(name);
    if (ddl_parse_long(v, p->min, p->max, out) != 0) {
        char expect[96];
        snprintf(expect, sizeof(expect), "an integer from %ld to %ld", p->min, p->max);
        return bad_value(p, v, expect);
    }
    return DDL_OK;
}

ddl_status_t ddl_param_size(const char *name, size_t *out)
{
    const char *v = ddl_param_string(name);
    if (ddl_parse_size(v, out) != 0)
        return bad_value(find_param(name), v, "a byte count such as 65536, 64K or 16M");
    return DDL_OK;
}

ddl_status_t ddl_param_seconds(const char *name, double *out)
{
    const char *v = ddl_param_string(name);
    if (ddl_parse_seconds(v, out) != 0)
        return bad_value(find_param(name), v, "a positive number of seconds");
    return DDL_OK;
}

ddl_status_t ddl_param_enum(const char *name, int *out)
{
    const ddl_param_t *p = find_param(name);
    const char *v = ddl_param_string(name);
    if (ddl_parse_enum(v, p->choices, out) != 0) {
        char expect[256] = "one of";
        for (int i = 0; p->choices[i]; i++) {
            size_t len = strlen(expect);
            snprintf(expect + len, sizeof(expect) - len, "%s %s", i ? "," : "", p->choices[i]);
        }
        return bad_value(p, v, expect);
    }
    return DDL_OK;
}

ddl_status_t ddl_param_bool(const char *name, int *out)
{
    const char *v = ddl_param_string(name);
    if (ddl_parse_bool(v, out) != 0)
        return bad_value(find_param(name), v, "a boolean (0/1, yes/no, on/off)");
    return DDL_OK;
}

static ddl_status_t load_tuning(ddl_settings_t *s)
{
    const char *path = ddl_param_string("DDL_TUNING_FILE");
    memset(&s->tuning, 0, sizeof(s->tuning));
    ddl_model_defaults(&s->tuning.model);
    s->tuning_path[0] = '\0';
    if (!path[0]) {
        if (access(DDL_TUNING_DEFAULT, R_OK) != 0)
            return DDL_OK;
        path = DDL_TUNING_DEFAULT;
    }
    char err[640];
    if (ddl_tuning_load(path, &s->tuning, err, sizeof(err)) != 0)
        return ddl_error(DDL_ERR_INVALID_ARG, "%s; fix it, run ddl-tune again, or unset DDL_TUNING_FILE", err);
    snprintf(s->tuning_path, sizeof(s->tuning_path), "%s", path);
    return DDL_OK;
}

ddl_status_t ddl_settings_load(ddl_settings_t *s)
{
    ddl_status_t st;
    DDL_CHECK_GOTO(ddl_param_seconds("DDL_TIMEOUT", &s->timeout), st, out);
    DDL_CHECK_GOTO(ddl_param_bool("DDL_CHECK", &s->check), st, out);
    DDL_CHECK_GOTO(ddl_param_enum("DDL_ALGO", &s->algo), st, out);
    DDL_CHECK_GOTO(ddl_param_enum("DDL_LANE_ALGO", &s->lane_algo), st, out);
    DDL_CHECK_GOTO(ddl_param_enum("DDL_GPU_TRANSPORT", &s->gpu_transport), st, out);
    if (strcasecmp(ddl_param_string("DDL_MPI_THRESHOLD"), "auto") == 0)
        s->mpi_threshold = DDL_THRESHOLD_AUTO;
    else
        DDL_CHECK_GOTO(ddl_param_size("DDL_MPI_THRESHOLD", &s->mpi_threshold), st, out);
    DDL_CHECK_GOTO(ddl_param_bool("DDL_EXPLORE", &s->explore), st, out);
    long inflight;
    DDL_CHECK_GOTO(ddl_param_long("DDL_INFLIGHT", &inflight), st, out);
    s->inflight = (int)inflight;
    if (strcasecmp(ddl_param_string("DDL_CHUNK_SIZE"), "auto") == 0)
        s->chunk_size = 0;
    else
        DDL_CHECK_GOTO(ddl_param_size("DDL_CHUNK_SIZE", &s->chunk_size), st, out);
    DDL_CHECK_GOTO(ddl_param_size("DDL_STAGE_SIZE", &s->stage_size), st, out);
    DDL_CHECK_GOTO(ddl_param_size("DDL_HEAP_SIZE", &s->heap_size), st, out);
    DDL_CHECK_GOTO(load_tuning(s), st, out);
    const char *topo = ddl_param_string("DDL_TOPOLOGY");
    char err[256];
    memset(&s->grid, 0, sizeof(s->grid));
    if (topo[0] && ddl_grid_parse(topo, &s->grid, err, sizeof(err)) != 0) {
        st = ddl_error(DDL_ERR_INVALID_ARG, "%s", err);
        goto out;
    }

    if (s->chunk_size != 0 && s->chunk_size < 4096)
        st = ddl_error(DDL_ERR_INVALID_ARG, "DDL_CHUNK_SIZE=%zu is below the minimum of 4K", s->chunk_size);
    else if (s->stage_size < 65536)
        st = ddl_error(DDL_ERR_INVALID_ARG, "DDL_STAGE_SIZE=%zu is below the minimum of 64K", s->stage_size);
    else if (s->stage_size + s->heap_size < s->stage_size || s->stage_size + s->heap_size > (size_t)PTRDIFF_MAX / 2)
        st = ddl_error(DDL_ERR_INVALID_ARG, "DDL_STAGE_SIZE=%s plus DDL_HEAP_SIZE=%s is more address space than a "
                       "process has; give each at most a few TiB", ddl_param_string("DDL_STAGE_SIZE"),
                       ddl_param_string("DDL_HEAP_SIZE"));
    else if (s->chunk_size % 64 != 0)
        st = ddl_error(DDL_ERR_INVALID_ARG, "DDL_CHUNK_SIZE=%zu is not a multiple of 64 bytes (the chunk buffers' "
                       "alignment); round it, e.g. to 64K", s->chunk_size);
out:
    return st;
}

void ddl_params_log_env(void)
{
    static int logged;
    if (logged++)
        return;
    for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
        const char *v = getenv(params[i].name);
        if (v)
            DDL_INFO(DDL_SUBSYS_ENV, "%s=%s (default %s)", params[i].name, v, params[i].defval);
    }
}
