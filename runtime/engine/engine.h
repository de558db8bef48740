/* SPDX-License-Identifier: Apache-2.0 */
/* The request engine: every allreduce, blocking or not, is a request that is
 * posted (arguments checked, queued), progressed (run by the communicator's
 * progress thread, or by the caller when there is none) and completed (status
 * and message kept for ddl_test / ddl_wait), in posting order. */
#ifndef DDL_ENGINE_H
#define DDL_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>

#include "ddl.h"
#include "node.h"

struct ddl_comm;

/* One call: its arguments as posted, and the state the runner keeps for it
 * (the request owns it; the communicator points at the running call). */
typedef struct {
    const void *sendbuf; /* DDL_IN_PLACE already resolved */
    void *recvbuf;
    int64_t count;
    ddl_dtype_t dtype;
    ddl_redop_t op;
    ddl_memory_t mem;    /* owners: HOST, DEVICE, or AUTO when the two buffers differ */
    void *stream;        /* device buffers: the caller's stream (a cudaStream_t; NULL: the device) */
    void *ready;         /* nonblocking calls on device buffers: an event recorded on stream at
                            posting; NULL: the runner (the caller) waits for stream itself */
    /* Filled by the runner. */
    ddl_call_plan_t plan;   /* this call's algorithms and chunk (node.h); serve-mode helpers copy
                               their owner's */
    const struct ddl_candidate *cand; /* online selection: what this call runs (online.h); else NULL */
    int exchange;           /* MPI path between nodes: the data rides in the owners' signature
                               exchange up to DDL_SIG_EXCHANGE_BYTES (mpi/exchange), not 8 KiB */
    ddl_status_t own_error; /* owners: why this call's buffers cannot be used (every rank fails it) */
    uint32_t seq;           /* the call number its signature carries */
    int sig_pending;        /* lane path between nodes: the owners' exchange of node_sig is still to come */
    ddl_sig_t node_sig;     /* lane path: this node's signature (local rank 0's; marked bad on a difference) */
} ddl_call_t;

typedef enum { DDL_REQ_QUEUED = 0, DDL_REQ_RUNNING, DDL_REQ_DONE } ddl_req_state_t;

struct ddl_request {
    ddl_call_t call;
    struct ddl_comm *comm;
    struct ddl_request *next;  /* the engine's queue */
    _Atomic int state;         /* ddl_req_state_t; DONE is written last, under the lock */
    int freed;                 /* ddl_request_free came first: the engine frees it */
    double posted_at;          /* ddl_now() at posting, for the TRACE log */
    ddl_status_t status;
    char error[512];           /* the runner's ddl_last_error for a failed request */
};

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t posted;    /* a request was queued, or the runner became free */
    pthread_cond_t completed; /* a request completed */
    struct ddl_request *head, *tail;
    int busy;                 /* a request is running (on the thread or a caller) */
    int threaded;             /* MPI_THREAD_MULTIPLE: a progress thread carries the requests */
    int thread_on, stop;
    pthread_t thread;
} ddl_engine_t;

/* At communicator creation: threaded when MPI gives MPI_THREAD_MULTIPLE (the
 * thread starts with the first nonblocking request). */
void ddl_engine_init(ddl_engine_t *e);
/* At destruction: wait for every outstanding request, stop the thread. */
void ddl_engine_drain(ddl_engine_t *e);

/* Run one posted call to completion on the calling thread (allreduce.c). */
ddl_status_t ddl_allreduce_run(ddl_call_t *call, struct ddl_comm *c);
/* Check a call's arguments and fill *call (allreduce.c); nothing is queued. */
ddl_status_t ddl_allreduce_post_check(const void *sendbuf, void *recvbuf, int64_t count, ddl_dtype_t dtype,
                                      ddl_redop_t op, ddl_memory_t mem, void *stream, struct ddl_comm *c,
                                      ddl_call_t *call);

#endif
