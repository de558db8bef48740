/* SPDX-License-Identifier: Apache-2.0 */
/* PowerAI DDL's ddl_allreduce_mpi (include/ddl_mpi.hpp): a DDL communicator
 * per (MPI communicator, options), made on first use and kept. */
#include "config.h"

#include <string.h>

#include "comm.h"
#include "log.h"
#include "powerai_options.h"

#define DDL_POWERAI_NO_RENAME
#include <ddl_mpi.hpp>

#include "ddl_limits.h"

#define MAX_CACHED 16

static struct {
    MPI_Comm user; /* the caller's communicator, as passed */
    char options[DDL_OPTIONS_MAX];
    ddl_comm_t *comm;
} cache[MAX_CACHED];
static int ncached, finalize_hook = MPI_KEYVAL_INVALID;

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first: the communicators go
 * before MPI does, also when the program never calls ddl_finalize. */
static int at_mpi_finalize(MPI_Comm self, int key, void *value, void *extra)
{
    (void)self, (void)key, (void)value, (void)extra;
    ddl_powerai_mpi_release();
    return MPI_SUCCESS;
}

ddl_status_t ddl_powerai_mpi_release(void)
{
    ddl_status_t first = DDL_OK;
    for (int i = 0; i < ncached; i++) {
        ddl_status_t st = ddl_comm_destroy(cache[i].comm);
        if (first == DDL_OK)
            first = st;
    }
    ncached = 0;
    return first;
}

static ddl_status_t comm_for(const char *options, MPI_Comm user, ddl_comm_t **out)
{
    if (strlen(options) >= DDL_OPTIONS_MAX)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_allreduce_mpi: options of %zu characters, more than %d",
                         strlen(options), DDL_OPTIONS_MAX - 1);
    for (int i = 0; i < ncached; i++)
        if (cache[i].user == user && strcmp(cache[i].options, options) == 0) {
            *out = cache[i].comm;
            return DDL_OK;
        }
    if (ncached == MAX_CACHED)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_allreduce_mpi: more than %d (communicator, options) pairs",
                         MAX_CACHED);
    ddl_config_t cfg;
    ddl_status_t st = ddl_options_apply(options, NULL);
    if (st == DDL_OK)
        st = ddl_config_init(&cfg);
    if (st == DDL_OK)
        st = ddl_comm_create(user, &cfg, out);
    if (st != DDL_OK)
        return st;
    if (finalize_hook == MPI_KEYVAL_INVALID &&
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_mpi_finalize, &finalize_hook, NULL) == MPI_SUCCESS)
        MPI_Comm_set_attr(MPI_COMM_SELF, finalize_hook, NULL);
    cache[ncached].user = user;
    memcpy(cache[ncached].options, options, strlen(options) + 1);
    cache[ncached++].comm = *out;
    return DDL_OK;
}

/* The MPI types and ops of the native ones (DDL_TYPE_HALF has no MPI type). */
static int native_type(MPI_Datatype t, ddl_dtype_t *d)
{
    /* MPI's predefined handles need not be constants: a table built per call. */
    const struct {
        MPI_Datatype mpi;
        ddl_dtype_t ddl;
    } types[] = {
        {MPI_FLOAT, DDL_DTYPE_F32},         {MPI_DOUBLE, DDL_DTYPE_F64},         {MPI_INT8_T, DDL_DTYPE_I8},
        {MPI_SIGNED_CHAR, DDL_DTYPE_I8},    {MPI_CHAR, DDL_DTYPE_I8},            {MPI_UINT8_T, DDL_DTYPE_U8},
        {MPI_UNSIGNED_CHAR, DDL_DTYPE_U8},  {MPI_BYTE, DDL_DTYPE_U8},            {MPI_INT32_T, DDL_DTYPE_I32},
        {MPI_UINT32_T, DDL_DTYPE_U32},      {MPI_INT64_T, DDL_DTYPE_I64},        {MPI_UINT64_T, DDL_DTYPE_U64},
        {MPI_LONG_LONG, DDL_DTYPE_I64},     {MPI_UNSIGNED_LONG_LONG, DDL_DTYPE_U64},
    };
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (types[i].mpi == t) {
            *d = types[i].ddl;
            return 1;
        }
    /* int, unsigned, long: by their size here. */
    int size = 0;
    if (t == MPI_INT || t == MPI_LONG)
        return MPI_Type_size(t, &size) == MPI_SUCCESS && (*d = size == 4 ? DDL_DTYPE_I32 : DDL_DTYPE_I64, 1);
    if (t == MPI_UNSIGNED || t == MPI_UNSIGNED_LONG)
        return MPI_Type_size(t, &size) == MPI_SUCCESS && (*d = size == 4 ? DDL_DTYPE_U32 : DDL_DTYPE_U64, 1);
    return 0;
}

static int native_op(MPI_Op o, ddl_redop_t *r)
{
    if (o == MPI_SUM)
        *r = DDL_REDOP_SUM;
    else if (o == MPI_PROD)
        *r = DDL_REDOP_PROD;
    else if (o == MPI_MIN)
        *r = DDL_REDOP_MIN;
    else if (o == MPI_MAX)
        *r = DDL_REDOP_MAX;
    else
        return 0;
    return 1;
}

static int allreduce_mpi(const char *options, void *buf, size_t count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    ddl_dtype_t dtype;
    ddl_redop_t redop;
    int type_ok = native_type(type, &dtype);
    if (!type_ok || !native_op(op, &redop))
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_allreduce_mpi: %s: give MPI_FLOAT, MPI_DOUBLE or an 8, 32 or 64-bit "
                         "integer type, with MPI_SUM, MPI_PROD, MPI_MIN or MPI_MAX",
                         type_ok ? "this MPI_Op is not supported" : "this MPI_Datatype is not supported");
    int up = 0;
    MPI_Initialized(&up);
    if (!up)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_allreduce_mpi: call MPI_Init_thread first");
    ddl_comm_t *c;
    ddl_status_t st = comm_for(options ? options : "", comm, &c);
    return st == DDL_OK ? ddl_powerai_allreduce_on(c, buf, count, dtype, redop) : st;
}

/* Its callers see only the status: a failure is logged here, once. */
int ddl_allreduce_mpi(const char *options, void *buf, size_t count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    return ddl_report(allreduce_mpi(options, buf, count, type, op, comm));
}
