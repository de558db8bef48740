/* SPDX-License-Identifier: Apache-2.0 */
/* The runtime's own MPI error handler (mpi_errors.h).  Uses core only. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>

#include "log.h"
#include "mpi_errors.h"

static pthread_once_t made = PTHREAD_ONCE_INIT;
static MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
/* A communicator's attribute: its ddl_mpi_failure_t, which MPI_Comm_dup
 * copies (a split does not: ddl_mpi_errors_watch). */
static int record_key = MPI_KEYVAL_INVALID;

/* MPI calls it in the thread whose call failed, with that call's error
 * code; the call then returns the code. */
static void on_error(MPI_Comm *comm, int *code, ...)
{
    char msg[MPI_MAX_ERROR_STRING] = "", name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0, flag = 0;
    ddl_mpi_failure_t *f = NULL;
    MPI_Error_string(*code, msg, &len);
    MPI_Comm_get_name(*comm, name, &len);
    MPI_Comm_get_attr(*comm, record_key, &f, &flag);
    const char *on = name[0] ? name : "a communicator";
    ddl_log(DDL_LOG_WARN, DDL_SUBSYS_NET, "an MPI call on %s failed: %s", on, msg);
    int none = 0;
    if (!flag || !f || !atomic_compare_exchange_strong(&f->state, &none, 1))
        return; /* only the first failure is kept: the rest follow from it */
    snprintf(f->why, sizeof(f->why), "an MPI call on %s failed: %s", on, msg);
    atomic_store(&f->state, 2);
}

static void make_handler(void)
{
    if (MPI_Comm_create_errhandler(on_error, &handler) != MPI_SUCCESS)
        handler = MPI_ERRHANDLER_NULL;
    if (MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &record_key, NULL) != MPI_SUCCESS)
        record_key = MPI_KEYVAL_INVALID;
}

ddl_status_t ddl_mpi_errors_watch(MPI_Comm comm, const char *name, ddl_mpi_failure_t *f)
{
    pthread_once(&made, make_handler);
    if (handler == MPI_ERRHANDLER_NULL || record_key == MPI_KEYVAL_INVALID)
        return ddl_error(DDL_ERR_MPI, "MPI_Comm_create_errhandler failed: MPI cannot take the runtime's own "
                         "error handler");
    char full[MPI_MAX_OBJECT_NAME];
    snprintf(full, sizeof(full), "ddl lanes: %s", name);
    if (MPI_Comm_set_name(comm, full) != MPI_SUCCESS || (f && MPI_Comm_set_attr(comm, record_key, f) != MPI_SUCCESS) ||
        MPI_Comm_set_errhandler(comm, handler) != MPI_SUCCESS)
        return ddl_error(DDL_ERR_MPI, "setting the runtime's MPI error handler on its %s communicator failed", name);
    return DDL_OK;
}

ddl_status_t ddl_mpi_failure_check(ddl_mpi_failure_t *f, const char *what)
{
    int state = atomic_load_explicit(&f->state, memory_order_acquire);
    if (state == 0)
        return DDL_OK;
    return ddl_error(DDL_ERR_MPI, "%s: %s", what,
                     state == 2 ? f->why : "an MPI call failed (its words follow in the log)");
}
