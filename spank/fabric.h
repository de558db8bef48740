/* SPDX-License-Identifier: Apache-2.0 */
/* Each network stack's own variables for a lane's rail, from one table of
 * stacks (fabric.c): a row is a variable, which stack reads it, and which of
 * the rail's names (rails.h) it takes.  A new stack is rows, not code.
 *
 * The plugin sets the rows of every stack the site's fabric= names (all of
 * them by default): a stack reads only its own variables, so those of a stack
 * the job does not use change nothing, and the site need not know which MPI
 * each job brings.  A row applies only where the rail has the kind of name it
 * takes (no interface name goes to a variable that wants an RDMA device), a
 * value already in the job's environment wins, and a row is left out where
 * the job set a variable it would conflict with. */
#ifndef DDL_SPANK_FABRIC_H
#define DDL_SPANK_FABRIC_H

#include <stddef.h>

#include "rails.h"

/* fabric= values, as bits: which stacks get their variables. */
enum {
    DDL_STACK_TCP = 1u << 0,  /* Open MPI's btl/tcp */
    DDL_STACK_UCX = 1u << 1,  /* UCX: Open MPI's pml/ucx, MPICH's ch4:ucx */
    DDL_STACK_OFI = 1u << 2,  /* libfabric: Open MPI's mtl/ofi, MPICH's ch4:ofi */
    DDL_STACK_CRAY = 1u << 3, /* Cray MPICH's NIC policy (Slingshot) */
    DDL_STACK_NCCL = 1u << 4, /* NCCL, for the device path's NCCL lanes */
    DDL_STACKS_ALL = (1u << 5) - 1
};

/* "auto" (every stack) or a comma-separated list of tcp, ucx, ofi, cray,
 * nccl.  Returns 0, or -1 on a word it does not know. */
int ddl_fabric_parse(const char *value, unsigned *stacks);
/* The accepted values, for a message. */
const char *ddl_fabric_accepted(void);

/* Called once per variable the lane gets: `unless`, when not NULL, is a
 * variable whose presence in the job's environment means this one must not
 * be set (the stack would refuse both). */
typedef void (*ddl_fabric_emit_t)(void *ctx, const char *var, const char *value, const char *unless);

/* The variables of the stacks in `stacks` for task `task` of a node whose
 * tasks' rails are rails[task_rail[t]], t < ntasks (a stack's mapping of the
 * whole node needs them all). */
void ddl_fabric_env(unsigned stacks, const ddl_rail_t *rails, const int *task_rail, int ntasks, int task,
                    ddl_fabric_emit_t emit, void *ctx);

#endif
