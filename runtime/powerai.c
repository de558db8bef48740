/* The PowerAI DDL compatible API (include/ddl/powerai.h) over the native one. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "grid.h"
#include "log.h"
#include "parse.h"

/* The compat header without its rename: this file calls the native ddl_allreduce. */
#define DDL_POWERAI_NO_RENAME
#include <ddl/powerai.h>

static ddl_comm_t *compat_comm;
static long dump_iter, iter;

/* -mode X:GRID, -dump_iter N, -dbg_level N.  The mode becomes DDL_ALGO and
 * DDL_TOPOLOGY, read when the communicator is created. */
static ddl_status_t parse_options(const char *options)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", options);
    char *save;
    for (char *tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        char *val = strtok_r(NULL, " \t", &save);
        long v;
        if (!val)
            return ddl_error(DDL_ERR_INVALID_ARG, "DDL options: '%s' needs a value", tok);
        if (strcmp(tok, "-mode") == 0) {
            char *colon = strchr(val, ':');
            ddl_grid_t g;
            char err[256];
            if (!colon || colon == val || ddl_grid_parse(colon + 1, &g, err, sizeof(err)) != 0)
                return ddl_error(DDL_ERR_INVALID_ARG, "DDL options: -mode %s is not MODE:GRID such as r:4x16", val);
            /* p: times ring and recursive doubling per dimension on the first calls. */
            setenv("DDL_EXPLORE", colon[-1] == 'p' && colon - val == 1 ? "1" : "0", 1);
            setenv("DDL_TOPOLOGY", colon + 1, 1);
            setenv("DDL_ALGO", "multiring", 1);
        } else if (strcmp(tok, "-dump_iter") == 0) {
            if (ddl_parse_long(val, 0, 1L << 40, &v) != 0)
                return ddl_error(DDL_ERR_INVALID_ARG, "DDL options: -dump_iter %s is not a count", val);
            dump_iter = v;
        } else if (strcmp(tok, "-dbg_level") == 0) {
            static const char *const levels[] = {"WARN", "INFO", "TRACE"};
            if (ddl_parse_long(val, 0, 2, &v) != 0)
                return ddl_error(DDL_ERR_INVALID_ARG, "DDL options: -dbg_level %s is not 0, 1 or 2", val);
            setenv("DDL_DEBUG", levels[v], 1);
        } else {
            return ddl_error(DDL_ERR_INVALID_ARG, "DDL options: unknown option '%s' (known: -mode, -dump_iter, "
                             "-dbg_level)", tok);
        }
    }
    return DDL_OK;
}

int ddl_init(const char *options)
{
    if (compat_comm)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_init: called twice without ddl_finalize");
    if (!options)
        options = getenv("DDL_OPTIONS") ? getenv("DDL_OPTIONS") : "";
    ddl_status_t st = parse_options(options);
    ddl_config_t cfg;
    if (st == DDL_OK)
        st = ddl_init_mpi();
    if (st == DDL_OK)
        st = ddl_config_init(&cfg);
    if (st == DDL_OK)
        st = ddl_comm_create_world(&cfg, &compat_comm);
    iter = 0;
    return st;
}

int ddl_powerai_allreduce(void *buf, size_t count, ddl_type type, ddl_op op)
{
    if (!compat_comm)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_allreduce: call ddl_init first");
    if ((type != DDL_TYPE_FLOAT && type != DDL_TYPE_HALF) || op != DDL_OP_SUM)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_allreduce: type %d, op %d: DDL_TYPE_FLOAT or DDL_TYPE_HALF with "
                         "DDL_OP_SUM", (int)type, (int)op);
    ddl_status_t st = ddl_allreduce(DDL_IN_PLACE, buf, (int64_t)count, (ddl_dtype_t)type, DDL_REDOP_SUM, compat_comm);
    if (st == DDL_OK && dump_iter > 0 && ++iter % dump_iter == 0 && compat_comm->info.rank == 0) {
        ddl_dim_stats_t dims[DDL_GRID_MAX_DIMS];
        int nd = ddl_comm_stats(compat_comm, dims, DDL_GRID_MAX_DIMS);
        for (int d = 0; d < nd; d++)
            fprintf(stderr, "DDL iteration %ld: dimension %d (%d ranks): %llu bytes sent, %.3f ms in flight\n", iter,
                    dims[d].dim, dims[d].size, dims[d].bytes_sent, dims[d].seconds * 1e3);
    }
    return st;
}

int ddl_finalize(void)
{
    if (!compat_comm)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_finalize: ddl_init was not called");
    ddl_status_t st = ddl_comm_destroy(compat_comm);
    compat_comm = NULL;
    ddl_finalize_mpi();
    return st;
}

static int query(int *out, int value)
{
    if (!compat_comm || !out)
        return ddl_error(DDL_ERR_INVALID_ARG, "DDL query: call ddl_init first, with a non-NULL pointer");
    *out = value;
    return DDL_OK;
}

int ddl_rank(int *rank) { return query(rank, compat_comm ? compat_comm->info.rank : 0); }
int ddl_size(int *size) { return query(size, compat_comm ? compat_comm->info.size : 0); }
int ddl_local_rank(int *rank) { return query(rank, compat_comm ? compat_comm->info.local_rank : 0); }
int ddl_local_size(int *size) { return query(size, compat_comm ? compat_comm->info.local_size : 0); }
