/* SPDX-License-Identifier: Apache-2.0 */
/* The algorithms' one-line descriptions (algo.h), which ddl-info prints, all
 * from their rows: the allreduce paths (paths.def), the MPI path's forms
 * (mpi_forms.def), the lane algorithms (inter_algos.def) and the device
 * transports (gpu_transports.def).  Uses nothing but core/choices.h. */
#include "config.h"

#include "algo.h"

static const ddl_algo_desc_t algos[] = {
#define DDL_PATH_ROW(ID, name, description) {"allreduce", DDL_ALGO_##ID, name, description},
#include "paths.def"
#undef DDL_PATH_ROW
#define DDL_MPI_FORM_ROW(ID, suffix, up_to, data, early, description) \
    {"form", DDL_MPI_FORM_##ID, DDL_MPI_FORM_##ID == DDL_MPI_FORM_PLAIN ? "mpi" : "mpi/" suffix, description},
#include "mpi_forms.def"
#undef DDL_MPI_FORM_ROW
    {"lane", DDL_INTER_AUTO, "auto", "per chunk, the cheapest lane algorithm below in the alpha-beta cost model "
     "(link latency and bandwidth from the tuning file's link lines, written by ddl-tune)"},
#define DDL_INTER_ROW(ID, name, build, max_steps, cost, margin, online_min, online_max, description) \
    {"lane", DDL_INTER_##ID, name, description},
#include "inter_algos.def"
#undef DDL_INTER_ROW
#define DDL_GPU_ROW(ID, name, description) {"gpu", DDL_GPU_##ID, name, description},
#include "gpu_transports.def"
#undef DDL_GPU_ROW
};

const ddl_algo_desc_t *ddl_algo_table(size_t *count)
{
    *count = sizeof(algos) / sizeof(algos[0]);
    return algos;
}
