/* SPDX-License-Identifier: Apache-2.0 */
/* The request engine (engine.h): a queue of posted calls per communicator,
 * one runner at a time, and a progress thread that runs them in posting order
 * while the caller goes on.  Every rank posts the same calls in the same order,
 * so running them in order keeps the ranks' collectives matched.
 *
 * Only one call runs at a time on a communicator (`busy`), on the progress
 * thread or on a caller: a blocking ddl_allreduce with nothing queued runs on
 * its own thread and pays no hand-off; one posted behind queued requests waits
 * its turn like them.
 *
 * The runner's protocol.  `busy` is taken by compare-and-swap (take_runner)
 * and given back with a store; the queue and the waits are under the lock.
 * A blocking call with nothing queued takes and gives back the runner without
 * the lock (claim_runner, give_back_runner: two locks and two broadcasts
 * cost about 0.05 us of a small call's 0.1 us of bookkeeping, measured on one
 * rank).  Who can wait for the runner to become free: the progress thread and
 * the waits (ddl_wait, ddl_test without the thread, ddl_wait_stream's
 * fallback), all for a queued request (`queued` > 0), and ddl_engine_drain
 * (`draining`).  A giver that sees neither wakes nobody; one that does
 * broadcasts under the lock, which a waiter holds from its look at `busy` until
 * it sleeps.  busy, queued and draining are sequentially consistent: either the
 * giver sees the count or flag, or the waiter's look after it sees busy 0. */
#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "comm.h"
#include "engine.h"
#include "gpu.h"
#include "log.h"
#include "trace.h"

ddl_engine_t *ddl_engine_create(void)
{
    ddl_engine_t *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->posted, NULL);
    pthread_cond_init(&e->completed, NULL);
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    e->threaded = level == MPI_THREAD_MULTIPLE;
    return e;
}

/* busy 0 -> 1: 1 when this thread is the runner now. */
static int take_runner(ddl_engine_t *e)
{
    int free_runner = 0;
    return atomic_compare_exchange_strong(&e->busy, &free_runner, 1);
}

/* The runner is free again: wake the progress thread (the next request) and
 * the waiters (ddl_wait, ddl_engine_drain).  With the lock held. */
static void release_runner(ddl_engine_t *e)
{
    atomic_store(&e->busy, 0);
    pthread_cond_broadcast(&e->completed);
    pthread_cond_broadcast(&e->posted);
}

/* release_runner without the lock held: the lock only when someone can be
 * waiting for the runner (the protocol above). */
static void give_back_runner(ddl_engine_t *e)
{
    atomic_store(&e->busy, 0);
    if (atomic_load(&e->queued) == 0 && atomic_load(&e->draining) == 0)
        return;
    pthread_mutex_lock(&e->lock);
    release_runner(e);
    pthread_mutex_unlock(&e->lock);
}

/* A blocking call's runner without the lock: only while nothing is queued
 * (a request posted before it runs first). */
static int claim_runner(ddl_engine_t *e)
{
    if (atomic_load(&e->queued) != 0 || !take_runner(e))
        return 0;
    if (atomic_load(&e->queued) == 0)
        return 1;
    give_back_runner(e); /* a request came in between: its turn first */
    return 0;
}

/* Run r (popped by the caller, busy set) without the lock, then complete it.
 * Called and returns with the lock held. */
static void run_locked(ddl_engine_t *e, struct ddl_request *r)
{
    atomic_store(&r->state, DDL_REQ_RUNNING);
    pthread_mutex_unlock(&e->lock);
    double start = ddl_now();
    ddl_trace_event("queued", r->call.posted_at, start, NULL);
    ddl_status_t st = ddl_call_run(&r->call, r->comm);
    ddl_gpu_event_free(r->call.ready);
    DDL_TRACE(DDL_SUBSYS_COLL, "request of %lld %s: queued %.2f ms, ran %.2f ms (%s)", (long long)r->call.count,
              ddl_dtype_name(r->call.dtype), (start - r->call.posted_at) * 1e3, (ddl_now() - start) * 1e3,
              ddl_status_string(st));
    pthread_mutex_lock(&e->lock);
    r->status = st;
    if (st != DDL_OK)
        snprintf(r->error, sizeof(r->error), "%s", ddl_last_error());
    /* Streams waiting for it go on (ddl_wait_stream), whatever its status. */
    e->done_ticket = r->ticket;
    if (e->done_word)
        __atomic_store_n(e->done_word, r->ticket, __ATOMIC_RELEASE);
    int freed = r->freed;
    atomic_store(&r->state, DDL_REQ_DONE); /* the caller may free r from here on */
    if (freed)
        free(r);
    release_runner(e);
}

