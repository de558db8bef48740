/* SPDX-License-Identifier: Apache-2.0 */
/* The job-wide lane map at communicator creation: each rank's place (node, GPU,
 * lane, core, host) as the Slurm plugin planned it (DDL_* environment) or, without
 * the plugin, as MPI's node order derives it; exchanged through PMIx where the
 * job has a PMIx server, else through MPI; checked against MPI's view. */
#ifndef DDL_BOOTSTRAP_H
#define DDL_BOOTSTRAP_H

#include "comm.h"

/* Collective over the communicator.  Returns DDL_ERR_LAYOUT naming the first
 * rank whose planned place disagrees with MPI's view, or the node whose shape
 * differs from node 0's. */
ddl_status_t ddl_bootstrap_check(ddl_comm_t *comm);

#endif
