/* SPDX-License-Identifier: Apache-2.0 */
/* The GPU interface with CUDA, in the CUDA module (gpu_module.h): what a
 * pointer is, exporting an owner's buffer, copies and stream waits, and the
 * per-communicator device state. */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h> /* the driver's pointer attributes (types only: no link to libcuda) */

#include "gpu_cuda.h"
#include "log.h"

ddl_status_t ddl_cuda_error(cudaError_t rc, const char *what)
{
    (void)cudaGetLastError(); /* clear it so that later calls do not report it again */
    return ddl_error(DDL_ERR_DEVICE, "%s failed: %s (%s)", what, cudaGetErrorString(rc), cudaGetErrorName(rc));
}

ddl_status_t ddl_cuda_alloc_zeroed(int device, size_t bytes, void **p)
{
    cudaError_t rc;
    *p = NULL;
    if ((rc = cudaSetDevice(device)) != cudaSuccess)
        return ddl_cuda_error(rc, "cudaSetDevice");
    if ((rc = cudaMalloc(p, bytes ? bytes : 1)) != cudaSuccess)
        return ddl_cuda_error(rc, "cudaMalloc");
    if ((rc = cudaMemset(*p, 0, bytes)) != cudaSuccess || (rc = cudaDeviceSynchronize()) != cudaSuccess) {
        cudaFree(*p);
        *p = NULL;
        return ddl_cuda_error(rc, "cudaMemset");
    }
    return DDL_OK;
}

int ddl_cuda_devices(char *why, size_t len)
{
    int n = 0;
    cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(why, len, "CUDA sees no device: %s", cudaGetErrorString(rc));
        return 0;
    }
    if (n == 0)
        snprintf(why, len, "CUDA sees no device (CUDA_VISIBLE_DEVICES=%s)",
                 getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "unset");
    return n;
}

/* A driver function through the runtime, so that libddl does not need
 * libcuda.so at link time; NULL where the driver lacks it. */
static void *driver_function(const char *symbol)
{
    enum cudaDriverEntryPointQueryResult q;
    void *fn = NULL;
    if (cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
        fn = NULL;
    (void)cudaGetLastError();
    return fn;
}

/* The driver's cuPointerGetAttribute: it answers for host pointers without
 * creating a context, where cudaPointerGetAttributes would create one on
 * device 0 in every process that only ever passes host memory. */
typedef CUresult (*get_attr_fn)(void *data, CUpointer_attribute attr, CUdeviceptr ptr);
static get_attr_fn get_attr;
static pthread_once_t get_attr_once = PTHREAD_ONCE_INIT;

static void find_get_attr(void)
{
    get_attr = (get_attr_fn)driver_function("cuPointerGetAttribute");
}

int ddl_cuda_is_device(const void *p)
{
    if (!p)
        return 0;
    pthread_once(&get_attr_once, find_get_attr);
    if (!get_attr)
        return 0;
    unsigned int type = 0, managed = 0;
    int ok = get_attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p) == CUDA_SUCCESS;
    /* Managed memory goes the host way: asked only where the answer would be
     * device (a host pointer costs one driver call, not two). */
    if (ok && type == CU_MEMORYTYPE_DEVICE &&
        get_attr(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, (CUdeviceptr)p) == CUDA_SUCCESS && managed)
        return ddl_gpu_kind_is_device(1, DDL_CUDA_MEM_MANAGED);
    return ddl_gpu_kind_is_device(ok, type == CU_MEMORYTYPE_DEVICE ? DDL_CUDA_MEM_DEVICE : DDL_CUDA_MEM_HOST);
}

ddl_status_t ddl_cuda_export(const void *p, ddl_gpu_ref_t *ref, char *pci_bus_id, size_t len)
{
    pthread_once(&get_attr_once, find_get_attr);
    CUdeviceptr base = 0;
    size_t size = 0;
    unsigned long long id = 0;
    int ordinal = -1;
    if (!get_attr || get_attr(&base, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, (CUdeviceptr)p) != CUDA_SUCCESS ||
        get_attr(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, (CUdeviceptr)p) != CUDA_SUCCESS ||
        get_attr(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, (CUdeviceptr)p) != CUDA_SUCCESS ||
        get_attr(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)p) != CUDA_SUCCESS)
        return ddl_error(DDL_ERR_INVALID_ARG, "%p is not device memory CUDA knows (DDL_MEM_DEVICE was stated)", p);
    cudaIpcMemHandle_t h;
    cudaError_t rc = cudaIpcGetMemHandle(&h, (void *)base);
    if (rc != cudaSuccess)
        return ddl_error(DDL_ERR_INVALID_ARG, "cannot share the device buffer %p with the node's other ranks: "
                         "cudaIpcGetMemHandle: %s; allocate it with cudaMalloc (stream-ordered pools are not "
                         "shareable by default)", p, cudaGetErrorString(rc));
    memcpy(ref->handle, &h, sizeof(h));
    ref->buffer_id = id;
    ref->base = base;
    ref->size = size;
    ref->offset = (CUdeviceptr)p - base;
    if ((rc = cudaDeviceGetPCIBusId(pci_bus_id, (int)len, ordinal)) != cudaSuccess)
        return ddl_cuda_error(rc, "cudaDeviceGetPCIBusId");
    return DDL_OK;
}

