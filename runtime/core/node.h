/* SPDX-License-Identifier: Apache-2.0 */
/* The node's control block in shared memory, and every wait between the ranks
 * of one node: the barrier, the owners' request doorbells, the abort flag.
 * Waiters spin briefly, then sleep on a futex; every wait has a deadline, checks
 * that its local peers are alive, and names the ranks it waited for. */
#ifndef DDL_NODE_H
#define DDL_NODE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "ddl.h"
#include "ipc_cache.h"
#include "shm.h"
#include "poll.h"
#include "signature.h"

typedef enum {
    DDL_LOC_NONE = 0,
    DDL_LOC_HEAP,   /* in the owner's ddl_malloc heap: read in place */
    DDL_LOC_STAGE,  /* other host memory: copied through the stage area */
    DDL_LOC_DEVICE,  /* device memory: opened by CUDA IPC (in_ref, out_ref) */
    DDL_LOC_INVALID, /* the owner's buffers cannot be used (it says why): every rank fails the call */
} ddl_loc_kind_t;

/* How one call goes between nodes: chosen by the owners (and every rank in
 * collective mode) from the tuning file, the cost model and online
 * selection; serve-mode helpers take it from their owner's request. */
typedef struct {
    int32_t lane_algo;      /* ddl_inter_algo_id_t; AUTO: the model per chunk */
    int32_t multiring;      /* along the DDL_TOPOLOGY grid */
    int32_t dims_fixed;     /* dim_algo holds the multiring's choice; else the model per chunk */
    uint64_t chunk;         /* bytes */
    uint8_t dim_algo[8];    /* [d], d >= 1: ddl_dim_algo_t (DDL_GRID_MAX_DIMS entries) */
    int32_t coll;           /* ddl_coll_t: the steps between nodes are a ring's reduce-scatter or allgather
                               half for those collectives (algo/lane_steps.c) */
} ddl_call_plan_t;

/* An owner's request: what it wants reduced (its signature) and where its
 * buffers are. */
typedef struct {
    int32_t shutdown;          /* serve mode: the owner destroys the communicator */
    int32_t in_kind, out_kind; /* ddl_loc_kind_t */
    ddl_call_plan_t plan;      /* the owner's choices for this call: helpers follow them */
    uint64_t in_off, out_off;  /* byte offsets into the owner's segment (heap) */
    char pci_bus_id[32];       /* device buffers: the owner's GPU */
    ddl_gpu_ref_t in_ref, out_ref;
    ddl_sig_t sig;             /* count, type, op, plan and call number: serve-mode helpers sign it too */
} ddl_node_req_t;

#define DDL_INLINE_BYTES 1024  /* the largest message that goes through the control block */
/* Calls an owner remembers for its helpers in collective mode (a power of
 * two): how each ended and which size class it taught online selection.
 * The owner never runs more than this far ahead of a helper (its
 * ddl_node_ring_outcome waits for one that lags behind). */
#define DDL_NODE_CALLS 4096

typedef struct {
    _Alignas(64) _Atomic uint32_t seq; /* written last: the call whose signature (and data) are here */
    _Atomic uint32_t verdict_seq;      /* owners, lane path between nodes: the call whose verdict is here */
    int64_t key[DDL_SIG_KEY_WORDS];    /* the signature, packed (ddl_sig_key) */
    /* From byte 32: a message of up to 32 bytes shares the line of seq and
     * the signature, which a peer reads first (32 B took 0.81 us against
     * 0.60 us for 8 B when the data began at byte 52). */
    _Alignas(8) unsigned char data[DDL_INLINE_BYTES];
    int32_t verdict;                   /* how the call of verdict_seq's owners' exchange ended (ddl_status_t) */
    int32_t early;                     /* local rank 0, lane path between nodes: the key under which the
                                        * node's first chunks of call seq leave before the owners'
                                        * exchange (algo/lane_early.c); 0: after it */
} ddl_mailbox_t;
_Static_assert(offsetof(ddl_mailbox_t, data) == 32, "32 bytes of data share the mailbox's first line");

