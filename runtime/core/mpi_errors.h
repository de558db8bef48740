/* SPDX-License-Identifier: Apache-2.0 */
/* The runtime's own MPI error handler.  A communicator's copy of the
 * caller's MPI communicator (c->world) gets it before anything is made from
 * it, so every communicator of the runtime has it: a failed MPI call there
 * neither aborts the job (MPI_ERRORS_ARE_FATAL, MPI's default) nor goes
 * unseen.  The handler keeps the first failure on the communicator (MPI's
 * words and the communicator's name), logs it, and lets the call return its
 * error code; the communicator's waits (ddl_comm_wait_ended) and the end of
 * every call (engine/collective.c) report it as DDL_ERR_MPI and break the
 * communicator.  So the runtime's 150-odd MPI calls need not each be
 * checked for an error to be seen; those whose result decides what happens
 * next are. */
#ifndef DDL_MPI_ERRORS_H
#define DDL_MPI_ERRORS_H

#include <mpi.h>
#include <stdatomic.h>

#include "ddl.h"

/* What the handler keeps, one per ddl communicator. */
typedef struct {
    _Atomic int state; /* 0: no failure; 1: the first is being written; 2: why holds it */
    char why[MPI_MAX_ERROR_STRING + MPI_MAX_OBJECT_NAME + 64];
} ddl_mpi_failure_t;

/* Name comm ("ddl lanes: <name>", for MPI's own messages and tools) and
 * watch it: the handler, and the record it fills in (f; NULL: only logged). */
ddl_status_t ddl_mpi_errors_watch(MPI_Comm comm, const char *name, ddl_mpi_failure_t *f);

/* DDL_ERR_MPI, "<what>: <the first failure's words>", when the handler has
 * kept one; else DDL_OK.  One atomic read when none. */
ddl_status_t ddl_mpi_failure_check(ddl_mpi_failure_t *f, const char *what);

#endif
