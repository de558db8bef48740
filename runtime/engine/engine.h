/* SPDX-License-Identifier: Apache-2.0 */
/* The request engine: every collective call, blocking or not, is a request that is
 * posted (arguments checked, queued), progressed (run by the communicator's
 * progress thread, or by a caller waiting for it when no thread runs one) and
 * completed (status and message kept for ddl_test / ddl_wait), in posting
 * order. */
#ifndef DDL_ENGINE_H
#define DDL_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "call.h"
#include "ddl.h"

struct ddl_comm;

typedef enum { DDL_REQ_QUEUED = 0, DDL_REQ_RUNNING, DDL_REQ_DONE } ddl_req_state_t;

struct ddl_request {
    ddl_call_t call;
    struct ddl_comm *comm;
    struct ddl_request *next;  /* the engine's queue */
    _Atomic int state;         /* ddl_req_state_t; DONE is written last, under the lock */
    int freed;                 /* ddl_request_free came first: the engine frees it */
    uint32_t ticket;           /* its place in the posting order (ddl_wait_stream) */
    ddl_status_t status;
    char error[512];           /* the runner's ddl_last_error for a failed request */
};

typedef struct ddl_engine {
    pthread_mutex_t lock;
    pthread_cond_t posted;    /* a request was queued, or the runner became free */
    pthread_cond_t completed; /* a request completed */
    struct ddl_request *head, *tail;
    /* The runner: 1 while a call runs (on the thread or a caller).  Taken by
     * compare-and-swap, so that a blocking call with nothing queued takes and
     * gives it back without the lock (engine.c: the runner's protocol). */
    _Atomic int busy;
    _Atomic int queued;       /* requests in the queue (changed under the lock) */
    _Atomic int draining;     /* ddl_engine_drain waits for the runner */
    int threaded;             /* MPI_THREAD_MULTIPLE: a progress thread carries the requests */
    _Atomic int told_unthreaded; /* the first request without the thread was logged */
    int thread_on, stop;
    pthread_t thread;
    /* Requests complete in posting order: the last ticket posted and the last
     * completed, and the latter in pinned host memory for streams to wait on
     * (ddl_wait_stream; made at its first use, kept with the engine). */
    uint32_t posted_ticket, done_ticket;
    uint32_t *done_word;
} ddl_engine_t;

/* At communicator creation: threaded when MPI gives MPI_THREAD_MULTIPLE (the
 * thread starts with the first nonblocking request).  NULL when out of
 * memory.  It outlives the communicator's destruction, as the communicator's
 * struct does (comm.h): a request may be freed after it. */
ddl_engine_t *ddl_engine_create(void);
/* At destruction: wait for every outstanding request, stop the thread. */
void ddl_engine_drain(ddl_engine_t *e);

/* Run one posted call to completion on the calling thread (collective.c); a
 * refused call returns its refusal, with its message. */
ddl_status_t ddl_call_run(ddl_call_t *call, struct ddl_comm *c);
/* Check a call's arguments and fill *call (collective.c); nothing is queued.
 * An error means the call cannot take part (the communicator is not live or
 * has failed, or this rank is a serve-mode helper).  Bad arguments give
 * DDL_OK and a refused call (call->refusal, call->own_error): the caller
 * still runs or posts it, so that it takes its number in the agreement, and
 * returns its refusal. */
ddl_status_t ddl_call_post_check(int coll, const void *sendbuf, void *recvbuf, int64_t count, ddl_dtype_t dtype,
                                 ddl_redop_t op, ddl_memory_t mem, void *stream, struct ddl_comm *c, ddl_call_t *call);
/* Refuse *call (not refused yet) for st, its message the thread's last error. */
void ddl_call_refuse(ddl_call_t *call, ddl_status_t st);
/* Free what a refused call holds (the runner does, or the poster of one that never ran). */
void ddl_call_free(ddl_call_t *call);

#endif
