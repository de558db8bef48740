/* SPDX-License-Identifier: Apache-2.0 */
/* The table of settings (params.h): every DDL_* variable, parsed, checked and
 * agreed.  Uses core's parsers, the settings' values (choices.h), grid.h and
 * the tuning file's parser (tuning.h). */
#include "config.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "choices.h"
#include "grid.h"
#include "log.h"
#include "params.h"
#include "parse.h"
#include "ddl_limits.h"

static const char *const helper_modes[] = {"collective", "serve", NULL};
static const char *const select_modes[] = {"online", "model", NULL};
static const char *const debug_levels[] = {"NONE", "WARN", "INFO", "TRACE", "VERSION", NULL};

static ddl_status_t load_tuning(ddl_settings_t *s, const char *path);
static ddl_status_t load_topology(ddl_settings_t *s, const char *topo);
static int64_t tuning_digest(const ddl_settings_t *s) { return (int64_t)(ddl_tuning_digest(&s->tuning) >> 1); }
static int64_t grid_digest(const ddl_settings_t *s)
{
    uint64_t h = (uint64_t)s->grid.ndims; /* unsigned: the hash wraps by design */
    for (int d = 0; d < s->grid.ndims; d++)
        h = h * 1000003u + (uint64_t)s->grid.dims[d];
    return (int64_t)(h >> 1);
}

#define CONFIG(f) DDL_PARAM_CONFIG, offsetof(ddl_config_t, f)
#define SETTING(f) DDL_PARAM_SETTINGS, offsetof(ddl_settings_t, f)
#define NO_FIELD DDL_PARAM_NONE, 0

