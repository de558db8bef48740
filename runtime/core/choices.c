/* SPDX-License-Identifier: Apache-2.0 */
/* The names of the enumerated settings' values (choices.h). */
#include "config.h"

#include <stddef.h>

#include "choices.h"
#include "signature.h" /* DDL_SIG_HALVES, a form's data */

const char *const ddl_coll_names[] = {
#define DDL_COLL_ROW(ID, name) name,
#include "collectives.def"
#undef DDL_COLL_ROW
    NULL};
const char *const ddl_coll_calls[] = {
#define DDL_COLL_ROW(ID, name) "ddl_" name,
#include "collectives.def"
#undef DDL_COLL_ROW
    NULL};
const char *const ddl_algo_names[] = {
#define DDL_PATH_ROW(ID, name, ...) name,
#include "paths.def"
#undef DDL_PATH_ROW
    NULL};
const char *const ddl_inter_algo_names[] = {
    "auto",
#define DDL_INTER_ROW(ID, name, ...) name,
#include "inter_algos.def"
#undef DDL_INTER_ROW
    NULL};
const char *const ddl_gpu_transport_names[] = {
#define DDL_GPU_ROW(ID, name, ...) name,
#include "gpu_transports.def"
#undef DDL_GPU_ROW
    NULL};
const char *const ddl_mpi_form_names[] = {
#define DDL_MPI_FORM_ROW(ID, suffix, ...) suffix,
#include "mpi_forms.def"
#undef DDL_MPI_FORM_ROW
    NULL};
const unsigned char ddl_mpi_form_data[] = {
#define DDL_MPI_FORM_ROW(ID, suffix, up_to, data, ...) data,
#include "mpi_forms.def"
#undef DDL_MPI_FORM_ROW
};
const unsigned char ddl_mpi_form_early[] = {
#define DDL_MPI_FORM_ROW(ID, suffix, up_to, data, early, ...) early,
#include "mpi_forms.def"
#undef DDL_MPI_FORM_ROW
};