typedef struct {
    _Alignas(64) _Atomic uint32_t epoch; /* barriers this rank has entered */
    _Atomic uint32_t doorbell;           /* requests this owner has posted */
    int32_t pid;
    /* Every call of every rank that takes part in it, call n in box[n & 1]:
     * the number and the signature (signature.h), and on the small-message
     * path the data, together, so that a peer that sees `seq` change finds
     * the rest on the same cache lines.  Whatever path a rank chose, its
     * node's peers see which call it is in and how it was called. */
    ddl_mailbox_t box[2];
    /* Owners, collective mode: their last calls, call n in calls[n %
     * DDL_NODE_CALLS] as (n << 32 | status << 16 | class + 1) in one word:
     * how it ended and the size class online selection recorded it in (0:
     * none), for helpers that lag behind (ddl_node_outcome). */
    _Atomic uint64_t calls[DDL_NODE_CALLS];
    ddl_node_req_t req;
    char why[256];                       /* written before this rank sets abort_rank: its error */
} ddl_slot_t;

typedef struct {
    uint32_t magic;
    int32_t nranks;
    _Alignas(64) _Atomic uint32_t wake_seq; /* futex word: bumped on every event */
    _Atomic uint32_t sleepers;
    _Atomic int32_t abort_rank;             /* local rank + 1 of a rank that failed */
    _Alignas(64) ddl_slot_t slots[];
} ddl_ctrl_t;

typedef struct ddl_node {
    ddl_ctrl_t *ctrl;
    ddl_shm_t seg;
    int local_rank, local_size, node;
    uint32_t epoch;
    double timeout;
    const int *world_of_local;   /* for messages */
    const char *host;
    /* Called now and then while a wait here lasts (NULL: never): MPI
     * progress.  A rank whose sends MPI reports complete may still owe the
     * peer the rest of the protocol (Open MPI over TCP), which goes out only
     * when this rank enters MPI again: waiting here without it, a rank left
     * its lane peer waiting until DDL_TIMEOUT. */
    void (*progress)(void *arg);
    void *progress_arg;
} ddl_node_t;

size_t ddl_node_ctrl_size(int local_size);
void ddl_node_ctrl_init(ddl_ctrl_t *ctrl, int local_size);

/* The control block is written and read through these, by what they mean;
 * only node.c touches its fields, but for the two accessors inline here: a
 * call of each on the small-message path cost 0.07 us of 0.64 at 64 bytes
 * (2 owners on one node, ddl-bench, alternating runs).  At creation, the
 * block at seg.base is this process's (its pid shown to its peers for
 * liveness). */
void ddl_node_attach(ddl_node_t *n);
/* Local rank r's request: its buffers, plan and signature (an owner writes
 * its own before it rings; helpers and the other owners read it). */
static inline ddl_node_req_t *ddl_node_request(const ddl_node_t *n, int local_rank)
{
    return &n->ctrl->slots[local_rank].req;
}
/* Local rank r's mailbox of call seq: the signature it showed, and on the
 * small-message path its data. */
static inline ddl_mailbox_t *ddl_node_mailbox(const ddl_node_t *n, int local_rank, uint32_t seq)
{
    return &n->ctrl->slots[local_rank].box[seq & 1];
}
/* Local rank 0 publishes the node's decision for call seq (the key its first
 * chunks leave under before the owners' exchange, 0: after it) before the
 * node meets; every rank reads it once the node has met. */
void ddl_node_publish_early(ddl_node_t *n, uint32_t seq, int early);
int ddl_node_early(const ddl_node_t *n, uint32_t seq);
/* Serve mode: this owner's helpers end their ddl_serve at the next doorbell. */
void ddl_node_request_shutdown(ddl_node_t *n);
/* The node's abort flag, for ddl_wait_until: set when a local rank fails. */
const _Atomic int32_t *ddl_node_abort_flag(const ddl_node_t *n);



/* All local ranks meet; `what` names the phase in a timeout message. */
ddl_status_t ddl_node_barrier(ddl_node_t *n, const char *what);
/* An owner publishes a request to its helpers. */
void ddl_node_ring(ddl_node_t *n);
/* An owner ends a call (collective mode): records how it ended (st) and the
 * size class its record taught online selection (-1: none), then counts it
 * on its doorbell without waking anyone: its helpers have no part in an
 * MPI-path call, and waking them on every call would take the cores from
 * the owners on a node with more ranks than cores.  A helper sleeping on it
 * wakes at the node's next event (the owner's next lane call) or within a
 * sleep slice, and then finds every call up to it done.  Every
 * DDL_NODE_CALLS / 4 calls it looks at how far its `helpers` (the local
 * ranks after it) lag: it wakes them past half the record, and waits for
 * them (with the deadline) past three quarters, so that no record a helper
 * still needs is overwritten. */
