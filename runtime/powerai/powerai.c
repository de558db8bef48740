/* The PowerAI DDL compatible API (include/ddl/powerai.h) over the native one. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "grid.h"
#include "log.h"
#include "parse.h"
#include "powerai_options.h"

/* The compat header without its rename: this file calls the native ddl_allreduce. */
#define DDL_POWERAI_NO_RENAME
#include <ddl/powerai.h>

#include "ddl_limits.h"

static ddl_comm_t *compat_comm;
static long dump_iter, iter;

/* The parsed options become DDL_ALGO, DDL_TOPOLOGY, DDL_EXPLORE and
 * DDL_DEBUG, read when the communicator is created. */
static ddl_status_t apply_options(const char *options)
{
    ddl_powerai_options_t o;
    ddl_status_t st = ddl_powerai_options_parse(options, &o);
    if (st != DDL_OK)
        return st;
    if (o.mode) {
        setenv("DDL_EXPLORE", o.mode == 'p' ? "1" : "0", 1);
        setenv("DDL_TOPOLOGY", o.grid, 1);
        setenv("DDL_ALGO", "multiring", 1);
    }
    if (o.dbg_level >= 0) {
        static const char *const levels[] = {"WARN", "INFO", "TRACE"};
        setenv("DDL_DEBUG", levels[o.dbg_level], 1);
    }
    dump_iter = o.dump_iter;
    return DDL_OK;
}

int ddl_init(const char *options)
{
    if (compat_comm)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_init: called twice without ddl_finalize");
    if (!options)
        options = getenv("DDL_OPTIONS") ? getenv("DDL_OPTIONS") : "";
    ddl_status_t st = apply_options(options);
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
