/* SPDX-License-Identifier: Apache-2.0 */
/* The system MPI's datatype and op for a ddl type and op: MPI's own where it
 * has them and they are right, else a datatype and user op of the runtime's
 * (16-bit floats, 8-bit integers), made on first use and kept for the process.
 * The average is MPI_SUM (the caller divides). */
#ifndef DDL_MPI_TYPES_H
#define DDL_MPI_TYPES_H

#include <mpi.h>

#include "ddl.h"

MPI_Datatype ddl_mpi_type(ddl_dtype_t dtype);
MPI_Op ddl_mpi_op(ddl_dtype_t dtype, ddl_redop_t op);
/* MPI's own type and op for (dtype, op), for a library that runs MPI's
 * reductions itself (CUDA-aware MPI on device memory); 0 where only the
 * runtime's user ops have them. */
int ddl_mpi_native(ddl_dtype_t dtype, ddl_redop_t op, MPI_Datatype *type, MPI_Op *mop);

#endif
