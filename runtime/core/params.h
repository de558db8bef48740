/* SPDX-License-Identifier: Apache-2.0 */
/* Every configuration variable in one typed table {name, default, description},
 * read from the environment.  ddl-info lists the table. */
#ifndef DDL_PARAMS_H
#define DDL_PARAMS_H

#include <stddef.h>
#include "ddl.h"
#include "grid.h"
#include "tuning.h"

typedef enum {
    DDL_PARAM_INT,
    DDL_PARAM_SIZE,
    DDL_PARAM_SECONDS,
    DDL_PARAM_ENUM,
    DDL_PARAM_BOOL,
    DDL_PARAM_STRING,
} ddl_param_kind_t;

/* Where a variable's value goes when it is read. */
typedef enum {
    DDL_PARAM_NONE = 0,  /* read by its user (the log reads DDL_DEBUG*) */
    DDL_PARAM_CONFIG,    /* a field of ddl_config_t (ddl_config_init) */
    DDL_PARAM_SETTINGS,  /* a field of ddl_settings_t (ddl_settings_load) */
} ddl_param_target_t;

struct ddl_settings;

/* One declaration per variable: name, kind, default, bounds, the struct field
 * it fills and whether every rank must have the same value.  Loading, the
 * ranks' agreement and ddl-info all iterate the table. */
typedef struct {
    const char *name;
    ddl_param_kind_t kind;
    const char *defval;
    const char *const *choices; /* DDL_PARAM_ENUM: NULL-terminated */
    double min, max;            /* INT, SIZE (bytes), SECONDS; max 0: none */
    const char *auto_word;      /* SIZE: a word that stands for auto_value */
    size_t auto_value;
    ddl_param_target_t target;
    size_t field;               /* offsetof in the target struct */
    int agree;                  /* ranks must agree (checked at ddl_comm_create) */
    /* STRING with a SETTINGS target: turn the value into settings (may be "") */
    ddl_status_t (*load)(struct ddl_settings *s, const char *value);
    /* STRING that ranks agree on: what they compare (a digest of what it loaded) */
    int64_t (*digest)(const struct ddl_settings *s);
    const char *description;
} ddl_param_t;

const ddl_param_t *ddl_params_table(size_t *count);
const char *ddl_param_kind_name(ddl_param_kind_t kind);

/* The value set for this process (ddl_params_overlay), else the
 * environment's, else the default.  Never NULL for a known name. */
const char *ddl_param_string(const char *name);
/* Settings for this process over the environment, without changing it: the
 * next communicator (and logging) reads name as value.  PowerAI's options
 * string comes in this way (ddl_options_apply).  DDL_ERR_INVALID_ARG for a
 * name that is not a setting or a value too long; ddl_params_overlay_clear
 * drops them all. */
ddl_status_t ddl_params_overlay(const char *name, const char *value);
void ddl_params_overlay_clear(void);
/* Typed read of one variable, by the table's rules: a malformed or
 * out-of-range value is DDL_ERR_INVALID_ARG with a message naming it. */
ddl_status_t ddl_param_long(const char *name, long *out);

#define DDL_THRESHOLD_AUTO ((size_t)-1)
#define DDL_CHUNK_MAX ((size_t)4 << 20) /* the largest chunk DDL_CHUNK_SIZE=auto picks */
/* The crossovers measured with ddl-bench on a 2-core host (bench/JOURNAL.md):
 * on one node the shared-memory lane path wins from about 512 bytes; across
 * nodes (2 nodes x 2 rails of 1 Gbit/s, emulated) the lanes win over plain MPI
 * from 128 KiB and lose below. */
#define DDL_MPI_THRESHOLD_ONE_NODE 512
#define DDL_MPI_THRESHOLD_NODES (128u << 10)

typedef enum { DDL_SELECT_ONLINE = 0, DDL_SELECT_MODEL } ddl_select_mode_t;

/* Collective-path settings, read once per communicator. */
typedef struct ddl_settings {
    double timeout;        /* DDL_TIMEOUT, seconds */
    int check;             /* DDL_CHECK */
    int algo;              /* DDL_ALGO: ddl_algo_id_t */
    int lane_algo;         /* DDL_LANE_ALGO: ddl_inter_algo_id_t */
    int gpu_transport;     /* DDL_GPU_TRANSPORT: ddl_gpu_transport_t (resolved from auto at creation) */
    size_t mpi_threshold;  /* DDL_MPI_THRESHOLD, or DDL_THRESHOLD_AUTO */
    int explore;           /* DDL_EXPLORE */
    int select;            /* DDL_SELECT: ddl_select_mode_t */
    int select_drift;      /* DDL_SELECT_DRIFT, percent */
    int inflight;          /* DDL_INFLIGHT: chunks in flight between nodes, 2 to DDL_NSCHED */
    size_t chunk_size;     /* DDL_CHUNK_SIZE; 0: auto (the cost model's, up to DDL_CHUNK_MAX) */
    size_t stage_size;     /* DDL_STAGE_SIZE */
    size_t heap_size;      /* DDL_HEAP_SIZE */
    ddl_tuning_t tuning;   /* DDL_TUNING_FILE; no bands when there is none */
    char tuning_path[512];
    ddl_grid_t grid;       /* DDL_TOPOLOGY; ndims 0 when unset */
} ddl_settings_t;

/* Every SETTINGS variable, then the checks across variables. */
ddl_status_t ddl_settings_load(ddl_settings_t *s);
/* Every CONFIG variable (ddl_config_init). */
ddl_status_t ddl_config_load(ddl_config_t *cfg);
/* The values ranks must agree on, in table order: at most max of them, with
 * their names; returns how many. */
int ddl_params_agreement(const ddl_settings_t *s, const ddl_config_t *cfg, int64_t *values, const char **names,
                         int max);
/* The values the table accepts for p, "2 to 4" or "at least 4096" (bytes),
 * into buf; 0 (buf "") where it sets no bound. */
int ddl_param_range(const ddl_param_t *p, char *buf, size_t len);
/* How a value of ddl_params_agreement reads in a message: the enum's word,
 * seconds, the number; a string's own text where mine (this rank's), else
 * "another value" (the ranks compare a digest of it). */
void ddl_param_agreed_text(const char *name, int64_t v, int mine, char *buf, size_t len);
/* Log, once per process at INFO, every variable that is set in the
 * environment or the overlay. */
void ddl_params_log_env(void);

#endif