/* name, kind, default, choices, min, max, auto word, auto value, field, agree, load, digest, description */
static const ddl_param_t params[] = {
    {"DDL_LANES", DDL_PARAM_INT, "1", NULL, 1, DDL_MAX_LANES, NULL, 0, CONFIG(lanes), 1, NULL, NULL,
     "processes (lanes) per GPU; local rank t serves GPU t / lanes as lane t % lanes"},
    {"DDL_GPUS_PER_NODE", DDL_PARAM_INT, "0", NULL, 0, DDL_MAX_GPUS, NULL, 0, CONFIG(gpus_per_node), 1, NULL, NULL,
     "GPUs per node; 0 derives it as ranks per node / lanes"},
    {"DDL_NODE_SIZE", DDL_PARAM_INT, "0", NULL, 0, DDL_MAX_NODE_SIZE, NULL, 0, CONFIG(node_size), 1, NULL, NULL,
     "emulation switch for tests and benchmarks: split each host into virtual nodes of this many "
     "ranks (0: a node is a host)"},
    {"DDL_HELPERS", DDL_PARAM_ENUM, "collective", helper_modes, 0, 0, NULL, 0, CONFIG(helper_mode), 1, NULL, NULL,
     "how helpers take part: collective (every rank calls ddl_allreduce) or serve (helpers run "
     "ddl_serve, for example the ddl-helper program)"},
    {"DDL_TIMEOUT", DDL_PARAM_SECONDS, "300", NULL, 0, 0, NULL, 0, SETTING(timeout), 0, NULL, NULL,
     "seconds a wait for a peer inside a collective may last before the call fails with DDL_ERR_TIMED_OUT"},
    {"DDL_CHECK", DDL_PARAM_BOOL, "0", NULL, 0, 0, NULL, 0, SETTING(check), 1, NULL, NULL,
     "the full check before each allreduce: every rank's count, type and op gathered and compared (a "
     "cheaper signature check is always on)"},
    {"DDL_ALGO", DDL_PARAM_ENUM, "auto", ddl_algo_names, 0, 0, NULL, 0, SETTING(algo), 1, NULL, NULL,
     "allreduce algorithm: auto chooses per message size (see DDL_SELECT)"},
    {"DDL_SELECT", DDL_PARAM_ENUM, "online", select_modes, 0, 0, NULL, 0, SETTING(select), 1, NULL, NULL,
     "how auto chooses where no tuning-file band does: online (the first calls of each size class, by log2 "
     "of the bytes, time the system MPI, each lane algorithm and three chunk sizes, and every rank agrees on the "
     "fastest; DDL_DEBUG=INFO prints each decision) or model (DDL_MPI_THRESHOLD and the cost model)"},
    {"DDL_SELECT_DRIFT", DDL_PARAM_INT, "50", NULL, 1, 1000, NULL, 0, SETTING(select_drift), 1, NULL, NULL,
     "online selection: a size class whose time has grown by more than this many percent since its "
     "decision is timed again (checked every 50 ms or so of its calls; one that became faster by as much "
     "keeps its choice, with the new time as reference)"},
    {"DDL_TUNING_SAVE", DDL_PARAM_STRING, "", NULL, 0, 0, NULL, 0, NO_FIELD, 0, NULL, NULL,
     "online selection: rank 0 writes the decisions to this file as tuning-file bands, after each one; "
     "DDL_TUNING_FILE reads it back"},
    {"DDL_LANE_ALGO", DDL_PARAM_ENUM, "auto", ddl_inter_algo_names, 0, 0, NULL, 0, SETTING(lane_algo), 1, NULL, NULL,
     "inter-node algorithm of each lane: auto chooses per chunk from the cost model (see ddl-tune)"},
    {"DDL_GPU_TRANSPORT", DDL_PARAM_ENUM, "auto", ddl_gpu_transport_names, 0, 0, NULL, 0, SETTING(gpu_transport), 1,
     NULL, NULL,
     "how device buffers go between nodes: auto, staged (through pinned host memory), mpi (CUDA-aware "
     "MPI on device memory) or nccl (one NCCL communicator per lane)"},
    {"DDL_MPI_THRESHOLD", DDL_PARAM_SIZE, "auto", NULL, 0, 0, "auto", DDL_THRESHOLD_AUTO, SETTING(mpi_threshold), 1,
     NULL, NULL,
     "with DDL_ALGO=auto, messages below this many bytes use the system MPI_Allreduce on the "
     "owners; auto: online selection decides (DDL_SELECT=model: 512 on one node, 128K across nodes, "
     "measured crossovers, bench/JOURNAL.md); set, it holds under online selection too"},
    {"DDL_EXPLORE", DDL_PARAM_BOOL, "0", NULL, 0, 0, NULL, 0, SETTING(explore), 1, NULL, NULL,
     "PowerAI DDL's p: mode: online selection times ring and recursive doubling along every multiring "
     "dimension in turn, per size class, and later calls keep the faster per dimension"},
    {"DDL_CHUNK_SIZE", DDL_PARAM_SIZE, "auto", NULL, 4096, 0, "auto", 0, SETTING(chunk_size), 1, NULL, NULL,
     "bytes of a rank's slice moved per pipeline step between nodes, so that the intra-node "
     "reduction, the transfer and the write-back overlap; auto: from the cost model, 64K to 4M; else at "
     "least 4K and a multiple of 64"},
    {"DDL_INFLIGHT", DDL_PARAM_INT, "2", NULL, 2, 4, NULL, 0, SETTING(inflight), 1, NULL, NULL,
     "chunks of a rank's slice in flight between nodes at once: more let the phases of a multiring "
     "grid's dimensions run side by side"},
    {"DDL_STAGE_SIZE", DDL_PARAM_SIZE, "16M", NULL, 65536, 0, NULL, 0, SETTING(stage_size), 1, NULL, NULL,
     "bytes of shared memory per owner for buffers not from ddl_malloc; larger messages go "
     "through in rounds of this size; at least 64K"},
    {"DDL_HEAP_SIZE", DDL_PARAM_SIZE, "16G", NULL, 0, 0, NULL, 0, SETTING(heap_size), 0, NULL, NULL,
     "address space reserved per owner for ddl_malloc (memory is used only as allocated)"},
    {"DDL_TOPOLOGY", DDL_PARAM_STRING, "", NULL, 0, 0, NULL, 0, SETTING(grid), 1, load_topology, grid_digest,
     "multi-ring grid as GPUs per node x nodes per rack x racks ..., e.g. 4x8x2 (nodes of a rack "
     "are consecutive node indices); used by DDL_ALGO=multiring, and by auto instead of lane; unset: "
     "derived from Slurm's SLURM_TOPOLOGY_ADDR (topology/tree) when its leaf switches hold equal numbers "
     "of consecutive nodes"},
    {"DDL_TUNING_FILE", DDL_PARAM_STRING, "", NULL, 0, 0, NULL, 0, SETTING(tuning), 1, load_tuning, tuning_digest,
     "size bands and their algorithms as ddl-tune wrote them; unset: " DDL_TUNING_DEFAULT " when it exists, "
     "else the defaults above; none: no file"},
    {"DDL_DEBUG", DDL_PARAM_ENUM, "WARN", debug_levels, 0, 0, NULL, 0, NO_FIELD, 0, NULL, NULL,
     "log level: NONE, WARN, INFO (lane map and algorithm choices) or TRACE; VERSION: WARN, and the "
     "library's version once (INFO and TRACE print it too)"},
    {"DDL_DEBUG_TIMESTAMP", DDL_PARAM_BOOL, "0", NULL, 0, 0, NULL, 0, NO_FIELD, 0, NULL, NULL,
     "1: start every log line with the wall-clock time (UTC, milliseconds)"},
    {"DDL_DEBUG_SUBSYS", DDL_PARAM_STRING, "ALL", NULL, 0, 0, NULL, 0, NO_FIELD, 0, NULL, NULL,
     "subsystems to log, comma-separated from INIT, COLL, SHM, NET, ENV, ALL; ^ inverts"},
    {"DDL_DEBUG_FILE", DDL_PARAM_STRING, "", NULL, 0, 0, NULL, 0, NO_FIELD, 0, NULL, NULL,
     "log to this file instead of stderr; %h is replaced by the host, %p by the pid, %r by the rank"},
    {"DDL_TRACE", DDL_PARAM_STRING, "", NULL, 0, 0, NULL, 0, NO_FIELD, 0, NULL, NULL,
     "write Chrome/Perfetto trace events (each call and its phases, every chunk's transfer) to this file, one "
     "per process: %r is replaced by the rank, %h by the host, %p by the pid; ddl-trace-merge joins them"},
};
enum { NPARAMS = sizeof(params) / sizeof(params[0]) };