/* The next queued request, for the runner (take_runner succeeded).  With the lock held. */
static struct ddl_request *pop(ddl_engine_t *e)
{
    struct ddl_request *r = e->head;
    e->head = r->next;
    if (!e->head)
        e->tail = NULL;
    atomic_fetch_sub(&e->queued, 1);
    return r;
}

static void *progress_main(void *arg)
{
    ddl_engine_t *e = arg;
    prctl(PR_SET_NAME, "ddl-progress"); /* what top -H and ps -L show */
    ddl_trace_thread("progress thread");
    pthread_mutex_lock(&e->lock);
    for (;;) {
        if (e->head && take_runner(e))
            run_locked(e, pop(e));
        else if (e->stop && !e->head)
            break;
        else
            pthread_cond_wait(&e->posted, &e->lock);
    }
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

/* With the lock held. */
static void start_thread(ddl_engine_t *e)
{
    if (e->thread_on || !e->threaded)
        return;
    /* Signals stay with the application's threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&e->thread, NULL, progress_main, e);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) { /* the requests run in ddl_test / ddl_wait instead */
        e->threaded = 0;
        DDL_LOG(DDL_LOG_WARN, DDL_SUBSYS_COLL, "cannot start the progress thread (%s): requests progress in ddl_test "
                "and ddl_wait", strerror(rc));
        return;
    }
    e->thread_on = 1;
}

/* One step of a wait, with the lock held: when no thread runs a request, the
 * waiting caller runs the next queued one itself (in posting order, so up to
 * its own), progress thread or not: it would only sleep meanwhile, and a
 * request posted just before the wait starts without waking another thread
 * (on a busy host, a scheduling delay).  While another thread runs one it
 * sleeps until that run ends.  Every wait inside a call has DDL_TIMEOUT, so
 * the runner always comes back (a blocking system MPI collective, which has
 * none, ends the job after it instead: core/mpi_watch.h). */
static void wait_step(ddl_engine_t *e)
{
    if (e->head && take_runner(e))
        run_locked(e, pop(e));
    else
        pthread_cond_wait(&e->completed, &e->lock);
}

static void wait_locked(ddl_engine_t *e, struct ddl_request *r)
{
    while (atomic_load(&r->state) != DDL_REQ_DONE)
        wait_step(e);
}

static ddl_status_t finish(struct ddl_request *r)
{
    if (r->status != DDL_OK)
        ddl_log_keep_error(r->error);
    return r->status;
}

/* A program that initialised MPI below MPI_THREAD_MULTIPLE gets no progress
 * thread, and its requests run only inside ddl_test and ddl_wait: nothing
 * moves while it computes.  Said once, by rank 0, at its first request
 * (ddl-bench ran so, unnoticed, until its header said the level). */
static void tell_unthreaded(ddl_engine_t *e, const ddl_comm_t *c)
{
    if (e->threaded || c->info.rank != 0 || atomic_exchange(&e->told_unthreaded, 1))
        return;
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    DDL_LOG(DDL_LOG_WARN, DDL_SUBSYS_COLL, "ddl_iallreduce: MPI runs at thread level %s, below MPI_THREAD_MULTIPLE, so "
            "the communicator has no progress thread and requests move only inside ddl_test and ddl_wait; for requests "
            "that progress while the program computes, initialise MPI with ddl_init_mpi (or MPI_Init_thread with "
            "MPI_THREAD_MULTIPLE)", level == MPI_THREAD_SERIALIZED ? "serialized" : level == MPI_THREAD_FUNNELED
                                    ? "funneled" : "single");
}

