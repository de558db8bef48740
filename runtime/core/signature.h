/* SPDX-License-Identifier: Apache-2.0 */
/* The always-on agreement check.  Every call, count 0 included, carries a
 * signature (count, type, op, path, plan, call number), published in the
 * rank's mailbox of the node's control block before it waits anywhere.  On
 * one node the ranks compare the signatures there: the owners of an MPI-path
 * call when they meet, every rank of a lane call when the node meets, and a
 * rank of a lane call that finds a peer on the MPI path (or past the call)
 * stops at once.  Between nodes the owners always meet in one exchange of
 * signatures on the owners' communicator (agree/exchange.h), whichever
 * path they chose, so ranks that chose different paths learn that they
 * disagree instead of waiting for each other in different places.  A
 * difference anywhere makes every rank return DDL_ERR_MISMATCH, naming the
 * ranks and values, before any rank writes to a caller's buffer. */
#ifndef DDL_SIGNATURE_H
#define DDL_SIGNATURE_H

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
    int32_t coll;      /* ddl_coll_t (collectives.def); last, so that 0, allreduce, is the default */
} ddl_sig_t;

#define DDL_SIG_NODE_DISAGREES 1 /* the ranks of this signature's node called differently */
#define DDL_SIG_BAD_BUFFER 2     /* this owner's buffers cannot be used (it says why) */
#define DDL_SIG_REFUSED 3        /* this rank refused its own arguments to the call (it says why) */

/* On the MPI path a signature's lane_algo says where its data travels: 0
 * not with it, 1 whole in the exchange, DDL_SIG_HALVES in halves. */
#define DDL_SIG_HALVES 2

/* "allreduce of count 8, f32, sum, lane (chunk 65536), call 5" */
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

/* In the owners' exchange (agree/) a key stands for every signature
 * combined into it so far, all alike; once any two differ its last word says
 * so instead (a key's words are never negative): ddl_sig_key_disagree marks
 * it, ddl_sig_key_agreed reads the mark.  Exact, where comparing maxima and
 * minima took twice the words. */
static inline int ddl_sig_key_agreed(const int64_t *key)
{
    return key[DDL_SIG_KEY_WORDS - 1] != -1;
}
static inline void ddl_sig_key_disagree(int64_t *key)
{
    key[DDL_SIG_KEY_WORDS - 1] = -1;
}
/* The call number a key carries, without unpacking the rest. */
uint32_t ddl_sig_key_seq(const int64_t *key);
/* Whether key is agreed and last's signature at the next call number. */
int ddl_sig_key_follows(const int64_t *key, const int64_t *last);
/* The key's first word, the count, is below 2^57 (ddl_allreduce refuses
 * more bytes): the exchange's messages may mark it with this bit. */
#define DDL_SIG_KEY_MARK (INT64_C(1) << 62)

#endif