/* The device a device pointer is on (its ordinal), or -1 for host memory. */
static int device_of(const void *p)
{
    int ordinal = -1; /* ddl_cuda_is_device found get_attr when it says yes */
    if (ddl_cuda_is_device(p) && get_attr(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)p) != CUDA_SUCCESS)
        ordinal = -1;
    return ordinal;
}

/* The runtime's own copies go on a non-blocking stream of the buffer's GPU,
 * never on the legacy default stream: that one waits for the application's
 * blocking streams, and one of those may wait (ddl_wait_stream) for the very
 * request that copies. */
static cudaStream_t copy_stream[DDL_MAX_GPUS];
static pthread_mutex_t copy_stream_lock = PTHREAD_MUTEX_INITIALIZER;

ddl_status_t ddl_cuda_memcpy(void *dst, const void *src, size_t bytes, double timeout)
{
    int dev = device_of(src), prev = -1;
    if (dev < 0)
        dev = device_of(dst);
    if (dev < 0 || dev >= DDL_MAX_GPUS)
        return ddl_error(DDL_ERR_INVALID_ARG, "copying a device buffer: neither %p nor %p is device memory", dst, src);
    cudaError_t rc = cudaGetDevice(&prev);
    if (rc == cudaSuccess && prev != dev)
        rc = cudaSetDevice(dev);
    pthread_mutex_lock(&copy_stream_lock);
    if (rc == cudaSuccess && !copy_stream[dev])
        rc = cudaStreamCreateWithFlags(&copy_stream[dev], cudaStreamNonBlocking);
    cudaStream_t stream = copy_stream[dev];
    pthread_mutex_unlock(&copy_stream_lock);
    if (rc == cudaSuccess)
        rc = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream);
    ddl_status_t st = rc == cudaSuccess ? ddl_cuda_wait_queued(stream, timeout) : ddl_cuda_error(rc, "copying a device buffer");
    if (prev >= 0 && prev != dev)
        (void)cudaSetDevice(prev);
    return st;
}

ddl_status_t ddl_cuda_record(void *stream, void **event)
{
    cudaEvent_t ev;
    cudaError_t rc = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    if (rc != cudaSuccess)
        return ddl_cuda_error(rc, "creating the event that orders the request after the caller's stream");
    if ((rc = cudaEventRecord(ev, (cudaStream_t)stream)) != cudaSuccess) {
        cudaEventDestroy(ev);
        return ddl_cuda_error(rc, "recording the caller's stream");
    }
    *event = ev;
    return DDL_OK;
}

void ddl_cuda_event_free(void *event)
{
    if (event)
        cudaEventDestroy((cudaEvent_t)event);
}

ddl_status_t ddl_cuda_host_word(uint32_t **word, uint32_t value)
{
    void *p = NULL;
    cudaError_t rc = cudaHostAlloc(&p, sizeof(uint32_t), cudaHostAllocMapped | cudaHostAllocPortable);
    if (rc != cudaSuccess)
        return ddl_cuda_error(rc, "ddl_wait_stream: cudaHostAlloc of the word streams wait on");
    *word = p;
    __atomic_store_n(*word, value, __ATOMIC_RELEASE);
    return DDL_OK;
}

typedef CUresult (*wait_value_fn)(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags);
static wait_value_fn wait_value;
static pthread_once_t wait_value_once = PTHREAD_ONCE_INIT;

static void find_wait_value(void)
{
    wait_value = (wait_value_fn)driver_function("cuStreamWaitValue32");
}

