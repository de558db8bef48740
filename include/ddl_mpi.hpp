/* SPDX-License-Identifier: Apache-2.0 */
/* IBM PowerAI DDL 1.x's MPI form over DDL lanes: a program that starts MPI
 * itself (MPI_Init_thread) allreduces on any of its communicators.  Valid C
 * and C++; the rest of the API is in <ddl.hpp>.
 *
 *   ddl_allreduce_mpi(options, buf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD)
 *
 * In place.  The first call for a communicator and options string creates a
 * DDL communicator over it (collective over its ranks), later calls reuse it;
 * ddl_finalize, or at the latest MPI_Finalize, destroys them.  Types: MPI_FLOAT,
 * MPI_DOUBLE, the signed and unsigned 8, 32 and 64-bit integers (MPI_INT,
 * MPI_INT64_T, MPI_UNSIGNED_CHAR, ...); ops: MPI_SUM, MPI_PROD, MPI_MIN,
 * MPI_MAX.  Others are refused with DDL_ERR_INVALID_ARG. */
#ifndef DDL_MPI_HPP
#define DDL_MPI_HPP

#include <mpi.h>

#include <ddl.hpp>

#ifdef __cplusplus
extern "C" {
#endif

int ddl_allreduce_mpi(const char *options, void *buf, size_t count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);

#ifdef __cplusplus
}
#endif

#endif