static ddl_status_t post(const ddl_call_t *call, ddl_comm_t *c, ddl_request_t **out)
{
    struct ddl_request *r = calloc(1, sizeof(*r));
    if (!r)
        return ddl_error(DDL_ERR_NO_MEMORY, "out of memory for a request");
    r->call = *call;
    r->comm = c;
    r->call.posted_at = ddl_now();
    ddl_engine_t *e = c->engine;
    pthread_mutex_lock(&e->lock);
    r->ticket = ++e->posted_ticket;
    if (e->tail)
        e->tail->next = r;
    else
        e->head = r;
    e->tail = r;
    atomic_fetch_add(&e->queued, 1);
    start_thread(e);
    pthread_cond_signal(&e->posted);
    pthread_mutex_unlock(&e->lock);
    *out = r;
    return DDL_OK;
}

/* A collective's arguments, as its public function got them. */
typedef struct {
    int coll;
    const void *sendbuf;
    void *recvbuf;
    int64_t count;
    ddl_dtype_t dtype;
    ddl_redop_t op;
    ddl_memory_t mem;
    void *stream;
} call_args_t;

/* A nonblocking collective.  A refused call (ddl_call_post_check) goes into
 * the queue like any other, so that it takes its number in order, and nobody
 * waits for it: its request is freed at once, and the refusal returned now. */
static ddl_status_t post_nonblocking(const call_args_t *a, ddl_comm_t *c, ddl_request_t **req)
{
    if (req)
        *req = NULL;
    ddl_call_t call;
    ddl_status_t st = ddl_call_post_check(a->coll, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op, a->mem,
                                          a->stream, c, &call);
    if (st != DDL_OK)
        return st;
    if (!req && !call.refusal)
        ddl_call_refuse(&call, ddl_error(DDL_ERR_INVALID_ARG, "ddl_i%s: req is NULL", ddl_coll_names[a->coll]));
    if (!call.refusal && call.mem == DDL_MEM_DEVICE && (st = ddl_gpu_record(a->stream, &call.ready)) != DDL_OK)
        ddl_call_refuse(&call, st);
    if (!call.refusal)
        tell_unthreaded(c->engine, c);
    ddl_status_t refused = call.refusal ? call.own_error : DDL_OK;
    ddl_request_t *r;
    if ((st = post(&call, c, &r)) != DDL_OK) {
        ddl_call_free(&call);
        return st;
    }
    if (refused == DDL_OK) {
        *req = r;
        return DDL_OK;
    }
    ddl_request_free(r);
    return refused; /* its message is this thread's last error still */
}

/* A blocking collective: run on the caller's thread when nothing is queued
 * ahead of it, else queued behind the requests and waited for. */
static ddl_status_t run_blocking(const call_args_t *a, ddl_comm_t *c)
{
    ddl_call_t call;
    ddl_status_t st = ddl_call_post_check(a->coll, a->sendbuf, a->recvbuf, a->count, a->dtype, a->op, a->mem,
                                          a->stream, c, &call);
    if (st != DDL_OK)
        return st;
    ddl_engine_t *e = c->engine;
    if (claim_runner(e)) { /* nothing ahead of it: run here, no hand-off */
        st = ddl_call_run(&call, c);
        give_back_runner(e);
        return st;
    }
    if (!call.refusal && call.mem == DDL_MEM_DEVICE && (st = ddl_gpu_record(a->stream, &call.ready)) != DDL_OK)
        ddl_call_refuse(&call, st);
    ddl_request_t *r;
    if ((st = post(&call, c, &r)) != DDL_OK) {
        ddl_call_free(&call);
        return st;
    }
    st = ddl_wait(r);
    ddl_request_free(r);
    return st;
}

ddl_status_t ddl_iallreduce_stream(const void *sendbuf, void *recvbuf, int64_t count, ddl_dtype_t dtype,
                                   ddl_redop_t op, ddl_memory_t mem, void *stream, ddl_comm_t *c, ddl_request_t **req)
{
    call_args_t a = {DDL_COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op, mem, stream};
    return post_nonblocking(&a, c, req);
}

