/* MPI test programs: initialise MPI and a ddl communicator from the DDL_*
 * environment, or abort the job with the runtime's message. */
#ifndef DDL_TESTCOMM_H
#define DDL_TESTCOMM_H

#include <stdio.h>
#include "ddl.h"

static inline ddl_comm_t *ddl_test_comm(int *argc, char ***argv, ddl_config_t *cfg, ddl_comm_info_t *info)
{
    MPI_Init(argc, argv);
    ddl_comm_t *comm = NULL;
    ddl_status_t st = ddl_config_init(cfg);
    if (st == DDL_OK)
        st = ddl_comm_create(MPI_COMM_WORLD, cfg, &comm);
    if (st != DDL_OK) {
        fprintf(stderr, "set-up failed: %s: %s\n", ddl_status_string(st), ddl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    ddl_comm_info(comm, info);
    return comm;
}

#endif
