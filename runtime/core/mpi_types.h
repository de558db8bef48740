/* SPDX-License-Identifier: Apache-2.0 */
/* The system MPI's datatype and op for a ddl type and op: MPI's own where it
 * has them and they are right, else a datatype and user op of the runtime's
 * (16-bit floats, 8-bit integers, and unsigned MIN and MAX where the MPI gets
 * them wrong), made on first use and kept for the process.
 * The average is MPI_SUM (the caller divides). */
#ifndef DDL_MPI_TYPES_H
#define DDL_MPI_TYPES_H

#include <mpi.h>

#include "ddl.h"

/* The type and op go together: where MPI's own op is wrong or missing for a
 * type, both are the runtime's. */
MPI_Datatype ddl_mpi_type(ddl_dtype_t dtype, ddl_redop_t op);
MPI_Op ddl_mpi_op(ddl_dtype_t dtype, ddl_redop_t op);
/* MPI's own type and op for (dtype, op), for a library that runs MPI's
 * reductions itself (CUDA-aware MPI on device memory); 0 where only the
 * runtime's user ops have them. */
int ddl_mpi_native(ddl_dtype_t dtype, ddl_redop_t op, MPI_Datatype *type, MPI_Op *mop);

/* MPI_STATUSES_IGNORE, for a call that takes an array of statuses.  MPICH
 * defines it as (MPI_Status *)1, which GCC 12 takes for an array of size 0
 * wherever the constant is passed straight (-Wstringop-overflow, a false
 * report); read through a volatile, the value is the same and opaque to it. */
static inline MPI_Status *ddl_mpi_statuses_ignore(void)
{
    MPI_Status *volatile ignore = MPI_STATUSES_IGNORE;
    return ignore;
}

#endif
