/* SPDX-License-Identifier: Apache-2.0 */
/* The names of the enumerated settings' values (choices.h). */
#include "config.h"

#include <stddef.h>

#include "choices.h"

const char *const ddl_algo_names[] = {"auto", "mpi", "lane", "multiring", NULL};
const char *const ddl_inter_algo_names[] = {
    "auto",
#define DDL_INTER_ROW(ID, name, ...) name,
#include "inter_algos.def"
#undef DDL_INTER_ROW
    NULL};
const char *const ddl_gpu_transport_names[] = {"auto", "staged", "mpi", "nccl", NULL};
const char *const ddl_mpi_form_names[] = {"", "exchange", "after", "halves", NULL};