ddl_status_t ddl_cuda_stream_wait_word(void *stream, uint32_t *word, uint32_t value)
{
    pthread_once(&wait_value_once, find_wait_value);
    if (!wait_value)
        return ddl_error(DDL_ERR_NOT_SUPPORTED, "the driver has no cuStreamWaitValue32");
    void *dev = NULL;
    cudaError_t rc = cudaHostGetDevicePointer(&dev, word, 0);
    if (rc != cudaSuccess)
        return ddl_cuda_error(rc, "ddl_wait_stream: cudaHostGetDevicePointer");
    CUresult cr = wait_value((CUstream)stream, (CUdeviceptr)dev, value, CU_STREAM_WAIT_VALUE_GEQ);
    if (cr == CUDA_ERROR_NOT_SUPPORTED)
        return ddl_error(DDL_ERR_NOT_SUPPORTED, "cuStreamWaitValue32 is not supported on this device");
    if (cr != CUDA_SUCCESS)
        return ddl_error(DDL_ERR_DEVICE, "ddl_wait_stream: cuStreamWaitValue32 failed (CUresult %d)", (int)cr);
    return DDL_OK;
}

/* ddl_wait_until steps: 1 when done, 0 while not, a negative status on a CUDA error
 * (kept in *rc for the message). */
struct event_arg {
    cudaEvent_t ev;
    cudaError_t rc;
};

static int event_done(void *arg)
{
    struct event_arg *a = arg;
    a->rc = cudaEventQuery(a->ev);
    return a->rc == cudaSuccess ? 1 : a->rc == cudaErrorNotReady ? 0 : DDL_ERR_DEVICE;
}

/* Polled, not cudaEventSynchronize: the wait has a deadline. */
ddl_status_t ddl_cuda_wait_recorded(void *event, double timeout)
{
    struct event_arg a = {(cudaEvent_t)event, cudaSuccess};
    ddl_wait_how_t w = {"the work queued on the caller's stream", timeout, NULL, NULL, NULL};
    ddl_status_t st = ddl_wait_until(&w, event_done, &a);
    if (st == DDL_ERR_TIMED_OUT)
        return st;
    return st == DDL_OK ? DDL_OK : ddl_cuda_error(a.rc, "waiting for the stream's queued work");
}

ddl_status_t ddl_cuda_wait_queued(void *stream, double timeout)
{
    if (!stream) {
        cudaError_t rc = cudaDeviceSynchronize();
        return rc == cudaSuccess ? DDL_OK : ddl_cuda_error(rc, "waiting for the device's queued work");
    }
    void *ev;
    ddl_status_t st = ddl_cuda_record(stream, &ev);
    if (st != DDL_OK)
        return st;
    st = ddl_cuda_wait_recorded(ev, timeout);
    ddl_cuda_event_free(ev);
    return st;
}

/* ---- IPC mappings -------------------------------------------------------------- */

static ddl_status_t ipc_open(void *ctx, const ddl_gpu_ref_t *ref, void **mapped)
{
    (void)ctx;
    cudaIpcMemHandle_t h;
    memcpy(&h, ref->handle, sizeof(h));
    cudaError_t rc = cudaIpcOpenMemHandle(mapped, h, cudaIpcMemLazyEnablePeerAccess);
    if (rc == cudaSuccess)
        return DDL_OK;
    (void)cudaGetLastError();
    return ddl_fail(DDL_ERR_DEVICE, "%s; every rank of a node must see all of the node's GPUs (CUDA_VISIBLE_DEVICES) "
                    "and the GPUs must allow peer access", cudaGetErrorString(rc));
}

static void ipc_close(void *ctx, void *mapped)
{
    (void)ctx;
    cudaIpcCloseMemHandle(mapped);
}

/* ---- per-communicator state ------------------------------------------------------ */

static void free_device_side(struct ddl_gpu *g)
{
    ddl_ipc_cache_clear(&g->ipc);
    for (int i = 0; i < DDL_NSCHED; i++)
        if (g->chunk[i]) {
            cudaFree(g->chunk[i]);
            g->chunk[i] = NULL;
        }
    if (g->stream) {
        cudaStreamDestroy(g->stream);
        g->stream = NULL;
    }
    g->device = -1;
}

