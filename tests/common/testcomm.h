/* SPDX-License-Identifier: Apache-2.0 */
/* MPI test programs: initialise MPI and a ddl communicator from the DDL_*
 * environment, or abort the job with the runtime's message. */
#ifndef DDL_TESTCOMM_H
#define DDL_TESTCOMM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ddl.h"

/* The owners' buffers a correctness test runs a call on: shared (from
 * ddl_malloc), staged (malloc), out of place or in place. */
typedef enum { BUF_SHARED, BUF_STAGED, BUF_MIXED, BUF_INPLACE_SHARED, BUF_INPLACE_STAGED, BUF_KINDS } buf_kind_t;
static const char *const buf_names[] = {"out-of-place shared", "out-of-place staged", "out-of-place mixed",
                                        "in-place shared", "in-place staged"};

/* MPI's thread level: DDL_TEST_MPI_THREAD=multiple (a progress thread carries
 * nonblocking requests) or single (they run in ddl_test / ddl_wait); the
 * default is multiple. */
static inline ddl_comm_t *ddl_test_comm(int *argc, char ***argv, ddl_config_t *cfg, ddl_comm_info_t *info)
{
    const char *lv = getenv("DDL_TEST_MPI_THREAD");
    int provided;
    MPI_Init_thread(argc, argv, lv && strcmp(lv, "single") == 0 ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE, &provided);
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

/* The owners' totals: failures summed, cases the most any owner ran (on the
 * owners only: in serve mode the helpers may be ddl-helper, which joins no
 * collective of ours; a failing helper fails its own exit code). */
static inline void ddl_test_totals(ddl_comm_t *comm, const ddl_comm_info_t *info, int *cases, int *failures)
{
    if (info->role != DDL_ROLE_OWNER)
        return;
    int mine[2] = {*failures, *cases};
    MPI_Allreduce(&mine[0], failures, 1, MPI_INT, MPI_SUM, ddl_comm_owners(comm));
    MPI_Allreduce(&mine[1], cases, 1, MPI_INT, MPI_MAX, ddl_comm_owners(comm));
}

/* Destroy the communicator, print the totals on rank 0 (the runner scripts
 * look for ", 0 failures"), finalise MPI; the exit code. */
static inline int ddl_test_finish(ddl_comm_t *comm, const ddl_comm_info_t *info, const ddl_config_t *cfg, int cases,
                                  int failures)
{
    ddl_comm_destroy(comm);
    if (info->rank == 0)
        printf("%d nodes x %d GPUs x %d lanes, helpers %s: %d cases, %d failures\n", info->nnodes, info->gpus_per_node,
               info->lanes, cfg->helper_mode == DDL_HELPERS_SERVE ? "serve" : "collective", cases, failures);
    MPI_Finalize();
    return failures ? 1 : 0;
}

#endif