ddl_status_t ddl_iallreduce(const void *sendbuf, void *recvbuf, int64_t count, ddl_dtype_t dtype, ddl_redop_t op,
                            ddl_comm_t *c, ddl_request_t **req)
{
    return ddl_iallreduce_stream(sendbuf, recvbuf, count, dtype, op, DDL_MEM_AUTO, NULL, c, req);
}

ddl_status_t ddl_allreduce_stream(const void *sendbuf, void *recvbuf, int64_t count, ddl_dtype_t dtype,
                                  ddl_redop_t op, ddl_memory_t mem, void *stream, ddl_comm_t *c)
{
    call_args_t a = {DDL_COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op, mem, stream};
    return run_blocking(&a, c);
}

ddl_status_t ddl_allreduce(const void *sendbuf, void *recvbuf, int64_t count, ddl_dtype_t dtype, ddl_redop_t op,
                           ddl_comm_t *c)
{
    return ddl_allreduce_stream(sendbuf, recvbuf, count, dtype, op, DDL_MEM_AUTO, NULL, c);
}

ddl_status_t ddl_reduce_scatter_stream(const void *sendbuf, void *recvbuf, int64_t recvcount, ddl_dtype_t dtype,
                                       ddl_redop_t op, ddl_memory_t mem, void *stream, ddl_comm_t *c)
{
    call_args_t a = {DDL_COLL_REDUCE_SCATTER, sendbuf, recvbuf, recvcount, dtype, op, mem, stream};
    return run_blocking(&a, c);
}

ddl_status_t ddl_reduce_scatter(const void *sendbuf, void *recvbuf, int64_t recvcount, ddl_dtype_t dtype,
                                ddl_redop_t op, ddl_comm_t *c)
{
    return ddl_reduce_scatter_stream(sendbuf, recvbuf, recvcount, dtype, op, DDL_MEM_AUTO, NULL, c);
}

ddl_status_t ddl_ireduce_scatter_stream(const void *sendbuf, void *recvbuf, int64_t recvcount, ddl_dtype_t dtype,
                                        ddl_redop_t op, ddl_memory_t mem, void *stream, ddl_comm_t *c,
                                        ddl_request_t **req)
{
    call_args_t a = {DDL_COLL_REDUCE_SCATTER, sendbuf, recvbuf, recvcount, dtype, op, mem, stream};
    return post_nonblocking(&a, c, req);
}

ddl_status_t ddl_ireduce_scatter(const void *sendbuf, void *recvbuf, int64_t recvcount, ddl_dtype_t dtype,
                                 ddl_redop_t op, ddl_comm_t *c, ddl_request_t **req)
{
    return ddl_ireduce_scatter_stream(sendbuf, recvbuf, recvcount, dtype, op, DDL_MEM_AUTO, NULL, c, req);
}

/* An allgather reduces nothing: its calls carry SUM, which every type has. */
ddl_status_t ddl_allgather_stream(const void *sendbuf, void *recvbuf, int64_t sendcount, ddl_dtype_t dtype,
                                  ddl_memory_t mem, void *stream, ddl_comm_t *c)
{
    call_args_t a = {DDL_COLL_ALLGATHER, sendbuf, recvbuf, sendcount, dtype, DDL_REDOP_SUM, mem, stream};
    return run_blocking(&a, c);
}

ddl_status_t ddl_allgather(const void *sendbuf, void *recvbuf, int64_t sendcount, ddl_dtype_t dtype, ddl_comm_t *c)
{
    return ddl_allgather_stream(sendbuf, recvbuf, sendcount, dtype, DDL_MEM_AUTO, NULL, c);
}

ddl_status_t ddl_iallgather_stream(const void *sendbuf, void *recvbuf, int64_t sendcount, ddl_dtype_t dtype,
                                   ddl_memory_t mem, void *stream, ddl_comm_t *c, ddl_request_t **req)
{
    call_args_t a = {DDL_COLL_ALLGATHER, sendbuf, recvbuf, sendcount, dtype, DDL_REDOP_SUM, mem, stream};
    return post_nonblocking(&a, c, req);
}

