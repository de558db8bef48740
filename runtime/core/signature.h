/* SPDX-License-Identifier: Apache-2.0 */
/* The always-on agreement check.  Every call, count 0 included, carries a
 * signature (count, type, op, path, plan, call number), published in the
 * rank's mailbox of the node's control block before it waits anywhere.  On
 * one node the ranks compare the signatures there: the owners of an MPI-path
 * call when they meet, every rank of a lane call when the node meets, and a
 * rank of a lane call that finds a peer on the MPI path (or past the call)
 * stops at once.  Between nodes the owners always meet in one exchange of
 * signatures on the owners' communicator (ddl_sig_exchange_data), whichever
 * path they chose, so ranks that chose different paths learn that they
 * disagree instead of waiting for each other in different places.  A
 * difference anywhere makes every rank return DDL_ERR_MISMATCH, naming the
 * ranks and values, before any rank writes to a caller's buffer. */
#ifndef DDL_SIGNATURE_H
#define DDL_SIGNATURE_H

#include <mpi.h>
#include <stdint.h>

#include "choices.h"
#include "ddl.h"
#include "ddl_limits.h"

typedef struct {
    int64_t count;
    int32_t dtype, op;
    int32_t algo;      /* ddl_algo_id_t */
    int32_t lane_algo; /* the call's plan: ddl_inter_algo_id_t */
    uint64_t chunk;    /* the call's plan: bytes per chunk */
    uint32_t seq;      /* the communicator's call number */
    int32_t bad;       /* DDL_SIG_NODE_DISAGREES, DDL_SIG_BAD_BUFFER or DDL_SIG_REFUSED; 0: none */
} ddl_sig_t;

#define DDL_SIG_FIELDS 8

#define DDL_SIG_NODE_DISAGREES 1 /* the ranks of this signature's node called differently */
#define DDL_SIG_BAD_BUFFER 2     /* this owner's buffers cannot be used (it says why) */
#define DDL_SIG_REFUSED 3        /* this rank refused its own arguments to the call (it says why) */

/* "count 8, f32, sum, lane (chunk 65536), call 5" */
void ddl_sig_describe(const ddl_sig_t *s, char *buf, size_t len);

struct ddl_node;
/* The node's checks (node_checks.c).  After the lane call's first meeting
 * (ddl_node_meet): compare the
 * signatures of call seq in every local rank's mailbox.  *node_sig gets local
 * rank 0's, marked bad on a difference; DDL_ERR_MISMATCH names two local
 * ranks that differ and their values.  Every rank of the node reaches the
 * same verdict. */
ddl_status_t ddl_sig_check_node(const struct ddl_node *n, uint32_t seq, ddl_sig_t *node_sig);

/* After ddl_node_owners_meet for call seq: compare the owners' signatures of
 * that call.  DDL_ERR_MISMATCH naming two owners (logged), or
 * DDL_ERR_INVALID_ARG naming an owner that marked its buffers bad (recorded
 * only: that owner keeps its own message, the others report it). */
ddl_status_t ddl_sig_check_owners(const struct ddl_node *n, int lanes, int gpus, uint32_t seq);

/* What the owners' exchange compares: a signature packed into this many
 * words, none negative, exactly: different signatures never have the same
 * key, and ddl_sig_from_key gives back every field. */
#define DDL_SIG_KEY_WORDS 3
void ddl_sig_key(const ddl_sig_t *s, int64_t *key);
ddl_sig_t ddl_sig_from_key(const int64_t *key);
/* Two keys the same; the same but for their bad field.  ddl_sig_key_versus,
 * in one call for each owner of the node's check: DDL_SIG_BAD_BUFFER or
 * DDL_SIG_REFUSED where other is so marked, else 0 where it is first's
 * signature but for the bad field, else -1. */
int ddl_sig_key_same(const int64_t *a, const int64_t *b);
int ddl_sig_key_same_but_bad(const int64_t *a, const int64_t *b);
int ddl_sig_key_versus(const int64_t *first, const int64_t *other);

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
 * number, whose messages then go in pieces: signature.c), every wait's
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
/* On the MPI path a signature's lane_algo says where its data travels: 0
 * not with it, 1 whole in the exchange, DDL_SIG_HALVES in halves. */
#define DDL_SIG_HALVES 2
/* The scratch ddl_sig_exchange_data and ddl_sig_exchange_halves need (the
 * caller keeps it: too large for a thread's stack). */
size_t ddl_sig_scratch_bytes(void);

/* Between nodes, on the owners' communicator, for every call: the
 * signatures' exchange as recursive doubling over point-to-point messages (the extra ranks of a non-power-of-two count folded in first), each
 * carrying the packed signature of the ranks met so far (or that two of them
 * differ: one word's compare per step, signature.c; or, repeating p->last,
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
 * range where it is small and the peer on another host (signature.c), and the
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

#endif
