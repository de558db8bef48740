/* SPDX-License-Identifier: Apache-2.0 */
/* The always-on agreement check.  Every call carries a signature (count, type,
 * op, algorithm, plan, call number).  Inside a node the ranks compare the
 * signatures in their control-block slots after the call's first barrier;
 * between nodes one small nonblocking allreduce over each lane carries the
 * node's signature while the first chunk is reduced.  A difference anywhere
 * makes every rank return DDL_ERR_MISMATCH, naming the ranks and values,
 * before any rank writes to a caller's buffer. */
#ifndef DDL_SIGNATURE_H
#define DDL_SIGNATURE_H

#include <mpi.h>
#include <stdint.h>

#include "ddl.h"
#include "ddl_limits.h"

typedef struct {
    int64_t count;
    int32_t dtype, op;
    int32_t algo;      /* ddl_algo_id_t */
    int32_t lane_algo; /* the call's plan: ddl_inter_algo_id_t */
    uint64_t chunk;    /* the call's plan: bytes per chunk */
    uint32_t seq;      /* the communicator's call number */
    int32_t bad;       /* DDL_SIG_NODE_DISAGREES or DDL_SIG_BAD_BUFFER; 0: none */
} ddl_sig_t;

#define DDL_SIG_FIELDS 8
#define DDL_SIG_NODE_DISAGREES 1 /* the ranks of this signature's node called differently */
#define DDL_SIG_BAD_BUFFER 2     /* this owner's buffers cannot be used (it says why) */

/* "count 8, f32, sum, lane (chunk 65536), call 5" */
void ddl_sig_describe(const ddl_sig_t *s, char *buf, size_t len);
int ddl_sig_equal(const ddl_sig_t *a, const ddl_sig_t *b);

struct ddl_node;
/* After the call's first node barrier: compare the signatures in every local
 * rank's slot.  *node_sig gets local rank 0's, marked bad on a difference;
 * DDL_ERR_MISMATCH names two local ranks that differ and their values.  Every
 * rank of the node reaches the same verdict. */
ddl_status_t ddl_sig_check_node(const struct ddl_node *n, ddl_sig_t *node_sig);

/* After ddl_node_owners_meet for call seq: compare the owners' signatures of
 * that call.  DDL_ERR_MISMATCH naming two owners (logged), or
 * DDL_ERR_INVALID_ARG naming an owner that marked its buffers bad (recorded
 * only: that owner keeps its own message, the others report it). */
ddl_status_t ddl_sig_check_owners(const struct ddl_node *n, int lanes, int gpus, uint32_t seq);

/* One exchange of signatures over an MPI communicator, in flight. */
typedef struct {
    MPI_Request req;
    int64_t mine[DDL_SIG_FIELDS], ext[2 * DDL_SIG_FIELDS];
    MPI_Comm comm;
    int world_rank; /* for messages */
    int active;
} ddl_sig_exchange_t;

/* Start comparing s with every rank of comm (all must start one); world_rank
 * names this rank in messages.  blocking: exchange now with the system MPI's
 * blocking allreduce (the small-message path, which is MPI's own: a
 * nonblocking one costs more than the message), else in flight until
 * ddl_sig_finish. */
ddl_status_t ddl_sig_start(ddl_sig_exchange_t *x, MPI_Comm comm, int world_rank, const ddl_sig_t *s, int blocking);
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
/* The scratch ddl_sig_exchange_data needs (the caller keeps it: too large
 * for a thread's stack). */
size_t ddl_sig_scratch_bytes(void);

/* The MPI path between nodes, on the owners' communicator: the signature
 * exchange of ddl_sig_start as recursive doubling over point-to-point
 * messages (the extra ranks of a non-power-of-two count folded in first), each
 * carrying the signature's maximum and minimum so far and, when data is not
 * NULL, the call's data (s->count elements, at most DDL_SIG_EXCHANGE_BYTES
 * bytes; s says so with lane_algo 1).  The data is reduced with s->op, the lower
 * rank's operand first, only while every signature met so far is the same:
 * then all ranks hold the same bits, and the call needs no second allreduce.
 * Every receive is posted for the largest message, so ranks that called
 * differently still match; every wait has the deadline.  On DDL_OK it is
 * done, and ddl_sig_finish (which returns at once) compares; the reduced data
 * (DDL_REDOP_AVG: summed) is written to result only when every signature
 * agreed, which is when ddl_sig_finish returns DDL_OK. */
ddl_status_t ddl_sig_exchange_data(ddl_sig_exchange_t *x, MPI_Comm comm, int world_rank, const ddl_sig_t *s,
                                   const void *data, void *result, void *scratch, double timeout,
                                   const _Atomic int32_t *abort);

/* Wait for it, at most `timeout` seconds, giving up when *abort becomes
 * nonzero (the node's abort flag; may be NULL).  DDL_ERR_MISMATCH when any
 * rank's signature differs or is marked bad; the message names two ranks that
 * differ (hosts[] by world rank) and their values; DDL_ERR_INVALID_ARG
 * naming the owner when one marked its buffers bad; DDL_ERR_PEER_FAILED
 * without a message when *abort was set (the caller knows the node). */
ddl_status_t ddl_sig_finish(ddl_sig_exchange_t *x, double timeout, const _Atomic int32_t *abort,
                            const char (*hosts)[DDL_HOST_LEN], const char *where);

#endif