const ddl_param_t *ddl_params_table(size_t *count)
{
    *count = NPARAMS;
    return params;
}

const char *ddl_param_kind_name(ddl_param_kind_t kind)
{
    static const char *const names[] = {"int", "size", "seconds", "enum", "bool", "string"};
    return names[kind];
}

static const ddl_param_t *find_param(const char *name)
{
    for (size_t i = 0; i < NPARAMS; i++)
        if (strcmp(params[i].name, name) == 0)
            return &params[i];
    return NULL;
}

/* ddl_params_overlay: at most one value per setting, by table index (set
 * before a communicator is created, on the thread that creates it). */
#define OVERLAY_VALUE_MAX 256
static char overlay[NPARAMS][OVERLAY_VALUE_MAX];
static unsigned char overlaid[NPARAMS];

ddl_status_t ddl_params_overlay(const char *name, const char *value)
{
    const ddl_param_t *p = find_param(name);
    if (!p || !value)
        return ddl_error(DDL_ERR_INVALID_ARG, "%s is not a DDL setting (ddl-info lists them)", name ? name : "(null)");
    if (strlen(value) >= OVERLAY_VALUE_MAX)
        return ddl_error(DDL_ERR_INVALID_ARG, "the value for %s is longer than %d bytes", name, OVERLAY_VALUE_MAX - 1);
    size_t i = (size_t)(p - params);
    snprintf(overlay[i], sizeof(overlay[i]), "%s", value);
    overlaid[i] = 1;
    ddl_log_lookup(ddl_param_string); /* the log's settings may now differ from the environment's */
    return DDL_OK;
}

void ddl_params_overlay_clear(void)
{
    memset(overlaid, 0, sizeof(overlaid));
}

/* The overlay's value, else the environment's, or the default when it is unset or empty. */
static const char *value_of(const ddl_param_t *p)
{
    size_t i = (size_t)(p - params);
    const char *v = overlaid[i] ? overlay[i] : getenv(p->name);
    return v && *v ? v : p->defval;
}

const char *ddl_param_string(const char *name)
{
    const ddl_param_t *p = find_param(name);
    return p ? value_of(p) : "";
}

static ddl_status_t bad_value(const ddl_param_t *p, const char *value, const char *expect)
{
    return ddl_error(DDL_ERR_INVALID_ARG, "%s=%s is not %s; unset it for the default (%s) or give a valid value",
                     p->name, value, expect, p->defval);
}

