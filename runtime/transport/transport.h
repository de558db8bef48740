/* SPDX-License-Identifier: Apache-2.0 */
/* Transports: how one chunk of a lane's partial sums travels between the
 * nodes of the lane and comes back reduced: one start/finish pair per
 * transport, as NCCL's transports are.  A chunk is started in a pipeline slot
 * and finished later; up to DDL_INFLIGHT slots are in flight
 * (algo/pipeline.c).  The rows, in the order ddl_transport_for tries their
 * `usable` (transport.c; a new transport is its file and one entry there,
 * or in the CUDA module's table, root/cuda_module.c, for device memory):
 *
 *   host-p2p    host memory, the lane's step list (ring, recursive doubling,
 *               Rabenseifner, multiring) over MPI point-to-point
 *   nccl        device memory, one NCCL communicator per lane, stream-ordered
 *   cuda-mpi    device memory, MPI_Iallreduce of a CUDA-aware MPI
 *   staged      device memory through pinned host memory and host-p2p
 *
 * The device rows are the CUDA module's (transport_gpu.c, listed in its
 * table: gpu/gpu_module.h). */
#ifndef DDL_TRANSPORT_H
#define DDL_TRANSPORT_H

#include <stddef.h>

#include "ddl.h"
#include "node.h"

struct ddl_comm;
struct ddl_step;

/* Builds the chunk's step list between nodes for the call's plan (algo's
 * ddl_lane_steps, passed down by the pipeline): the host schedules run it;
 * a transport with its own collective (NCCL, CUDA-aware MPI) does not call it. */
typedef ddl_status_t (*ddl_steps_fn)(struct ddl_comm *c, const ddl_call_plan_t *plan, size_t n, size_t esize,
                                     struct ddl_step *steps, int *nsteps);

typedef struct ddl_transport {
    const char *name;
    /* Its own state for communicator c, made when c is created (between
     * nodes; on one node it may make none: *state NULL), as NCCL's
     * transports set up their connections: max_steps bounds a chunk's step
     * list between nodes.  NULL: it keeps none.  ddl_transport_state finds
     * the state again; fini frees it with the communicator. */
    ddl_status_t (*init)(struct ddl_comm *c, int max_steps, void **state);
    void (*fini)(struct ddl_comm *c, void *state);
    /* Can it carry this call's chunks (device or host buffers, type, op)? */
    int (*usable)(const struct ddl_comm *c, int device, ddl_dtype_t dtype, ddl_redop_t op);
    /* Start the lane allreduce of the n elements in buf (pipeline slot `slot`)
     * with the call's plan (its lane algorithm, or the grid's), whose steps
     * `steps` builds; its first bytes leave now.  early: 0, or the key under
     * which a chunk goes before its call's agreement (algo/lane_early.c): its
     * messages meet only those of calls started under the same key. */
    ddl_status_t (*start)(struct ddl_comm *c, const ddl_call_plan_t *plan, ddl_steps_fn steps, int slot, void *buf,
                          size_t n, ddl_dtype_t dtype, ddl_redop_t op, int early);
    /* Wait until buf holds the lane's result (every wait has DDL_TIMEOUT). */
    ddl_status_t (*finish)(struct ddl_comm *c, int slot, void *buf, size_t n, ddl_dtype_t dtype);
    /* The call of an early chunk failed its agreement: stop the chunk without
     * waiting for peers that may never answer, leaving to MPI whatever it may
     * still write.  NULL: this transport never starts a chunk early. */
    ddl_status_t (*abandon)(struct ddl_comm *c, int slot);
} ddl_transport_t;

extern const ddl_transport_t ddl_transport_host_p2p;
/* The CUDA module's rows (transport_gpu.c). */
extern const ddl_transport_t ddl_transport_staged, ddl_transport_cuda_mpi, ddl_transport_nccl;

/* Every row's state for one communicator (c->transports): made by
 * ddl_transports_init (transport.c, which has the rows), found by
 * ddl_transport_state (transport_state.c, which the rows use). */
#define DDL_TRANSPORT_ROWS_MAX 8 /* the host row and the CUDA module's */
struct ddl_transports {
    size_t n;
    const struct ddl_transport *row[DDL_TRANSPORT_ROWS_MAX];
    void *state[DDL_TRANSPORT_ROWS_MAX];
};

/* Every row's init (the host row, then the CUDA module's rows when it is
 * loaded), kept on c (c->transports), and every row's fini. */
ddl_status_t ddl_transports_init(struct ddl_comm *c, int max_steps);
void ddl_transports_fini(struct ddl_comm *c);
/* The state row's init made for c (NULL: none). */
void *ddl_transport_state(const struct ddl_comm *c, const ddl_transport_t *row);

/* The first usable row for this call: host-p2p for host buffers; for device
 * buffers the one DDL_GPU_TRANSPORT agreed at creation (cuda-mpi only where
 * MPI has the type and op natively), else staged. */
const ddl_transport_t *ddl_transport_for(const struct ddl_comm *c, int device, ddl_dtype_t dtype, ddl_redop_t op);

#endif
