/* SPDX-License-Identifier: Apache-2.0 */
/* One call's state (core layer): its arguments and what its runner decides
 * for it.  Each call carries its own: it is passed explicitly from the engine
 * through selection, the algorithms and the transports, never kept in the
 * communicator, so that a request's state lives exactly as long as the
 * request. */
#ifndef DDL_CALL_H
#define DDL_CALL_H

#include <stdint.h>

#include "choices.h"
#include "ddl.h"
#include "node.h"

struct ddl_candidate;

#define DDL_OWNER_CLASS_UNREAD (-2) /* ddl_call_t.owner_class: the owner's record not read yet */

/* One call: its arguments as posted, and the state the runner keeps for it
 * (the request owns it, and passes it down the layers that run it). */
typedef struct {
    int coll;            /* ddl_coll_t: which collective (collectives.def); its signature says so */
    const void *sendbuf; /* DDL_IN_PLACE already resolved */
    void *recvbuf;
    int64_t count;
    ddl_dtype_t dtype;
    ddl_redop_t op;
    ddl_memory_t mem;    /* owners: HOST, DEVICE, or AUTO when the two buffers differ */
    void *stream;        /* device buffers: the caller's stream (a cudaStream_t; NULL: the device) */
    void *ready;         /* nonblocking calls on device buffers: an event recorded on stream at
                            posting; NULL: the runner (the caller) waits for stream itself */
    double posted_at;    /* requests: when ddl_iallreduce posted it (ddl_now); 0: a blocking call */
    /* Filled by the runner. */
    ddl_call_plan_t plan;   /* this call's algorithms and chunk (node.h); serve-mode helpers copy
                               their owner's */
    const struct ddl_candidate *cand; /* online selection: what this call runs (online.h); else NULL */
    int mpi_form;           /* MPI path between nodes (ddl_mpi_form_t): the data rides in the owners'
                               signature exchange up to DDL_SIG_EXCHANGE_BYTES (mpi/exchange), not
                               8 KiB; or MPI_Allreduce never starts early (mpi/after) */
    ddl_status_t own_error; /* why this rank cannot run the call: an owner's unusable buffers, or the
                               refusal below (every rank whose result depends on it fails it) */
    /* A call this rank refused for its own arguments: its message (the
     * runner frees it).  It still takes its number and part in the
     * agreement, as a call of count 0 whose signature never matches
     * (DDL_SIG_REFUSED), so that the others fail it with this rank instead
     * of pairing it with its next call.  NULL: none. */
    char *refusal;
    int owner_class;        /* collective-mode helpers: the size class online selection recorded the
                               owner's call in (ddl_node_outcome; -1: none; DDL_OWNER_CLASS_UNREAD) */
    uint32_t seq;           /* the call number its signature carries */
    int sig_pending;        /* lane path between nodes: the owners' exchange of node_sig is still to come */
    ddl_sig_t node_sig;     /* lane path: this node's signature (local rank 0's; marked bad on a difference) */
    int early;              /* lane path between nodes: the key under which the first chunk leaves before the
                               owners' exchange (algo/lane_early.c); 0: after it */
    double lane_at;         /* lane path: when it took the call up (the start phase runs from here) */
    int started;            /* lane path: its first chunk went out (staged calls go in rounds) */
    /* Lane path, local rank 0 gone ahead of its node (lane_path.c): the
     * rest of the node's first meeting, run once the first chunk has left
     * (ddl_pipeline_run's ready); NULL: the node has met. */
    ddl_status_t (*meet_rest)(void *ctx);
    void *meet_ctx;
} ddl_call_t;

/* Elements of a call's input and output on an owner: a reduce-scatter
 * reads, and an allgather writes, one block of count for each of the job's
 * gpus. */
static inline void ddl_call_elems(int coll, size_t count, size_t gpus, size_t *in, size_t *out)
{
    *in = count * (coll == DDL_COLL_REDUCE_SCATTER ? gpus : 1);
    *out = count * (coll == DDL_COLL_ALLGATHER ? gpus : 1);
}

/* The pieces a lane chunk of the call carries between nnodes nodes: the
 * allreduce's chunk is one; a reduce-scatter's or allgather's has one for
 * every node (algo/lane_view.h). */
static inline size_t ddl_call_pieces(int coll, int nnodes)
{
    return coll == DDL_COLL_ALLREDUCE ? 1 : (size_t)nnodes;
}

#endif