ddl_status_t ddl_gpu_state(ddl_comm_t *c, const char *pci_bus_id, struct ddl_gpu **out)
{
    if (!c->gpu) {
        if (!(c->gpu = calloc(1, sizeof(*c->gpu))))
            return ddl_error(DDL_ERR_NO_MEMORY, "out of memory");
        c->gpu->device = -1;
        ddl_ipc_ops_t ops = {ipc_open, ipc_close, NULL};
        ddl_ipc_cache_init(&c->gpu->ipc, &ops);
    }
    struct ddl_gpu *g = c->gpu;
    int dev;
    cudaError_t rc = cudaDeviceGetByPCIBusId(&dev, pci_bus_id);
    if (rc != cudaSuccess) {
        (void)cudaGetLastError();
        return ddl_error(DDL_ERR_DEVICE, "rank %d does not see its owner's GPU %s: %s; every rank of a node must see "
                         "the node's GPUs (CUDA_VISIBLE_DEVICES)", c->info.rank, pci_bus_id, cudaGetErrorString(rc));
    }
    if ((rc = cudaSetDevice(dev)) != cudaSuccess)
        return ddl_cuda_error(rc, "cudaSetDevice");
    if (g->device == dev) {
        *out = g;
        return DDL_OK;
    }
    if (g->device >= 0) {
        DDL_INFO(DDL_SUBSYS_COLL, "the owner's buffers moved to GPU %s: device state remade", pci_bus_id);
        ddl_nccl_free(g->nccl, 0);
        g->nccl = NULL;
        free_device_side(g);
    }
    if ((rc = cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking)) != cudaSuccess)
        return ddl_cuda_error(rc, "cudaStreamCreate");
    for (int i = 0; i < DDL_NSCHED; i++)
        if ((rc = cudaMalloc(&g->chunk[i], c->scratch_bytes)) != cudaSuccess) {
            free_device_side(g); /* the next call starts over */
            return ddl_cuda_error(rc, "cudaMalloc of the device chunk buffers (DDL_CHUNK_SIZE)");
        }
    g->device = dev; /* ready: later calls on this GPU reuse it all */
    /* Pinned staging: copies run at full PCIe speed and asynchronously. */
    if (!g->scratch_pinned) {
        g->scratch_pinned = 1;
        for (int i = 0; i < DDL_NSCHED; i++)
            if (cudaHostRegister(c->scratch[i], c->scratch_bytes, cudaHostRegisterDefault) != cudaSuccess) {
                (void)cudaGetLastError();
                g->scratch_pinned = 0;
            }
    }
    *out = g;
    return DDL_OK;
}

struct stream_arg {
    const ddl_comm_t *c;
    struct ddl_gpu *g;
    cudaError_t rc;
    ddl_status_t nccl;
    unsigned looks;
};

static int stream_done(void *arg)
{
    struct stream_arg *a = arg;
    a->rc = cudaStreamQuery(a->g->stream);
    if (a->rc == cudaSuccess)
        return 1;
    if (a->rc != cudaErrorNotReady)
        return DDL_ERR_DEVICE;
    /* NCCL's error state now and then: a failed peer leaves its kernel waiting. */
    if ((++a->looks & 255) == 0 && a->g->nccl && (a->nccl = ddl_nccl_check(a->g->nccl)) != DDL_OK)
        return a->nccl;
    return 0;
}

/* After a timeout with NCCL, which cannot say which peer it waits for: the
 * lane's other ranks. */
static void nccl_waiting_for(void *arg, char *buf, size_t len)
{
    const ddl_comm_t *c = ((const struct stream_arg *)arg)->c;
    int o = snprintf(buf, len, "this lane's other ranks (NCCL does not say which): ");
    for (int n = 0, first = 1; n < c->info.nnodes && o >= 0 && (size_t)o + 48 < len; n++) {
        int r = c->world_of_lane[n];
        if (r != c->info.rank) {
            o += snprintf(buf + o, len - (size_t)o, "%s%d on %s", first ? "" : ", ", r, c->hosts[r]);
            first = 0;
        }
    }
}

ddl_status_t ddl_gpu_wait(ddl_comm_t *c, const char *what)
{
    struct stream_arg a = {c, c->gpu, cudaSuccess, DDL_OK, 0};
    ddl_status_t st = ddl_comm_wait(c, stream_done, &a, what, c->gpu->nccl ? nccl_waiting_for : NULL);
    if (st == DDL_ERR_DEVICE && a.nccl == DDL_OK) /* NCCL's own failure keeps its message */
        return ddl_cuda_error(a.rc, what);
    return st;
}

void ddl_cuda_comm_release(ddl_comm_t *c)
{
    struct ddl_gpu *g = c->gpu;
    if (!g)
        return;
    ddl_nccl_free(g->nccl, c->broken);
    if (g->scratch_pinned)
        for (int i = 0; i < DDL_NSCHED; i++)
            cudaHostUnregister(c->scratch[i]);
    free_device_side(g);
    free(g);
    c->gpu = NULL;
}
