/* SPDX-License-Identifier: Apache-2.0 */
/* The allreduce paths (algo/): what the engine (route.c, allreduce.c, serve
 * mode) runs once a call's path is chosen, and the pieces the paths share. */
#ifndef DDL_PATHS_H
#define DDL_PATHS_H

#include <stddef.h>

#include "call.h"
#include "comm.h"
#include "ddl.h"

struct ddl_step;

/* The MPI path of call (mpi_path.c): the owners' signatures, then the
 * system MPI_Allreduce over the owners (a host copy of device buffers), or
 * the data with the signatures (allreduce_inline.c); helpers wait for their
 * owner's outcome. */
ddl_status_t ddl_mpi_path(ddl_comm_t *comm, ddl_call_t *call);
/* Its reduce-scatter and allgather, after the signatures (mpi_blocks.c):
 * MPI_Reduce_scatter_block and MPI_Allgather over the owners, device
 * buffers through a host copy. */
ddl_status_t ddl_mpi_blocks(ddl_comm_t *comm, const ddl_call_t *call);
/* bytes of a reduce-scatter's or allgather's caller buffer to or from host
 * memory: memcpy, or for device buffers (call->mem) a copy through the CUDA
 * module, both paths' way in and out of the host (mpi_blocks.c). */
ddl_status_t ddl_blocks_copy(const ddl_comm_t *c, const ddl_call_t *call, void *dst, const void *src, size_t bytes);
/* The lane allreduce of call, planned (call->plan: engine/route.c's
 * ddl_route_lane) on owners and collective helpers; serve-mode helpers pass a
 * call with the owner's count, type and op and take its plan from its request.
 * Its buffers are used on owners only. */
ddl_status_t ddl_lane_path(ddl_comm_t *comm, ddl_call_t *call, int multiring);
/* The device allreduce of the lane algorithm (algo/allreduce_gpu.c, built with
 * CUDA), from the point where every owner has posted its request and the node
 * has met: all of the node's owners posted device buffers.  own_send/own_recv:
 * the owner's own pointers (NULL on helpers). */
ddl_status_t ddl_allreduce_gpu(ddl_comm_t *c, ddl_call_t *call, const void *own_send, void *own_recv);
/* A lane call's chunk goes out (one node: its reduce begins): the first time
 * in the call, its start phase ends (core/phases.h).  In pipeline_link.c,
 * which starts the chunks. */
void ddl_lane_started(ddl_comm_t *c, ddl_call_t *call);
/* The chunk a lane call of `bytes` uses before online selection scales it: the
 * tuning band's, DDL_CHUNK_SIZE, or the cost model's (lane_path.c). */
size_t ddl_lane_chunk(const ddl_comm_t *c, size_t bytes, int multiring);
/* The step list between the nodes for a chunk of n elements of a call with
 * plan (algo/lane_steps.c): *nsteps entries of steps. */
ddl_status_t ddl_lane_steps(ddl_comm_t *c, const ddl_call_plan_t *plan, size_t n, size_t esize, struct ddl_step *steps,
                            int *nsteps);
/* The MPI path's early start between nodes (mpi_early.c), for owners: a call
 * that repeats the last one agreed there starts its MPI_Iallreduce now: 1
 * (its signature says so), 0 not, -1 MPI failed.  finish, after the owners'
 * signatures (st: their outcome): the result into recvbuf once they agree.
 * learn, after every call there that agreed without starting early: the
 * history the next decision reads.  stop, after every call that failed on an
 * owner, whatever its path: no call starts early again. */
ddl_status_t ddl_mpi_early_init(ddl_comm_t *c); /* at creation: where the owners span hosts */
/* The largest call that starts early.  On the emulated 2 x 2 x 2 cluster
 * (bench/JOURNAL.md) an early 64 KiB call took 0.84-0.91x MPI_Allreduce where
 * the signatures' round and then MPI_Allreduce took 0.69-0.70x; from 256 KiB
 * Open MPI's MPI_Iallreduce was slower than its MPI_Allreduce by more than the
 * round (0.63-0.75x against 0.89-0.99x).  Below it online selection times
 * mpi/after beside mpi: where the link, not the round, is what costs, the
 * MPI_Iallreduce may move twice MPI_Allreduce's bytes. */
#define DDL_MPI_EARLY_MAX_BYTES ((size_t)128 << 10)
int ddl_mpi_early_start(ddl_comm_t *c, const ddl_call_t *call);
ddl_status_t ddl_mpi_early_finish(ddl_comm_t *c, ddl_call_t *call, ddl_status_t st);
void ddl_mpi_early_learn(ddl_comm_t *c, const ddl_call_t *call);
void ddl_mpi_early_stop(ddl_comm_t *c);
void ddl_mpi_early_free(ddl_comm_t *c);

/* The lanes' early first chunk between nodes (lane_early.c), decided by
 * local rank 0 for its node: choose, before the node meets, gives the key
 * under which the call's first chunks leave before the owners' exchange (a
 * call whose signature, but for its number, the nodes agreed on before), or
 * 0.  learn, after every lane call between nodes that agreed: the history
 * the next choice reads.  stop, after every call that failed on an owner,
 * whatever its path: no call starts early again. */
ddl_status_t ddl_lane_early_init(ddl_comm_t *c); /* at creation: owners between nodes */
int ddl_lane_early_choose(const ddl_comm_t *c, const ddl_sig_t *sig);
void ddl_lane_early_learn(ddl_comm_t *c, const ddl_sig_t *node_sig);
void ddl_lane_early_stop(ddl_comm_t *c);
void ddl_lane_early_free(ddl_comm_t *c);

/* The smallest messages (allreduce_inline.c): does this call's data travel
 * with its signature, through the control block on one node or in the
 * signature exchange between nodes (the same answer on every owner that
 * agrees on the signature)? */
int ddl_inline_fits(const ddl_comm_t *c, const ddl_call_t *call, size_t bytes);
/* Medium ones between nodes, when the call's form is mpi/halves: the owners'
 * own reduce-scatter and allgather, the signatures in its messages
 * (ddl_sig_exchange_halves; a power of two of owners, host buffers, up to
 * DDL_SIG_HALVES_BYTES; else the plain form). */
int ddl_halves_fit(const ddl_comm_t *c, const ddl_call_t *call, size_t bytes);
/* Between nodes, a power of two of owners: the halves can run (every rank
 * answers alike: online selection's candidates). */
int ddl_halves_owners(const ddl_comm_t *c);
/* Before the owners meet: this owner's data into its slot. */
void ddl_inline_post(ddl_comm_t *c, const void *sendbuf, size_t bytes);
/* After they met and agreed: the sum (op) of every owner's data into recvbuf. */
void ddl_inline_reduce(ddl_comm_t *c, void *recvbuf, size_t count, ddl_dtype_t dtype, ddl_redop_t op);

#endif
