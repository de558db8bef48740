/* SPDX-License-Identifier: Apache-2.0 */
/* The values of the enumerated settings, by id and by name: the allreduce
 * paths (DDL_ALGO), the lane algorithms (DDL_LANE_ALGO: one id per row of
 * inter_algos.def, the table every part of the runtime iterates), the device
 * transports (DDL_GPU_TRANSPORT).  The settings table and the tuning file's
 * parser read them here; the layers that implement them build on these ids
 * (algo.h gives the descriptions ddl-info prints). */
#ifndef DDL_CHOICES_H
#define DDL_CHOICES_H

typedef enum { DDL_ALGO_AUTO = 0, DDL_ALGO_MPI, DDL_ALGO_LANE, DDL_ALGO_MULTIRING, DDL_ALGO_COUNT } ddl_algo_id_t;

/* DDL_INTER_AUTO (the cost model chooses per chunk), then one id per row of
 * inter_algos.def, in its order. */
typedef enum {
    DDL_INTER_AUTO = 0,
#define DDL_INTER_ROW(ID, ...) DDL_INTER_##ID,
#include "inter_algos.def"
#undef DDL_INTER_ROW
    DDL_INTER_COUNT
} ddl_inter_algo_id_t;
#define DDL_INTER_ALGOS (DDL_INTER_COUNT - 1) /* the rows */

/* The MPI path's forms between nodes, a tuning band's or a candidate's
 * suffix: "mpi" (the owners' signatures, then MPI_Allreduce; a call that
 * repeats the last one between hosts starts MPI_Iallreduce before the
 * signatures agree, algo/mpi_early.c), "mpi/exchange" (the data rides in the
 * signatures' exchange), "mpi/after" (MPI_Allreduce only once the signatures
 * agree: never the early start, whose MPI_Iallreduce may move more bytes),
 * "mpi/halves" (no MPI_Allreduce: the owners' own reduce-scatter, its
 * messages carrying the signatures, then their allgather). */
typedef enum {
    DDL_MPI_FORM_PLAIN = 0,
    DDL_MPI_FORM_EXCHANGE,
    DDL_MPI_FORM_AFTER,
    DDL_MPI_FORM_HALVES,
    DDL_MPI_FORM_COUNT
} ddl_mpi_form_t;

typedef enum { DDL_GPU_AUTO = 0, DDL_GPU_STAGED, DDL_GPU_MPI, DDL_GPU_NCCL, DDL_GPU_TRANSPORT_COUNT } ddl_gpu_transport_t;

/* Indexed by the ids above, NULL-terminated. */
extern const char *const ddl_algo_names[];
extern const char *const ddl_inter_algo_names[];
extern const char *const ddl_gpu_transport_names[];
extern const char *const ddl_mpi_form_names[]; /* the suffix after "mpi/"; "" for the plain form */

#endif
