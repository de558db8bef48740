/* SPDX-License-Identifier: Apache-2.0 */
/* The PowerAI DDL compatible API (include/ddl.hpp) over the native one. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "gpu.h"
#include "grid.h"
#include "log.h"
#include "parse.h"
#include "powerai_options.h"

/* The compat header without its C macros: this file calls the native functions. */
#define DDL_POWERAI_NO_RENAME
#include <ddl.hpp>

#include "ddl_limits.h"

static ddl_comm_t *compat_comm;
static long dump_iter, iter;

static int init(const char *options)
{
    if (compat_comm)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_init: called twice without ddl_finalize");
    if (!options)
        options = getenv("DDL_OPTIONS") ? getenv("DDL_OPTIONS") : "";
    ddl_status_t st = ddl_options_apply(options, &dump_iter);
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

static int allreduce(void *buf, size_t count, DDL_Type type, DDL_Op op)
{
    if (!compat_comm)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_allreduce: call ddl_init first");
    if ((type != DDL_TYPE_FLOAT && type != DDL_TYPE_HALF) ||
        (op != DDL_OP_SUM && op != DDL_OP_PROD && op != DDL_OP_MIN && op != DDL_OP_MAX))
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_allreduce: type %d, op %d: give DDL_TYPE_FLOAT or DDL_TYPE_HALF "
                         "with DDL_OP_SUM, DDL_OP_PROD, DDL_OP_MIN or DDL_OP_MAX", (int)type, (int)op);
    ddl_status_t st = ddl_powerai_allreduce_on(compat_comm, buf, count, (ddl_dtype_t)type, (ddl_redop_t)op);
    if (st == DDL_OK && dump_iter > 0 && ++iter % dump_iter == 0 && compat_comm->info.rank == 0) {
        ddl_dim_stats_t dims[DDL_GRID_MAX_DIMS];
        int nd = ddl_comm_stats(compat_comm, dims, DDL_GRID_MAX_DIMS);
        for (int d = 0; d < nd; d++)
            fprintf(stderr, "DDL iteration %ld: dimension %d (%d ranks): %llu bytes sent, %.3f ms in flight\n", iter,
                    dims[d].dim, dims[d].size, dims[d].bytes_sent, dims[d].seconds * 1e3);
    }
    return st;
}

int ddl_powerai_allreduce_float(void *buf, size_t count)
{
    return ddl_powerai_allreduce(buf, count, DDL_TYPE_FLOAT, DDL_OP_SUM);
}

static int powerai_malloc(void **ptr, int align, size_t bytes)
{
    if (!ptr || align <= 0)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_malloc: ptr %s, align %d: give a pointer and a positive alignment",
                         ptr ? "set" : "NULL", align);
    *ptr = NULL;
    size_t a = (size_t)align, padded = (bytes + a - 1) / a * a;
    if (padded < bytes || padded > INT_MAX)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_malloc: %zu bytes padded to %d do not fit the int it returns",
                         bytes, align);
    /* The process's GPU: the communicator's after ddl_init, else DDL_GPU. */
    char why[256];
    const char *env = getenv("DDL_GPU");
    int device = compat_comm ? compat_comm->info.gpu : env && *env ? atoi(env) : 0;
    if (ddl_gpu_devices(why, sizeof(why)) > 0) {
        ddl_status_t st = ddl_gpu_alloc_zeroed(device, padded, ptr);
        return st == DDL_OK ? (int)padded : st;
    }
    /* Host memory: aligned to at least a cache line, for the reduction kernels. */
    if (posix_memalign(ptr, a < 64 ? 64 : a, padded ? padded : 1) != 0) {
        *ptr = NULL;
        return ddl_error(DDL_ERR_NO_MEMORY, "ddl_malloc: cannot allocate %zu bytes", padded);
    }
    memset(*ptr, 0, padded);
    return (int)padded;
}

static int finalize(void)
{
    ddl_status_t st = ddl_powerai_mpi_release();
    if (!compat_comm)
        return st != DDL_OK ? st : ddl_error(DDL_ERR_INVALID_ARG, "ddl_finalize: ddl_init was not called");
    ddl_status_t cst = ddl_comm_destroy(compat_comm);
    compat_comm = NULL;
    ddl_finalize_mpi();
    return cst != DDL_OK ? cst : st;
}

/* One rank per GPU: the owners' numbering.  Before ddl_init, MPI's world (and
 * the launcher's node-local numbers). */
static int query(int *out, int which)
{
    if (!out)
        return ddl_error(DDL_ERR_INVALID_ARG, "DDL query: the result pointer is NULL");
    if (compat_comm) {
        const ddl_comm_info_t *in = &compat_comm->info;
        int v[4] = {in->owner_rank, in->owner_size, in->gpu, in->gpus_per_node};
        *out = v[which];
        return DDL_OK;
    }
    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (!up || down)
        return ddl_error(DDL_ERR_INVALID_ARG, "DDL query: call ddl_init (or MPI_Init) first");
    if (which == 0)
        return MPI_Comm_rank(MPI_COMM_WORLD, out) == MPI_SUCCESS ? DDL_OK : DDL_ERR_MPI;
    if (which == 1)
        return MPI_Comm_size(MPI_COMM_WORLD, out) == MPI_SUCCESS ? DDL_OK : DDL_ERR_MPI;
    static const char *const local[2][3] = {{"OMPI_COMM_WORLD_LOCAL_RANK", "PMIX_LOCAL_RANK", "SLURM_LOCALID"},
                                            {"OMPI_COMM_WORLD_LOCAL_SIZE", "PMIX_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE"}};
    for (int i = 0; i < 3; i++) {
        const char *s = getenv(local[which - 2][i]);
        long v;
        if (s && ddl_parse_long(s, 0, INT_MAX, &v) == 0) {
            *out = (int)v;
            return DDL_OK;
        }
    }
    return ddl_error(DDL_ERR_INVALID_ARG, "DDL query: the launcher did not say the node-local %s; call ddl_init first",
                     which == 2 ? "rank" : "size");
}

/* PowerAI DDL's callers see only the status: a failure is logged here, once. */
int ddl_init(const char *options) { return ddl_report(init(options)); }
int ddl_powerai_allreduce(void *buf, size_t count, DDL_Type type, DDL_Op op)
{
    return ddl_report(allreduce(buf, count, type, op));
}
int ddl_powerai_malloc(void **ptr, int align, size_t bytes) { return ddl_report(powerai_malloc(ptr, align, bytes)); }
int ddl_finalize(void) { return ddl_report(finalize()); }
int ddl_rank(int *rank) { return ddl_report(query(rank, 0)); }
int ddl_size(int *size) { return ddl_report(query(size, 1)); }
int ddl_local_rank(int *rank) { return ddl_report(query(rank, 2)); }
int ddl_local_size(int *size) { return ddl_report(query(size, 3)); }
