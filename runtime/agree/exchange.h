/* SPDX-License-Identifier: Apache-2.0 */
/* The always-on agreement check between nodes (core/signature.h says the
 * whole check): the owners' exchange of signatures on their own
 * communicator, which may carry a small call's data, or a medium call in
 * halves, and the communicator's entry to it.  Above transport and beside
 * the agreement on numbers (agree.h): it is an algorithm over the network,
 * which the node's control block and the signatures' key below it are not. */
#ifndef DDL_EXCHANGE_H
#define DDL_EXCHANGE_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

#include "comm.h"
#include "ddl.h"
#include "ddl_limits.h"
#include "signature.h"

/* One exchange of signatures over an MPI communicator. */
typedef struct {
    ddl_sig_t mine; /* this rank's, for naming a difference */
    int64_t key[DDL_SIG_KEY_WORDS];
    MPI_Comm comm;
    int world_rank; /* for messages */
} ddl_sig_exchange_t;

/* Where the owners' exchange runs, the same for every call of a
 * communicator: comm, this rank's place in it (known to the caller: asking
 * MPI on every call cost 0.01-0.03 us of an 8-byte call of 0.7 us between 2
 * virtual nodes, bench/JOURNAL.md),
 * its world rank (for the message naming a mismatch), world_of (may be
 * NULL: the world rank of each rank of comm, for the message naming a peer
 * that did not come), shm_host (may be NULL, or with world_of NULL: none; by
 * world rank, which ranks MPI reaches through shared memory, the same
 * number, whose messages then go in pieces: sig_msg.h), every wait's
 * deadline and the node's abort flag. */
typedef struct ddl_sig_last ddl_sig_last_t;
typedef struct {
    MPI_Comm comm;
    int rank, size, world_rank;
    const int *world_of, *shm_host;
    double timeout;
    const _Atomic int32_t *abort;
    ddl_sig_last_t *last; /* may be NULL: every message carries its key */
} ddl_sig_peers_t;

/* The signature the owners' last exchange on comm agreed on, kept by the
 * caller across calls.  A call that repeats it (the same signature, the
 * next call number) sends no key: its messages' tag says "the last one
 * again", and its data goes alone.  Every owner holds the same one (each
 * exchange ends with the same verdict on every rank), so two such messages
 * are the same signature; a message with its key and one without never
 * agree.  Measured between 2 virtual nodes (bench/JOURNAL.md): an 8-byte
 * message took 0.05-0.1 us less than the 32 bytes of key and data. */
struct ddl_sig_last {
    int64_t key[DDL_SIG_KEY_WORDS];
    int valid;    /* the last exchange ended with every owner agreeing, none bad */
    int tag_span; /* the call numbers' tags (MPI_TAG_UB); 0: not asked yet, -1: none */
};

/* The smallest messages between nodes travel with the owners' signatures;
 * up to DDL_SIG_EXCHANGE_BYTES they may (online selection's mpi/exchange),
 * where the recursive doubling with the data is measured against the
 * signatures' round followed by the system MPI_Allreduce. */
#define DDL_SIG_DATA_BYTES 8192
/* 63 KiB: with the signatures and the transport's own header a message stays
 * within the 64 KiB that Open MPI's TCP transport sends at once; a longer one
 * waits a round trip for the receiver's answer (measured on the emulated
 * 2 x 2 x 2 cluster: the exchange of 32 KiB took 108 us, of 64 KiB 555 us). */
#define DDL_SIG_EXCHANGE_BYTES (63 * 1024)
/* The data one message of the owners' exchange may hold, in either form:
 * the exchange's (at most DDL_SIG_EXCHANGE_BYTES) or half a call in halves.
 * Every rank posts its receives for this much, so it holds whatever a peer
 * in either form sends. */
#define DDL_SIG_MESSAGE_BYTES (256 * 1024)
/* The largest call ddl_sig_exchange_halves carries: half of it (an odd
 * element more) fits a message.  Measured on the emulated 2 x 2 x 2 rails
 * (bench/JOURNAL.md): at 256 KiB 0.95-1.00x MPI_Allreduce in halves, 0.88-0.93x
 * with the signatures' round before it. */
#define DDL_SIG_HALVES_BYTES (2 * DDL_SIG_MESSAGE_BYTES - 64)
/* The scratch ddl_sig_exchange_data and ddl_sig_exchange_halves need (the
 * caller keeps it: too large for a thread's stack). */
size_t ddl_sig_scratch_bytes(void);