/* What the kind reads, for messages. */
static void expectation(const ddl_param_t *p, char *buf, size_t len)
{
    switch (p->kind) {
    case DDL_PARAM_INT:
        snprintf(buf, len, "an integer from %.0f to %.0f", p->min, p->max);
        return;
    case DDL_PARAM_SIZE:
        snprintf(buf, len, "a byte count such as 65536, 64K or 16M%s%s", p->auto_word ? ", or " : "",
                 p->auto_word ? p->auto_word : "");
        return;
    case DDL_PARAM_SECONDS:
        snprintf(buf, len, "a positive number of seconds");
        return;
    case DDL_PARAM_BOOL:
        snprintf(buf, len, "a boolean (0/1, yes/no, on/off)");
        return;
    case DDL_PARAM_ENUM: {
        size_t o = (size_t)snprintf(buf, len, "one of");
        for (int i = 0; p->choices[i] && o < len; i++)
            o += (size_t)snprintf(buf + o, len - o, "%s %s", i ? "," : "", p->choices[i]);
        return;
    }
    case DDL_PARAM_STRING:
        snprintf(buf, len, "valid");
        return;
    }
}

/* Read p from the environment into *dst (the field, of the kind's C type). */
static ddl_status_t read_param(const ddl_param_t *p, void *dst)
{
    const char *v = value_of(p);
    char expect[256];
    int bad = 0;
    switch (p->kind) {
    case DDL_PARAM_INT: {
        long x;
        bad = ddl_parse_long(v, (long)p->min, (long)p->max, &x) != 0;
        if (!bad)
            *(int *)dst = (int)x;
        break;
    }
    case DDL_PARAM_SIZE: {
        size_t x;
        if (p->auto_word && strcasecmp(v, p->auto_word) == 0) {
            *(size_t *)dst = p->auto_value;
            return DDL_OK;
        }
        bad = ddl_parse_size(v, &x) != 0;
        if (!bad && (double)x < p->min)
            return ddl_error(DDL_ERR_INVALID_ARG, "%s=%s is below the minimum of %.0f bytes", p->name, v, p->min);
        if (!bad)
            *(size_t *)dst = x;
        break;
    }
    case DDL_PARAM_SECONDS:
        bad = ddl_parse_seconds(v, (double *)dst) != 0;
        break;
    case DDL_PARAM_ENUM:
        bad = ddl_parse_enum(v, p->choices, (int *)dst) != 0;
        break;
    case DDL_PARAM_BOOL:
        bad = ddl_parse_bool(v, (int *)dst) != 0;
        break;
    case DDL_PARAM_STRING:
        break;
    }
    if (bad) {
        expectation(p, expect, sizeof(expect));
        return bad_value(p, v, expect);
    }
    return DDL_OK;
}

ddl_status_t ddl_param_long(const char *name, long *out)
{
    const ddl_param_t *p = find_param(name);
    int v;
    if (!p || p->kind != DDL_PARAM_INT)
        return ddl_error(DDL_ERR_INVALID_ARG, "%s is not an integer variable", name);
    ddl_status_t st = read_param(p, &v);
    if (st == DDL_OK)
        *out = v;
    return st;
}

/* Every variable of one target, in table order. */
static ddl_status_t load_target(ddl_param_target_t target, void *base)
{
    for (size_t i = 0; i < NPARAMS; i++) {
        const ddl_param_t *p = &params[i];
        if (p->target != target)
            continue;
        ddl_status_t st = p->kind == DDL_PARAM_STRING ? p->load(base, value_of(p))
                                                      : read_param(p, (char *)base + p->field);
        if (st != DDL_OK)
            return st;
    }
    return DDL_OK;
}

ddl_status_t ddl_config_load(ddl_config_t *cfg)
{
    return load_target(DDL_PARAM_CONFIG, cfg);
}

int ddl_params_agreement(const ddl_settings_t *s, const ddl_config_t *cfg, int64_t *values, const char **names,
                         int max)
{
    int n = 0;
    for (size_t i = 0; i < NPARAMS && n < max; i++) {
        const ddl_param_t *p = &params[i];
        if (!p->agree)
            continue;
        const char *base = p->target == DDL_PARAM_CONFIG ? (const char *)cfg : (const char *)s;
        int64_t v = 0;
        switch (p->kind) {
        case DDL_PARAM_SIZE: v = (int64_t)*(const size_t *)(base + p->field); break;
        case DDL_PARAM_SECONDS: v = (int64_t)ddl_double_to_ll(*(const double *)(base + p->field) * 1e3, 0, LLONG_MAX); break;
        case DDL_PARAM_STRING: v = p->digest(s); break;
        default: v = *(const int *)(base + p->field); break;
        }
        names[n] = p->name;
        values[n++] = v;
    }
    return n;
}

