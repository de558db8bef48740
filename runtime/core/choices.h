/* SPDX-License-Identifier: Apache-2.0 */
/* The values of the enumerated settings, by id and by name: the allreduce
 * paths (DDL_ALGO), the lane algorithms (DDL_LANE_ALGO: one id per row of
 * inter_algos.def, the table every part of the runtime iterates), the device
 * transports (DDL_GPU_TRANSPORT).  The settings table and the tuning file's
 * parser read them here; the layers that implement them build on these ids
 * (algo.h gives the descriptions ddl-info prints). */
#ifndef DDL_CHOICES_H
#define DDL_CHOICES_H

/* The collectives: one id per row of collectives.def. */
typedef enum {
#define DDL_COLL_ROW(ID, ...) DDL_COLL_##ID,
#include "collectives.def"
#undef DDL_COLL_ROW
    DDL_COLL_COUNT
} ddl_coll_t;

/* The allreduce paths: one id per row of paths.def. */
typedef enum {
#define DDL_PATH_ROW(ID, ...) DDL_ALGO_##ID,
#include "paths.def"
#undef DDL_PATH_ROW
    DDL_ALGO_COUNT
} ddl_algo_id_t;

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

/* The MPI path's forms between nodes: one id per row of mpi_forms.def. */
typedef enum {
#define DDL_MPI_FORM_ROW(ID, ...) DDL_MPI_FORM_##ID,
#include "mpi_forms.def"
#undef DDL_MPI_FORM_ROW
    DDL_MPI_FORM_COUNT
} ddl_mpi_form_t;

/* How device buffers go between nodes: one id per row of gpu_transports.def. */
typedef enum {
#define DDL_GPU_ROW(ID, ...) DDL_GPU_##ID,
#include "gpu_transports.def"
#undef DDL_GPU_ROW
    DDL_GPU_TRANSPORT_COUNT
} ddl_gpu_transport_t;

/* Each form's row of mpi_forms.def: where its data goes (data), and whether
 * it may start its MPI_Iallreduce early (early). */
extern const unsigned char ddl_mpi_form_data[];
extern const unsigned char ddl_mpi_form_early[];

/* Indexed by the ids above, NULL-terminated. */
extern const char *const ddl_coll_names[];
extern const char *const ddl_coll_calls[]; /* the public function: "ddl_" and the name */
extern const char *const ddl_algo_names[];
extern const char *const ddl_inter_algo_names[];
extern const char *const ddl_gpu_transport_names[];
extern const char *const ddl_mpi_form_names[]; /* the suffix after "mpi/"; "" for the plain form */

#endif