ddl_status_t ddl_iallgather(const void *sendbuf, void *recvbuf, int64_t sendcount, ddl_dtype_t dtype, ddl_comm_t *c,
                            ddl_request_t **req)
{
    return ddl_iallgather_stream(sendbuf, recvbuf, sendcount, dtype, DDL_MEM_AUTO, NULL, c, req);
}

ddl_status_t ddl_test(ddl_request_t *r, int *done)
{
    if (!r || !done)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_test: %s is NULL", r ? "done" : "req");
    ddl_engine_t *e = r->comm->engine;
    pthread_mutex_lock(&e->lock);
    if (!e->threaded) /* nothing else moves it */
        wait_locked(e, r);
    *done = atomic_load(&r->state) == DDL_REQ_DONE;
    pthread_mutex_unlock(&e->lock);
    return *done ? finish(r) : DDL_OK;
}

ddl_status_t ddl_wait(ddl_request_t *r)
{
    if (!r)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_wait: req is NULL");
    ddl_engine_t *e = r->comm->engine;
    pthread_mutex_lock(&e->lock);
    wait_locked(e, r);
    pthread_mutex_unlock(&e->lock);
    return finish(r);
}

/* The stream waits on the device for the engine's completed ticket to reach
 * the request's: CUDA lets no host function wait for device work queued after
 * it (the request's own kernels, on any stream), so none is used. */
ddl_status_t ddl_wait_stream(ddl_request_t *r, void *stream)
{
    if (!r)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_wait_stream: req is NULL");
    ddl_engine_t *e = r->comm->engine;
    /* Without a progress thread the request moves only inside ddl_test and
     * ddl_wait: a stream waiting for it could wait for this very thread. */
    if (!e->threaded)
        return ddl_error(DDL_ERR_NOT_SUPPORTED, "ddl_wait_stream needs the progress thread, which needs MPI "
                         "initialised with MPI_THREAD_MULTIPLE; use ddl_wait");
    pthread_mutex_lock(&e->lock);
    ddl_status_t st = e->done_word ? DDL_OK : ddl_gpu_host_word(&e->done_word, e->done_ticket);
    int done = atomic_load(&r->state) == DDL_REQ_DONE;
    pthread_mutex_unlock(&e->lock);
    if (st != DDL_OK || done)
        return st;
    st = ddl_gpu_stream_wait_word(stream, e->done_word, r->ticket);
    if (st != DDL_ERR_NOT_SUPPORTED)
        return st;
    /* No stream memory operations: the caller waits instead (the progress
     * thread runs the request), so the stream has nothing left to wait for. */
    static atomic_int told;
    if (!atomic_exchange(&told, 1))
        DDL_INFO(DDL_SUBSYS_COLL, "ddl_wait_stream waits on the calling thread: %s", ddl_last_error());
    pthread_mutex_lock(&e->lock);
    wait_locked(e, r);
    pthread_mutex_unlock(&e->lock);
    return DDL_OK;
}

ddl_status_t ddl_request_free(ddl_request_t *r)
{
    if (!r)
        return DDL_OK;
    /* A destroyed communicator keeps its struct (and so the lock): see comm.c. */
    ddl_engine_t *e = r->comm->engine;
    pthread_mutex_lock(&e->lock);
    int done = atomic_load(&r->state) == DDL_REQ_DONE;
    if (!done)
        r->freed = 1;
    pthread_mutex_unlock(&e->lock);
    if (done)
        free(r);
    return DDL_OK;
}

void ddl_engine_drain(ddl_engine_t *e)
{
    atomic_store(&e->draining, 1); /* before its look at busy: see give_back_runner */
    pthread_mutex_lock(&e->lock);
    while (e->head || atomic_load(&e->busy)) /* queued, or running */
        wait_step(e);
    e->stop = 1;
    pthread_cond_broadcast(&e->posted);
    int joined = e->thread_on;
    e->thread_on = 0;
    pthread_mutex_unlock(&e->lock);
    if (joined)
        pthread_join(e->thread, NULL);
}
