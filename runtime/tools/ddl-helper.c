/* ddl-helper: what a helper rank runs when the application knows nothing of
 * lanes.  It joins the communicator that the owners create on MPI_COMM_WORLD
 * (in serve mode) and serves until they destroy it. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ddl.h"

int main(int argc, char **argv)
{
    if (argc > 1) {
        int help = strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0;
        fprintf(help ? stdout : stderr,
                "usage: ddl-helper\n"
                "Run on helper ranks (lane > 0) beside an application whose owners create a ddl\n"
                "communicator on MPI_COMM_WORLD with DDL_HELPERS=serve; configuration comes from\n"
                "the same DDL_* environment as the application's.\n");
        return help ? 0 : 2;
    }
    MPI_Init(&argc, &argv);
    ddl_config_t cfg;
    ddl_comm_t *comm = NULL;
    ddl_status_t st = ddl_config_init(&cfg);
    cfg.helper_mode = DDL_HELPERS_SERVE;
    if (st == DDL_OK)
        st = ddl_comm_create(MPI_COMM_WORLD, &cfg, &comm);
    if (st != DDL_OK) {
        fprintf(stderr, "ddl-helper: cannot join the communicator: %s: %s\n", ddl_status_string(st), ddl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    ddl_comm_info_t info;
    ddl_comm_info(comm, &info);
    if (info.role != DDL_ROLE_HELPER) {
        fprintf(stderr, "ddl-helper: rank %d is the owner of GPU %d on node %d; owners run the application, "
                "only lanes 1..%d run ddl-helper\n", info.rank, info.gpu, info.node, info.lanes - 1);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    st = ddl_serve(comm);
    if (st != DDL_OK) {
        fprintf(stderr, "ddl-helper: rank %d: %s: %s\n", info.rank, ddl_status_string(st), ddl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    ddl_comm_destroy(comm);
    MPI_Finalize();
    return 0;
}
