/* SPDX-License-Identifier: Apache-2.0 */
/* MPI for programs that have none of their own: the Python binding and
 * ddl-helper. */
#include "config.h"

#include "comm.h"
#include "log.h"

static int initialised_here;

ddl_status_t ddl_init_mpi(void)
{
    int done = 0, provided;
    MPI_Initialized(&done);
    if (done)
        return DDL_OK;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
        return ddl_error(DDL_ERR_MPI, "MPI_Init_thread failed: start the program with srun --mpi=pmix or mpirun");
    initialised_here = 1;
    if (provided < MPI_THREAD_MULTIPLE)
        DDL_INFO(DDL_SUBSYS_INIT, "MPI gives thread level %d, not MPI_THREAD_MULTIPLE: nonblocking allreduces progress "
                 "in ddl_test and ddl_wait, without a progress thread", provided);
    return DDL_OK;
}

ddl_status_t ddl_finalize_mpi(void)
{
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (initialised_here && !finalized)
        MPI_Finalize();
    initialised_here = 0;
    return DDL_OK;
}