ddl_status_t ddl_node_ring_outcome(ddl_node_t *n, ddl_status_t st, int cls, int helpers);
/* The owner's record of the call that rang `bell`: how it ended (*ended:
 * DDL_OK or its failure) and the size class online selection recorded it
 * in (*cls, -1: none).  DDL_ERR_INTERNAL when the record is gone. */
ddl_status_t ddl_node_outcome(const ddl_node_t *n, int owner, uint32_t bell, ddl_status_t *ended, int *cls);
/* A helper waits, without deadline while the owner lives, for a doorbell value
 * other than `seen`; *value gets it. */
ddl_status_t ddl_node_wait_doorbell(ddl_node_t *n, int owner, uint32_t seen, uint32_t *value);
/* A collective-mode helper in call `target` (its owner's doorbell counts
 * the owner's calls, so the call number is the count): it sleeps until the
 * owner's doorbell has reached target (wrapping counts compare as signed).
 * The owner must show the call (publish it, or end it) within the deadline,
 * and end it within the deadline and the graces after that: a timeout names
 * the owner and the call. */
ddl_status_t ddl_node_wait_count(ddl_node_t *n, int owner, uint32_t target);
/* The start of every call, on every path: publish sig as this rank's call seq
 * (in box[seq & 1], after any data put there).  wake: wake the node's
 * sleeping waiters, who wait for it; else they see it at their next look
 * (within a sleep slice): an MPI-path call is seen only by the ranks of a lane
 * call that it does not match, and waking the helpers that sleep through the
 * MPI path on every small call would take the cores from the owners. */
void ddl_node_publish(ddl_node_t *n, const ddl_sig_t *sig, uint32_t seq, int wake);
/* Owners of one node before a small-message call: publish sig as call seq
 * and wait, with the deadline, until every owner of the node has published
 * it; then each reads the others' with ddl_sig_check_owners. */
ddl_status_t ddl_node_owners_meet(ddl_node_t *n, int lanes, int gpus, const ddl_sig_t *sig, uint32_t seq);
/* Wait, with the deadline, until every owner of the node has published call
 * seq or a later one (on any path); `what` names the wait in a timeout
 * message. */
ddl_status_t ddl_node_wait_owners(ddl_node_t *n, int lanes, int gpus, uint32_t seq, const char *what);
/* The first meeting of a lane call, after ddl_node_publish: wait, with the
 * deadline, until every local rank has published call seq.  *split = -1 then;
 * or, as soon as one shows that the node cannot meet here, the first such
 * local rank: one that published call seq for the MPI path (it was called
 * with a size that goes there), or that has gone on to a later call. */
ddl_status_t ddl_node_meet(ddl_node_t *n, uint32_t seq, int *split);
/* Serve mode: before an owner rewrites its request it waits, with the
 * deadline, until its helpers (local ranks first .. first + count - 1) have
 * published call seq, the last request's: they have then read it. */
ddl_status_t ddl_node_wait_published(ddl_node_t *n, int first, int count, uint32_t seq);
/* An owner on the lane path between nodes tells its helpers how the owners'
 * exchange of call seq's signatures ended; a helper waits for it, with the
 * deadline. */
void ddl_node_tell_verdict(ddl_node_t *n, uint32_t seq, ddl_status_t st);
ddl_status_t ddl_node_wait_verdict(ddl_node_t *n, int owner, uint32_t seq, ddl_status_t *verdict);
/* Tell the node's ranks to stop waiting; why (this rank's error) reaches their messages. */
void ddl_node_abort(ddl_node_t *n, const char *why);
/* After an abort: "local rank R (rank W) failed: its message" into buf. */
void ddl_node_abort_reason(const ddl_node_t *n, char *buf, size_t len);
/* After a wait of this rank timed out: how long to wait for the word of the
 * rank it waited for, which is likely timing out in a wait of its own about
 * now (min(timeout / 4, 1 s)). */
double ddl_failure_grace(double timeout);

#endif
