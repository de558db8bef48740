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

typedef struct {
    const char *name;
    ddl_param_kind_t kind;
    const char *defval;
    const char *const *choices; /* DDL_PARAM_ENUM: NULL-terminated */
    long min, max;              /* DDL_PARAM_INT */
    const char *description;
} ddl_param_t;

const ddl_param_t *ddl_params_table(size_t *count);
const char *ddl_param_kind_name(ddl_param_kind_t kind);

/* The value in the environment, or the default.  Never NULL for a known name. */
const char *ddl_param_string(const char *name);
/* Typed reads; a malformed value is DDL_ERR_INVALID_ARG with a message naming it. */
ddl_status_t ddl_param_long(const char *name, long *out);
ddl_status_t ddl_param_size(const char *name, size_t *out);
ddl_status_t ddl_param_seconds(const char *name, double *out);
ddl_status_t ddl_param_enum(const char *name, int *out);
ddl_status_t ddl_param_bool(const char *name, int *out);

#define DDL_THRESHOLD_AUTO ((size_t)-1)
#define DDL_CHUNK_MAX ((size_t)4 << 20) /* the largest chunk DDL_CHUNK_SIZE=auto picks */
/* The crossovers measured with ddl-bench on a 2-core host (bench/RESULTS.md):
 * on one node the shared-memory lane path wins from about 512 bytes; across
 * nodes (2 nodes x 2 rails of 1 Gbit/s, emulated) the lanes win over plain MPI
 * from 128 KiB and lose below. */
#define DDL_MPI_THRESHOLD_ONE_NODE 512
#define DDL_MPI_THRESHOLD_NODES (128u << 10)

/* Collective-path settings, read once per communicator. */
typedef struct {
    double timeout;        /* DDL_TIMEOUT, seconds */
    int check;             /* DDL_CHECK */
    int algo;              /* DDL_ALGO: ddl_algo_id_t */
    int lane_algo;         /* DDL_LANE_ALGO: ddl_inter_algo_id_t */
    int gpu_transport;     /* DDL_GPU_TRANSPORT: ddl_gpu_transport_t (resolved from auto at creation) */
    size_t mpi_threshold;  /* DDL_MPI_THRESHOLD, or DDL_THRESHOLD_AUTO */
    int explore;           /* DDL_EXPLORE */
    int inflight;          /* DDL_INFLIGHT: chunks in flight between nodes, 2 to DDL_NSCHED */
    size_t chunk_size;     /* DDL_CHUNK_SIZE; 0: auto (the cost model's, up to DDL_CHUNK_MAX) */
    size_t stage_size;     /* DDL_STAGE_SIZE */
    size_t heap_size;      /* DDL_HEAP_SIZE */
    ddl_tuning_t tuning;   /* DDL_TUNING_FILE; no bands when there is none */
    char tuning_path[512];
    ddl_grid_t grid;       /* DDL_TOPOLOGY; ndims 0 when unset */
} ddl_settings_t;

ddl_status_t ddl_settings_load(ddl_settings_t *s);
/* Log, once per process at INFO, every variable that is set in the environment. */
void ddl_params_log_env(void);

#endif
