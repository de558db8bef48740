/* SPDX-License-Identifier: Apache-2.0 */
/* C with both APIs in one file, the native header after PowerAI's: the macros
 * pick PowerAI's ddl_allreduce by 2 or 4 arguments and the native one by 6, and
 * ddl_malloc by its first argument (void ** or a communicator).  Prints
 * "Both APIs in C: N ranks, F failures". */
#include <stdio.h>
#include <stdlib.h>

#include <ddl.hpp>
#include <ddl.h>

int main(void)
{
    int failures = 0, rank, size;
    if (ddl_init("") != DDL_SUCCESS)
        return 1;
    ddl_rank(&rank);
    ddl_size(&size);
    float *p = NULL;
    int bytes = ddl_malloc((void **)&p, 16, 10 * sizeof(float)); /* PowerAI's */
    if (bytes != 48 || !p)
        failures++;
    for (int i = 0; i < 12 && p; i++)
        p[i] = 1;
    if (!p || ddl_allreduce(p, 12) != DDL_SUCCESS || p[11] != (float)size)
        failures++;
    ddl_config_t cfg;
    ddl_comm_t *comm = NULL;
    void *shared = NULL;
    if (ddl_config_init(&cfg) != DDL_OK || ddl_comm_create(MPI_COMM_WORLD, &cfg, &comm) != DDL_OK ||
        ddl_malloc(comm, 64, &shared) != DDL_OK) /* native */
        failures++;
    if (shared) {
        int *v = shared;
        for (int i = 0; i < 16; i++)
            v[i] = rank;
        if (ddl_allreduce(DDL_IN_PLACE, v, 16, DDL_DTYPE_I32, DDL_REDOP_MAX, comm) != DDL_OK || v[15] != size - 1)
            failures++;
        ddl_free(comm, shared);
    }
    if (comm)
        ddl_comm_destroy(comm);
    float total = (float)failures;
    ddl_allreduce(&total, 1, DDL_TYPE_FLOAT, DDL_OP_SUM);
    if (rank == 0)
        printf("Both APIs in C: %d ranks, %d failures\n", size, (int)total);
    free(p);
    ddl_finalize();
    return total ? 1 : 0;
}
