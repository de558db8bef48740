/* SPDX-License-Identifier: Apache-2.0 */
/* The emulated runtime's errors (a thread's last error, sticky faults), its
 * copies and memsets, and the names of its error codes. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu.h"

static __thread cudaError_t last_error;
static _Atomic int sticky;

cudaError_t emu_sticky(void)
{
    return (cudaError_t)atomic_load(&sticky);
}

cudaError_t emu_return(cudaError_t rc)
{
    cudaError_t s = emu_sticky();
    if (s != cudaSuccess)
        rc = s;
    if (rc != cudaSuccess)
        last_error = rc;
    return rc;
}

void emu_fault(cudaError_t rc, const char *what, const void *addr)
{
    int expected = cudaSuccess;
    if (atomic_compare_exchange_strong(&sticky, &expected, (int)rc))
        fprintf(stderr, "cuda-emu: %s at %p: %s (the device is unusable from now on, as after a fault on a GPU)\n",
                what, addr, cudaGetErrorString(rc));
}

unsigned long long emu_env_size(const char *name, unsigned long long fallback)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return fallback;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    switch (*end) {
    case 'k': case 'K': n <<= 10; end++; break;
    case 'm': case 'M': n <<= 20; end++; break;
    case 'g': case 'G': n <<= 30; end++; break;
    default: break;
    }
    if (end == v || *end) {
        fprintf(stderr, "cuda-emu: %s=%s is not a number (K, M, G suffixes allowed); using %llu\n", name, v, fallback);
        return fallback;
    }
    return n;
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t rc = emu_sticky() ? emu_sticky() : last_error;
    last_error = cudaSuccess;
    return rc;
}

cudaError_t cudaPeekAtLastError(void)
{
    return emu_sticky() ? emu_sticky() : last_error;
}

static const struct {
    cudaError_t rc;
    const char *name, *text;
} errors[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
    {cudaErrorMapBufferObjectFailed, "cudaErrorMapBufferObjectFailed", "mapping of buffer object failed"},
    {cudaErrorDeviceUninitialized, "cudaErrorDeviceUninitialized", "invalid device context"},
    {cudaErrorHostMemoryAlreadyRegistered, "cudaErrorHostMemoryAlreadyRegistered",
     "part or all of the requested memory range is already mapped"},
    {cudaErrorHostMemoryNotRegistered, "cudaErrorHostMemoryNotRegistered",
     "pointer does not correspond to a registered memory region"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
};

const char *cudaGetErrorString(cudaError_t error)
{
    for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
        if (errors[i].rc == error)
            return errors[i].text;
    return "unrecognized error code";
}

const char *cudaGetErrorName(cudaError_t error)
{
    for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
        if (errors[i].rc == error)
            return errors[i].name;
    return "cudaErrorUnknown";
}

cudaError_t cudaDriverGetVersion(int *v)
{
    if (!v)
        return emu_return(cudaErrorInvalidValue);
    *v = CUDART_VERSION;
    return emu_return(cudaSuccess);
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
    return cudaDriverGetVersion(v);
}

/* ---- copies and memsets ------------------------------------------------------------ */

typedef struct {
    void *dst;
    const void *src; /* NULL: a memset of value */
    size_t n;
    int value;
} move_t;

/* Device pointers are looked up when the work runs: a range freed since the
 * call is an illegal address, as it is on a GPU. */
static void run_move(void *p)
{
    move_t *m = p;
    void *dst = emu_is_device_address(m->dst) ? emu_view(m->dst, m->n) : m->dst;
    const void *src = m->src && emu_is_device_address(m->src) ? emu_view(m->src, m->n) : m->src;
    if (!dst || (m->src && !src)) {
        emu_fault(cudaErrorIllegalAddress, "a copy or memset", dst ? m->src : m->dst);
        return;
    }
    if (m->src)
        memmove(dst, src, m->n);
    else
        memset(dst, m->value, m->n);
}

/* Whether p is host memory (0), live device memory for n bytes (1), or a
 * device address outside every allocation (-1). */
static int side(const void *p, size_t n)
{
    if (!emu_is_device_address(p))
        return 0;
    return emu_view(p, n) ? 1 : -1;
}

/* The copy checked as CUDA checks it, then queued on stream; *legacy is set
 * to the stream it went to. */
static cudaError_t queue_move(void *dst, const void *src, size_t n, int value, enum cudaMemcpyKind kind,
                              cudaStream_t stream, emu_stream_t **queued, int *device_to_device)
{
    if (emu_sticky())
        return emu_sticky();
    if (!dst || (kind != (enum cudaMemcpyKind)-1 && !src))
        return cudaErrorInvalidValue;
    int d = side(dst, n), s = src ? side(src, n) : 1;
    if (d < 0 || s < 0)
        return cudaErrorInvalidValue;
    if (!src && !d)
        return cudaErrorInvalidValue; /* cudaMemset: device memory only */
    switch (kind) {
    case cudaMemcpyHostToHost: if (d || s) return cudaErrorInvalidValue; break;
    case cudaMemcpyHostToDevice: if (!d || s) return cudaErrorInvalidValue; break;
    case cudaMemcpyDeviceToHost: if (d || !s) return cudaErrorInvalidValue; break;
    case cudaMemcpyDeviceToDevice: if (!d || !s) return cudaErrorInvalidValue; break;
    case cudaMemcpyDefault: break;
    default: if (src) return cudaErrorInvalidMemcpyDirection; break;
    }
    *device_to_device = d && s;
    int phys = emu_physical(emu_current());
    if (phys < 0)
        return cudaErrorNoDevice;
    if (n == 0)
        return cudaSuccess;
    move_t *m = malloc(sizeof(*m));
    if (!m)
        return cudaErrorMemoryAllocation;
    *m = (move_t){dst, src, n, value};
    *queued = emu_stream(stream, phys);
    return emu_enqueue(*queued, run_move, m, free);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    emu_stream_t *s = NULL;
    int d2d;
    return emu_return(queue_move(dst, src, count, 0, kind, stream, &s, &d2d));
}

/* On the legacy default stream; the host waits for it except between two
 * device buffers (CUDA returns at once there). */
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    emu_stream_t *s = NULL;
    int d2d = 0;
    cudaError_t rc = queue_move(dst, src, count, 0, kind, NULL, &s, &d2d);
    if (rc == cudaSuccess && s && !d2d)
        emu_stream_drain(s);
    return emu_return(rc == cudaSuccess ? emu_sticky() : rc);
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    emu_stream_t *s = NULL;
    int d2d;
    return emu_return(queue_move(devPtr, NULL, count, value, (enum cudaMemcpyKind)-1, stream, &s, &d2d));
}

/* Asynchronous for device memory, as cudaMemset is. */
cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    return cudaMemsetAsync(devPtr, value, count, NULL);
}
