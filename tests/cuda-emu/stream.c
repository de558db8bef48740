/* SPDX-License-Identifier: Apache-2.0 */
/* Emulated streams and events.  Each stream has a worker thread that runs its
 * queued work in order: copies, memsets, kernels, host functions, waits for
 * other streams and waits on host memory (cuStreamWaitValue32).
 * DDL_EMU_DELAY=US sleeps a random 0..US microseconds before each item, so
 * that a wait the caller forgot shows up as a wrong result.
 *
 * An event is a position in one stream: recorded, it is complete once the
 * stream's worker passed that position.  The legacy default stream (NULL,
 * cudaStreamLegacy; cudaStreamPerThread is taken as it) of each device waits
 * for the work queued before on the device's blocking streams, and they wait
 * for it, as CUDA documents; streams created with cudaStreamNonBlocking do
 * neither.
 *
 * Host functions (cudaLaunchHostFunc) hold the device as CUDA allows: work
 * queued on any stream of the device after a host function was queued does
 * not start until that host function returned ("adding device work to any
 * stream does not have the effect of making the stream active until all
 * preceding host functions ... have executed"), so a host function that
 * waits for later device work waits forever, as it may on a GPU. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "emu.h"

typedef struct op {
    void (*fn)(void *); /* NULL: a wait, or a marker */
    void *arg;
    void (*free_arg)(void *);
    emu_stream_t *wait_on; /* wait until it passed wait_ticket */
    uint64_t wait_ticket;
    uint64_t stamp; /* the device's queue order, for the host functions' rule */
    int host_fn;
    struct op *next;
} op_t;

struct emu_stream {
    int phys, blocking, legacy, destroyed;
    uint64_t enqueued, completed;
    op_t *head, *tail;
    unsigned seed;
    struct emu_stream *next; /* every live stream */
};

typedef struct {
    emu_stream_t *stream; /* NULL: never recorded (complete) */
    uint64_t ticket;
} emu_event_t;

/* One lock and one condition for all streams: a completion may release a
 * wait on any stream, and the emulator is not about speed. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t progress = PTHREAD_COND_INITIALIZER;
static emu_stream_t *streams, *legacy[EMU_MAX_DEVICES];
/* Per device: the queue order of the next item queued on any of its streams. */
static uint64_t next_stamp[EMU_MAX_DEVICES];

/* Whether a host function queued on device phys before `stamp` has not
 * returned yet (lock held). */
static int host_fn_ahead(int phys, uint64_t stamp)
{
    for (emu_stream_t *t = streams; t; t = t->next)
        for (op_t *o = t->head; o && o->stamp < stamp; o = o->next)
            if (t->phys == phys && o->host_fn)
                return 1;
    return 0;
}
static unsigned long long max_delay_us;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void read_delay(void)
{
    max_delay_us = emu_env_size("DDL_EMU_DELAY", 0);
}

static void *worker(void *p)
{
    emu_stream_t *s = p;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (!s->head && !s->destroyed)
            pthread_cond_wait(&progress, &lock);
        op_t *op = s->head;
        if (!op)
            break;
        while (host_fn_ahead(s->phys, op->stamp))
            pthread_cond_wait(&progress, &lock);
        if (op->wait_on) {
            while (op->wait_on->completed < op->wait_ticket)
                pthread_cond_wait(&progress, &lock);
        } else if (op->fn) {
            pthread_mutex_unlock(&lock);
            if (max_delay_us) {
                struct timespec d = {0, (long)(rand_r(&s->seed) % (max_delay_us + 1)) * 1000};
                nanosleep(&d, NULL);
            }
            if (!emu_sticky()) /* after a fault the device runs nothing */
                op->fn(op->arg);
            if (op->free_arg)
                op->free_arg(op->arg);
            pthread_mutex_lock(&lock);
        }
        s->head = op->next;
        if (!s->head)
            s->tail = NULL;
        s->completed++;
        free(op);
        pthread_cond_broadcast(&progress);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* A new stream with its worker (lock held). */
static emu_stream_t *create(int phys, int blocking, int is_legacy)
{
    pthread_once(&once, read_delay);
    emu_stream_t *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    *s = (emu_stream_t){.phys = phys, .blocking = blocking, .legacy = is_legacy,
                        .seed = (unsigned)getpid() * 2654435761u ^ (unsigned)(uintptr_t)s};
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, worker, s);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        free(s);
        return NULL;
    }
    s->next = streams;
    streams = s;
    return s;
}