int ddl_param_range(const ddl_param_t *p, char *buf, size_t len)
{
    buf[0] = '\0';
    if (p->kind != DDL_PARAM_INT && p->kind != DDL_PARAM_SIZE)
        return 0;
    if (p->max > 0)
        snprintf(buf, len, "%.0f to %.0f", p->min, p->max);
    else if (p->min > 0)
        snprintf(buf, len, "at least %.0f", p->min);
    return buf[0] != '\0';
}

void ddl_param_agreed_text(const char *name, int64_t v, int mine, char *buf, size_t len)
{
    const ddl_param_t *p = find_param(name);
    int n = 0;
    while (p && p->kind == DDL_PARAM_ENUM && p->choices[n])
        n++;
    if (p && p->kind == DDL_PARAM_ENUM && v >= 0 && v < n)
        snprintf(buf, len, "%s", p->choices[v]);
    else if (p && p->kind == DDL_PARAM_SECONDS)
        snprintf(buf, len, "%g", (double)v / 1e3);
    else if (p && p->kind == DDL_PARAM_STRING)
        snprintf(buf, len, "%s", mine ? ddl_param_string(name) : "another value");
    else
        snprintf(buf, len, "%lld", (long long)v);
}

static ddl_status_t load_tuning(ddl_settings_t *s, const char *path)
{
    memset(&s->tuning, 0, sizeof(s->tuning));
    ddl_model_defaults(&s->tuning.model);
    s->tuning_path[0] = '\0';
    if (strcmp(path, "none") == 0 || strcmp(path, "/dev/null") == 0)
        return DDL_OK; /* no file, not even the default */
    if (!path[0]) {
        if (access(DDL_TUNING_DEFAULT, R_OK) != 0)
            return DDL_OK;
        path = DDL_TUNING_DEFAULT;
    }
    if (ddl_tuning_load(path, &s->tuning) != DDL_OK)
        return ddl_error(DDL_ERR_INVALID_ARG, "%s; fix it, run ddl-tune again, or unset DDL_TUNING_FILE",
                         ddl_last_error());
    snprintf(s->tuning_path, sizeof(s->tuning_path), "%s", path);
    return DDL_OK;
}

static ddl_status_t load_topology(ddl_settings_t *s, const char *topo)
{
    memset(&s->grid, 0, sizeof(s->grid));
    if (topo[0] && ddl_grid_parse(topo, &s->grid) != DDL_OK)
        return ddl_error(DDL_ERR_INVALID_ARG, "%s", ddl_last_error());
    return DDL_OK;
}

ddl_status_t ddl_settings_load(ddl_settings_t *s)
{
    ddl_status_t st = load_target(DDL_PARAM_SETTINGS, s);
    if (st != DDL_OK)
        return st;
    size_t total;
    if (__builtin_add_overflow(s->stage_size, s->heap_size, &total) || total > (size_t)PTRDIFF_MAX / 2)
        return ddl_error(DDL_ERR_INVALID_ARG, "DDL_STAGE_SIZE=%s plus DDL_HEAP_SIZE=%s is more address space than a "
                         "process has; give each at most a few TiB", ddl_param_string("DDL_STAGE_SIZE"),
                         ddl_param_string("DDL_HEAP_SIZE"));
    if (s->chunk_size % 64 != 0)
        return ddl_error(DDL_ERR_INVALID_ARG, "DDL_CHUNK_SIZE=%zu is not a multiple of 64 bytes (the chunk buffers' "
                         "alignment); round it, e.g. to 64K", s->chunk_size);
    return DDL_OK;
}

void ddl_params_log_env(void)
{
    static int logged;
    if (logged++)
        return;
    for (size_t i = 0; i < NPARAMS; i++) {
        const char *v = getenv(params[i].name);
        if (overlaid[i])
            DDL_INFO(DDL_SUBSYS_ENV, "%s=%s (default %s; from the PowerAI options%s%s)", params[i].name, overlay[i],
                     params[i].defval, v ? ", over the environment's " : "", v ? v : "");
        else if (v)
            DDL_INFO(DDL_SUBSYS_ENV, "%s=%s (default %s)", params[i].name, v, params[i].defval);
    }
}