/* Between nodes, on the owners' communicator, for every call: the
 * signatures' exchange as recursive doubling over point-to-point messages
 * (the extra ranks of a non-power-of-two count folded in first), each
 * carrying the packed signature of the ranks met so far (or that two of them
 * differ: one word's compare per step, core/signature.h; or, repeating p->last,
 * only its tag) and, when data is not
 * NULL, the call's data (s->count elements, at most DDL_SIG_EXCHANGE_BYTES
 * bytes; s says so with lane_algo 1).  The data is reduced with s->op, the lower
 * rank's operand first, only while every signature met so far is the same:
 * then all ranks hold the same bits, and the call needs no second allreduce.
 * Every receive is posted for the largest message, so ranks that called
 * differently still match; every wait has the deadline.  On DDL_OK it is
 * done, and ddl_sig_finish (which returns at once) compares; the reduced data
 * (DDL_REDOP_AVG: summed) is written to result only when every signature
 * agreed, which is when ddl_sig_finish returns DDL_OK.
 * group: the ranks r / group of comm have agreed already and hold one
 * signature (a node's owners on the lanes, after the node's own check), so
 * their rounds with each other are skipped, by both sides; 1: none.  Used
 * only where the recursive doubling's blocks are the groups (comm's size and
 * group powers of two); else every round runs. */
ddl_status_t ddl_sig_exchange_data(ddl_sig_exchange_t *x, const ddl_sig_peers_t *p, const ddl_sig_t *s,
                                   const void *data, void *result, void *scratch, int group);

/* The exchange in halves (online selection's mpi/halves), where comm's size
 * is a power of two: a reduce-scatter by recursive halving whose messages
 * each carry the key, as the exchange's rounds do (the same peers, so ranks
 * in either form still match), then, once every key agreed, an allgather by
 * recursive doubling straight into result.  The last round swaps its whole
 * range where it is small and the peer on another host (halves.c), and the
 * allgather then skips it; it reduces straight into result, and long ranges
 * go from where they are, apart from the key.  As many bytes as Open MPI's
 * own allreduce sends for these sizes, and no round of signatures of its own.
 * s->lane_algo is DDL_SIG_HALVES; data (s->count elements, at most
 * DDL_SIG_HALVES_BYTES) NULL when this rank cannot use its buffers (its key
 * says so).  Otherwise as ddl_sig_exchange_data, group 1. */
ddl_status_t ddl_sig_exchange_halves(ddl_sig_exchange_t *x, const ddl_sig_peers_t *p, const ddl_sig_t *s,
                                     const void *data, void *result, void *scratch);

/* After ddl_sig_exchange_data or ddl_sig_exchange_halves returned DDL_OK: DDL_ERR_MISMATCH when any
 * rank's signature differs or is marked bad; the message names two ranks that
 * differ (hosts[] by world rank) and their values; DDL_ERR_INVALID_ARG
 * naming the owner when one marked its buffers bad. */
ddl_status_t ddl_sig_finish(ddl_sig_exchange_t *x, const char (*hosts)[DDL_HOST_LEN], const char *where);

/* The owners' exchange of a communicator: its scratch and its last
 * agreement (ddl_sig_last_t), made at its first exchange, freed with the
 * communicator (ddl_owners_exchange_free; NULL: none). */
struct ddl_owners_exchange;
void ddl_owners_exchange_free(struct ddl_owners_exchange *x);

/* Between nodes: this owner's part in the owners' exchange of signatures of
 * its call (every owner takes part once per call, whatever its path;
 * data/result: the MPI path's smallest messages travel with it, else NULL,
 * or, with sig's lane_algo DDL_SIG_HALVES, medium ones in halves;
 * node_agreed: every owner of this node takes part with this same sig, as
 * on the lanes after the node's check, so they skip their rounds together).
 * DDL_OK, DDL_ERR_MISMATCH or DDL_ERR_INVALID_ARG (naming the ranks), or the
 * failure of a rank (DDL_ERR_PEER_FAILED, DDL_ERR_TIMED_OUT) with its reason
 * (ddl_comm_wait_ended). */
ddl_status_t ddl_owners_agree(ddl_comm_t *c, const ddl_sig_t *sig, const void *data, void *result, int node_agreed);
/* A lane call between nodes, before its first byte leaves the node: call's
 * owners' exchange of the node's signature (owners run it, helpers wait for
 * their owner's word; a no-op once done, or on one node).  DDL_ERR_MISMATCH
 * when any node called differently. */
ddl_status_t ddl_owners_finish_signature(ddl_comm_t *c, ddl_call_t *call);

#endif