emu_stream_t *emu_stream(cudaStream_t handle, int phys)
{
    if (handle && handle != cudaStreamLegacy && handle != cudaStreamPerThread)
        return (emu_stream_t *)handle;
    if (phys < 0 || phys >= EMU_MAX_DEVICES)
        return NULL;
    pthread_mutex_lock(&lock);
    if (!legacy[phys])
        legacy[phys] = create(phys, 1, 1);
    emu_stream_t *s = legacy[phys];
    pthread_mutex_unlock(&lock);
    return s;
}

/* Append an item (lock held). */
static int append(emu_stream_t *s, void (*fn)(void *), void *arg, void (*free_arg)(void *), emu_stream_t *wait_on,
                  uint64_t ticket)
{
    op_t *op = calloc(1, sizeof(*op));
    if (!op)
        return 0;
    *op = (op_t){fn, arg, free_arg, wait_on, ticket, next_stamp[s->phys]++, 0, NULL};
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    s->enqueued++;
    return 1;
}

/* The legacy default stream's implicit synchronization (lock held). */
static int implicit_waits(emu_stream_t *s)
{
    int ok = 1;
    if (s->legacy) {
        for (emu_stream_t *t = streams; t; t = t->next)
            if (t != s && t->phys == s->phys && t->blocking && !t->legacy && t->completed < t->enqueued)
                ok &= append(s, NULL, NULL, NULL, t, t->enqueued);
    } else if (s->blocking) {
        emu_stream_t *l = legacy[s->phys];
        if (l && l->completed < l->enqueued)
            ok &= append(s, NULL, NULL, NULL, l, l->enqueued);
    }
    return ok;
}

static cudaError_t enqueue(emu_stream_t *s, void (*fn)(void *), void *arg, void (*free_arg)(void *), int host_fn)
{
    if (!s)
        return cudaErrorInvalidResourceHandle;
    pthread_mutex_lock(&lock);
    int ok = implicit_waits(s) && append(s, fn, arg, free_arg, NULL, 0);
    if (ok)
        s->tail->host_fn = host_fn;
    pthread_cond_broadcast(&progress);
    pthread_mutex_unlock(&lock);
    if (!ok && free_arg)
        free_arg(arg);
    return ok ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t emu_enqueue(emu_stream_t *s, void (*fn)(void *), void *arg, void (*free_arg)(void *))
{
    return enqueue(s, fn, arg, free_arg, 0);
}

/* Wait until s passed ticket (lock held). */
static void wait_for(emu_stream_t *s, uint64_t ticket)
{
    while (s->completed < ticket)
        pthread_cond_wait(&progress, &lock);
}

void emu_stream_drain(emu_stream_t *s)
{
    pthread_mutex_lock(&lock);
    wait_for(s, s->enqueued);
    pthread_mutex_unlock(&lock);
}

void emu_device_drain(int phys)
{
    pthread_mutex_lock(&lock);
    for (emu_stream_t *s = streams; s; s = s->next)
        if (s->phys == phys)
            wait_for(s, s->enqueued);
    pthread_mutex_unlock(&lock);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    int phys = emu_physical(emu_current());
    if (!pStream || (flags & ~(unsigned)cudaStreamNonBlocking))
        return emu_return(cudaErrorInvalidValue);
    if (phys < 0)
        return emu_return(cudaErrorNoDevice);
    pthread_mutex_lock(&lock);
    emu_stream_t *s = create(phys, !(flags & cudaStreamNonBlocking), 0);
    pthread_mutex_unlock(&lock);
    *pStream = (cudaStream_t)s;
    return emu_return(s ? cudaSuccess : cudaErrorMemoryAllocation);
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

/* As CUDA: returns at once; the worker ends once the queued work ran.  The
 * stream itself is kept, since events recorded on it may still be asked. */
cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    emu_stream_t *s = emu_stream(stream, -1);
    if (!s || s->legacy)
        return emu_return(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&lock);
    for (emu_stream_t **l = &streams; *l; l = &(*l)->next)
        if (*l == s) {
            *l = s->next;
            break;
        }
    s->destroyed = 1;
    pthread_cond_broadcast(&progress);
    pthread_mutex_unlock(&lock);
    return emu_return(cudaSuccess);
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    emu_stream_t *s = emu_stream(stream, emu_physical(emu_current()));
    if (!s)
        return emu_return(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&lock);
    int done = s->completed == s->enqueued;
    pthread_mutex_unlock(&lock);
    /* NotReady is not an error: it is not remembered as the last one. */
    return emu_sticky() ? emu_return(emu_sticky()) : done ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    emu_stream_t *s = emu_stream(stream, emu_physical(emu_current()));
    if (!s)
        return emu_return(cudaErrorInvalidResourceHandle);
    emu_stream_drain(s);
    return emu_return(cudaSuccess);
}

cudaError_t cudaDeviceSynchronize(void)
{
    int phys = emu_physical(emu_current());
    if (phys < 0)
        return emu_return(cudaErrorNoDevice);
    emu_device_drain(phys);
    return emu_return(cudaSuccess);
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    if (!fn)
        return emu_return(cudaErrorInvalidValue);
    if (emu_sticky())
        return emu_return(emu_sticky());
    return emu_return(enqueue(emu_stream(stream, emu_physical(emu_current())), fn, userData, NULL, 1));
}

struct wait_value {
    const uint32_t *addr;
    uint32_t value;
    unsigned flags;
};

/* On the stream's worker: the device polls host memory until it holds. */
static void wait_value_run(void *p)
{
    const struct wait_value *w = p;
    for (;;) {
        uint32_t now = __atomic_load_n(w->addr, __ATOMIC_ACQUIRE);
        if (w->flags == CU_STREAM_WAIT_VALUE_EQ ? now == w->value : (int32_t)(now - w->value) >= 0)
            return;
        struct timespec d = {0, 20000};
        nanosleep(&d, NULL);
    }
}

CUresult emu_stream_wait_value32(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags)
{
    if ((flags != CU_STREAM_WAIT_VALUE_GEQ && flags != CU_STREAM_WAIT_VALUE_EQ) || !emu_is_pinned((void *)addr))
        return CUDA_ERROR_INVALID_VALUE;
    struct wait_value *w = malloc(sizeof(*w));
    if (!w)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *w = (struct wait_value){(const uint32_t *)addr, value, flags};
    return emu_enqueue(emu_stream((cudaStream_t)stream, emu_physical(emu_current())), wait_value_run, w, free) ==
                   cudaSuccess
               ? CUDA_SUCCESS
               : CUDA_ERROR_INVALID_HANDLE;
}

/* Kernels from runtime/gpu/gpu_launch.h: run(ctx) on the stream, which must be
 * one of the current device's, as for a launch on a GPU. */
cudaError_t ddl_emu_launch(cudaStream_t stream, void (*run)(void *), void *ctx, void (*destroy)(void *))
{
    int phys = emu_physical(emu_current());
    emu_stream_t *s = emu_stream(stream, phys);
    cudaError_t rc = emu_sticky() ? emu_sticky() : !s || s->phys != phys ? cudaErrorInvalidResourceHandle : cudaSuccess;
    if (rc == cudaSuccess)
        return emu_return(emu_enqueue(s, run, ctx, destroy));
    destroy(ctx);
    return emu_return(rc);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    (void)flags;
    if (!event)
        return emu_return(cudaErrorInvalidValue);
    emu_event_t *e = calloc(1, sizeof(*e));
    *event = (cudaEvent_t)e;
    return emu_return(e ? cudaSuccess : cudaErrorMemoryAllocation);
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    if (!event)
        return emu_return(cudaErrorInvalidResourceHandle);
    free(event);
    return emu_return(cudaSuccess);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    emu_event_t *e = (emu_event_t *)event;
    emu_stream_t *s = emu_stream(stream, emu_physical(emu_current()));
    if (!e || !s)
        return emu_return(cudaErrorInvalidResourceHandle);
    /* A marker: on the legacy stream the record also waits for the blocking streams. */
    cudaError_t rc = emu_enqueue(s, NULL, NULL, NULL);
    pthread_mutex_lock(&lock);
    e->stream = s;
    e->ticket = s->enqueued;
    pthread_mutex_unlock(&lock);
    return emu_return(rc);
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
    emu_event_t *e = (emu_event_t *)event;
    if (!e)
        return emu_return(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&lock);
    int done = !e->stream || e->stream->completed >= e->ticket;
    pthread_mutex_unlock(&lock);
    return emu_sticky() ? emu_return(emu_sticky()) : done ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    emu_event_t *e = (emu_event_t *)event;
    if (!e)
        return emu_return(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&lock);
    if (e->stream)
        wait_for(e->stream, e->ticket);
    pthread_mutex_unlock(&lock);
    return emu_return(cudaSuccess);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    (void)flags;
    emu_event_t *e = (emu_event_t *)event;
    emu_stream_t *s = emu_stream(stream, emu_physical(emu_current()));
    if (!e || !s)
        return emu_return(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&lock);
    int ok = !e->stream || append(s, NULL, NULL, NULL, e->stream, e->ticket);
    pthread_cond_broadcast(&progress);
    pthread_mutex_unlock(&lock);
    return emu_return(ok ? cudaSuccess : cudaErrorMemoryAllocation);
}
