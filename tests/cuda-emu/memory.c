/* SPDX-License-Identifier: Apache-2.0 */
/* Emulated devices and their memory.
 *
 * Device memory is not host memory: device addresses lie in one PROT_NONE
 * reservation (a range per physical device), so a host load or store through a
 * device pointer faults as it does on a GPU.  Each allocation's bytes are a
 * memfd that the emulator maps a second time, where its copies and kernels
 * reach them (emu_view).  Freed address ranges are reused first-fit, as a
 * caching allocator reuses them, so a stale pointer or IPC mapping meets other
 * data, not an error.
 *
 * CUDA IPC: a handle names the exporter's pid, the memfd's descriptor and its
 * inode; another process opens /proc/PID/fd/FD and checks the inode, so a
 * freed allocation (or a dead exporter) cannot be opened, and mapping one's
 * own handle fails as in CUDA. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu.h"

#define DEVICE_SPAN (1ull << 36) /* address range of one device: 64 GiB */
#define ALLOC_ALIGN 512ull        /* cudaMalloc guarantees 256 */
#define IPC_MAGIC 0x44444c45u      /* "DDLE" */

typedef struct alloc {
    uintptr_t dev;      /* device address */
    size_t size, span;  /* asked for; reserved in the device range */
    char *host;         /* the emulator's mapping of the bytes */
    int fd;             /* the memfd (own allocations; -1 for IPC mappings) */
    int phys;           /* physical device */
    int ipc_refs;       /* > 0: mapped from another process, opened this many times */
    unsigned long long id, ino;
    pid_t from;         /* IPC: the exporter */
    struct alloc *next; /* sorted by dev */
} alloc_t;

typedef struct {
    uint32_t magic;
    int32_t pid, fd, phys;
    uint64_t ino, size, id;
} ipc_handle_t;
_Static_assert(sizeof(ipc_handle_t) <= sizeof(cudaIpcMemHandle_t), "the IPC handle fits CUDA's");

typedef struct pinned {
    uintptr_t base;
    size_t size;
    int owned; /* cudaMallocHost: freed with cudaFreeHost */
    struct pinned *next;
} pinned_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int nphys, nvisible, visible[EMU_MAX_DEVICES];
static unsigned long long device_bytes, used[EMU_MAX_DEVICES], next_id = 1;
static uintptr_t reserved;
static alloc_t *allocs;
static pinned_t *pinned;
static __thread int current_device;

static void init(void)
{
    nphys = (int)emu_env_size("DDL_EMU_GPUS", 1);
    if (nphys > EMU_MAX_DEVICES)
        nphys = EMU_MAX_DEVICES;
    device_bytes = emu_env_size("DDL_EMU_DEVICE_MEMORY", 16ull << 30);
    if (device_bytes > DEVICE_SPAN / 2)
        device_bytes = DEVICE_SPAN / 2; /* the other half takes IPC mappings */
    /* CUDA_VISIBLE_DEVICES: indices, up to the first that is not a device. */
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    if (!v) {
        for (int i = 0; i < nphys; i++)
            visible[nvisible++] = i;
    } else {
        while (*v && nvisible < EMU_MAX_DEVICES) {
            char *end;
            long d = strtol(v, &end, 10);
            if (end == v || d < 0 || d >= nphys)
                break;
            for (int i = 0; i < nvisible; i++)
                if (visible[i] == d)
                    goto done; /* CUDA stops at a repeated index too */
            visible[nvisible++] = (int)d;
            v = *end == ',' ? end + 1 : end;
            if (end[0] != ',')
                break;
        }
    }
done:
    if (nphys > 0) {
        void *p = mmap(NULL, (size_t)nphys * DEVICE_SPAN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            fprintf(stderr, "cuda-emu: cannot reserve the device address range: %s\n", strerror(errno));
            nvisible = 0;
        } else {
            reserved = (uintptr_t)p;
        }
    }
}

int emu_device_count(void)
{
    pthread_once(&once, init);
    return nvisible;
}

int emu_physical(int ordinal)
{
    pthread_once(&once, init);
    return ordinal >= 0 && ordinal < nvisible ? visible[ordinal] : -1;
}

int emu_ordinal(int phys)
{
    pthread_once(&once, init);
    for (int i = 0; i < nvisible; i++)
        if (visible[i] == phys)
            return i;
    return -1;
}

int emu_current(void)
{
    return current_device;
}

const char *emu_pci_bus_id(int phys)
{
    /* Bus numbers as on an 8-GPU HGX board. */
    static const char *const ids[EMU_MAX_DEVICES] = {
        "0000:19:00.0", "0000:3B:00.0", "0000:4C:00.0", "0000:5D:00.0", "0000:9B:00.0", "0000:BB:00.0",
        "0000:CB:00.0", "0000:DB:00.0", "0001:19:00.0", "0001:3B:00.0", "0001:4C:00.0", "0001:5D:00.0",
        "0001:9B:00.0", "0001:BB:00.0", "0001:CB:00.0", "0001:DB:00.0"};
    return phys >= 0 && phys < EMU_MAX_DEVICES ? ids[phys] : "";
}

int emu_is_device_address(const void *p)
{
    pthread_once(&once, init);
    uintptr_t a = (uintptr_t)p;
    return reserved && a >= reserved && a < reserved + (uintptr_t)nphys * DEVICE_SPAN;
}

/* The live allocation holding p (lock held), or NULL. */
static alloc_t *find(uintptr_t p)
{
    for (alloc_t *a = allocs; a; a = a->next)
        if (p >= a->dev && p < a->dev + (a->size ? a->size : 1))
            return a;
    return NULL;
}

void *emu_view(const void *p, size_t n)
{
    if (!emu_is_device_address(p))
        return NULL;
    pthread_mutex_lock(&lock);
    alloc_t *a = find((uintptr_t)p);
    void *v = a && (uintptr_t)p + n <= a->dev + a->size ? a->host + ((uintptr_t)p - a->dev) : NULL;
    pthread_mutex_unlock(&lock);
    return v;
}

int emu_device_of(const void *p)
{
    if (!emu_is_device_address(p))
        return -1;
    pthread_mutex_lock(&lock);
    alloc_t *a = find((uintptr_t)p);
    int phys = a ? a->phys : -1;
    pthread_mutex_unlock(&lock);
    return phys;
}

/* First fit in [lo, hi) of the device range: the address for span bytes (lock
 * held), or 0.  The list stays sorted. */
static uintptr_t place(uintptr_t lo, uintptr_t hi, size_t span, alloc_t ***link)
{
    uintptr_t at = lo;
    alloc_t **l = &allocs;
    for (; *l && (*l)->dev < hi; l = &(*l)->next) {
        if ((*l)->dev + (*l)->span <= lo)
            continue;
        if ((*l)->dev >= at + span)
            break;
        at = (*l)->dev + (*l)->span;
    }
    *link = l;
    return at + span <= hi ? at : 0;
}

static alloc_t *insert(int phys, int ipc, size_t size)
{
    size_t span = (size + ALLOC_ALIGN - 1) / ALLOC_ALIGN * ALLOC_ALIGN;
    uintptr_t lo = reserved + (uintptr_t)phys * DEVICE_SPAN + (ipc ? DEVICE_SPAN / 2 : 0);
    alloc_t **link;
    uintptr_t at = place(lo + ALLOC_ALIGN /* never address 0 of a range */, lo + DEVICE_SPAN / 2, span, &link);
    alloc_t *a = at ? calloc(1, sizeof(*a)) : NULL;
    if (!a)
        return NULL;
    *a = (alloc_t){.dev = at, .size = size, .span = span, .fd = -1, .phys = phys, .next = *link};
    *link = a;
    return a;
}

static void unlink_alloc(alloc_t *a)
{
    for (alloc_t **l = &allocs; *l; l = &(*l)->next)
        if (*l == a) {
            *l = a->next;
            break;
        }
    if (a->host)
        munmap(a->host, a->size ? a->size : 1);
    if (a->fd >= 0)
        close(a->fd);
    free(a);
}

cudaError_t cudaSetDevice(int device)
{
    if (emu_physical(device) < 0)
        return emu_return(cudaErrorInvalidDevice);
    current_device = device;
    return emu_return(cudaSuccess);
}

cudaError_t cudaGetDevice(int *device)
{
    if (!device)
        return emu_return(cudaErrorInvalidValue);
    *device = current_device;
    return emu_return(emu_device_count() ? cudaSuccess : cudaErrorNoDevice);
}

cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count)
        return emu_return(cudaErrorInvalidValue);
    *count = emu_device_count();
    return emu_return(*count ? cudaSuccess : cudaErrorNoDevice);
}

cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
    int phys = emu_physical(device);
    if (phys < 0)
        return emu_return(cudaErrorInvalidDevice);
    if (!pciBusId || len < 1)
        return emu_return(cudaErrorInvalidValue);
    snprintf(pciBusId, (size_t)len, "%s", emu_pci_bus_id(phys));
    return emu_return(cudaSuccess);
}

cudaError_t cudaDeviceGetByPCIBusId(int *device, const char *pciBusId)
{
    unsigned dom = 0, bus = 0, dev = 0, fn = 0;
    if (!device || !pciBusId || sscanf(pciBusId, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
        return emu_return(cudaErrorInvalidValue);
    for (int i = 0; i < emu_device_count(); i++) {
        unsigned d2, b2, v2, f2;
        sscanf(emu_pci_bus_id(visible[i]), "%x:%x:%x.%x", &d2, &b2, &v2, &f2);
        if (d2 == dom && b2 == bus && v2 == dev && f2 == fn) {
            *device = i;
            return emu_return(cudaSuccess);
        }
    }
    return emu_return(cudaErrorInvalidDevice);
}

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    if (!devPtr)
        return emu_return(cudaErrorInvalidValue);
    *devPtr = NULL;
    if (emu_sticky())
        return emu_return(emu_sticky());
    int phys = emu_physical(current_device);
    if (phys < 0)
        return emu_return(cudaErrorNoDevice);
    if (size == 0)
        return emu_return(cudaSuccess); /* as CUDA: a NULL pointer */
    int fd = memfd_create("ddl-cuda-emu", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        if (fd >= 0)
            close(fd);
        return emu_return(cudaErrorMemoryAllocation);
    }
    void *host = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    struct stat stbuf;
    pthread_mutex_lock(&lock);
    alloc_t *a = NULL;
    if (host != MAP_FAILED && fstat(fd, &stbuf) == 0 && used[phys] + size <= device_bytes)
        a = insert(phys, 0, size);
    if (!a) {
        pthread_mutex_unlock(&lock);
        if (host != MAP_FAILED)
            munmap(host, size);
        close(fd);
        return emu_return(cudaErrorMemoryAllocation);
    }
    a->host = host;
    a->fd = fd;
    a->id = next_id++;
    a->ino = (unsigned long long)stbuf.st_ino;
    used[phys] += size;
    *devPtr = (void *)a->dev;
    pthread_mutex_unlock(&lock);
    return emu_return(cudaSuccess);
}

/* The allocation that starts at p and is this process's own (or, ipc, an IPC
 * mapping); NULL when there is none. */
static alloc_t *take(void *p, int ipc)
{
    pthread_mutex_lock(&lock);
    alloc_t *a = find((uintptr_t)p);
    if (!a || a->dev != (uintptr_t)p || (a->ipc_refs > 0) != ipc) {
        pthread_mutex_unlock(&lock);
        return NULL;
    }
    pthread_mutex_unlock(&lock);
    return a;
}

cudaError_t cudaFree(void *devPtr)
{
    if (!devPtr)
        return emu_return(cudaSuccess);
    alloc_t *a = take(devPtr, 0);
    if (!a)
        return emu_return(cudaErrorInvalidValue);
    emu_device_drain(a->phys); /* cudaFree waits for the device, as in CUDA */
    pthread_mutex_lock(&lock);
    used[a->phys] -= a->size;
    unlink_alloc(a);
    pthread_mutex_unlock(&lock);
    return emu_return(emu_sticky());
}

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr)
{
    if (!handle)
        return emu_return(cudaErrorInvalidValue);
    pthread_mutex_lock(&lock);
    alloc_t *a = emu_is_device_address(devPtr) ? find((uintptr_t)devPtr) : NULL;
    /* Only the base of one's own allocation, as cudaMalloc returned it. */
    if (!a || a->dev != (uintptr_t)devPtr || a->fd < 0) {
        pthread_mutex_unlock(&lock);
        return emu_return(cudaErrorInvalidValue);
    }
    ipc_handle_t h = {IPC_MAGIC, (int32_t)getpid(), a->fd, a->phys, a->ino, a->size, a->id};
    pthread_mutex_unlock(&lock);
    memset(handle, 0, sizeof(*handle));
    memcpy(handle, &h, sizeof(h));
    return emu_return(cudaSuccess);
}

cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags)
{
    (void)flags;
    ipc_handle_t h;
    memcpy(&h, &handle, sizeof(h));
    if (!devPtr || h.magic != IPC_MAGIC)
        return emu_return(cudaErrorInvalidValue);
    if (h.pid == getpid())
        return emu_return(cudaErrorDeviceUninitialized); /* CUDA: not in the exporting process */
    if (emu_ordinal(h.phys) < 0)
        return emu_return(cudaErrorInvalidDevice); /* the exporter's GPU is not visible here */
    pthread_mutex_lock(&lock);
    for (alloc_t *a = allocs; a; a = a->next)
        if (a->ipc_refs > 0 && a->from == h.pid && a->id == h.id && a->ino == h.ino) {
            a->ipc_refs++; /* opened again: the same pointer, counted */
            *devPtr = (void *)a->dev;
            pthread_mutex_unlock(&lock);
            return emu_return(cudaSuccess);
        }
    pthread_mutex_unlock(&lock);
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)h.pid, (int)h.fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || (unsigned long long)st.st_ino != h.ino) {
        if (fd >= 0)
            close(fd);
        return emu_return(cudaErrorMapBufferObjectFailed); /* freed, or its process is gone */
    }
    void *host = mmap(NULL, h.size ? h.size : 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (host == MAP_FAILED)
        return emu_return(cudaErrorMapBufferObjectFailed);
    pthread_mutex_lock(&lock);
    alloc_t *a = insert(h.phys, 1, h.size);
    if (!a) {
        pthread_mutex_unlock(&lock);
        munmap(host, h.size ? h.size : 1);
        return emu_return(cudaErrorMemoryAllocation);
    }
    a->host = host;
    a->id = h.id;
    a->ino = h.ino;
    a->from = h.pid;
    a->ipc_refs = 1;
    *devPtr = (void *)a->dev;
    pthread_mutex_unlock(&lock);
    return emu_return(cudaSuccess);
}

cudaError_t cudaIpcCloseMemHandle(void *devPtr)
{
    alloc_t *a = take(devPtr, 1);
    if (!a)
        return emu_return(cudaErrorInvalidValue);
    emu_device_drain(a->phys);
    pthread_mutex_lock(&lock);
    if (--a->ipc_refs == 0)
        unlink_alloc(a); /* gone: the address may be handed out again */
    pthread_mutex_unlock(&lock);
    return emu_return(cudaSuccess);
}

/* ---- pinned host memory ---------------------------------------------------------- */

int emu_is_pinned(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    pthread_mutex_lock(&lock);
    int found = 0;
    for (pinned_t *r = pinned; r && !found; r = r->next)
        found = a >= r->base && a < r->base + r->size;
    pthread_mutex_unlock(&lock);
    return found;
}

static cudaError_t pin(void *p, size_t size, int owned)
{
    if (!p || !size || emu_is_device_address(p))
        return cudaErrorInvalidValue;
    uintptr_t a = (uintptr_t)p;
    pthread_mutex_lock(&lock);
    for (pinned_t *r = pinned; r; r = r->next)
        if (a < r->base + r->size && r->base < a + size) {
            pthread_mutex_unlock(&lock);
            return cudaErrorHostMemoryAlreadyRegistered;
        }
    pinned_t *r = malloc(sizeof(*r));
    if (r) {
        *r = (pinned_t){a, size, owned, pinned};
        pinned = r;
    }
    pthread_mutex_unlock(&lock);
    return r ? cudaSuccess : cudaErrorMemoryAllocation;
}

static cudaError_t unpin(void *p, int owned)
{
    pthread_mutex_lock(&lock);
    for (pinned_t **l = &pinned; *l; l = &(*l)->next)
        if ((*l)->base == (uintptr_t)p && (*l)->owned == owned) {
            pinned_t *r = *l;
            *l = r->next;
            pthread_mutex_unlock(&lock);
            free(r);
            return cudaSuccess;
        }
    pthread_mutex_unlock(&lock);
    return owned ? cudaErrorInvalidValue : cudaErrorHostMemoryNotRegistered;
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    (void)flags;
    return emu_return(pin(ptr, size, 0));
}

cudaError_t cudaHostUnregister(void *ptr)
{
    return emu_return(unpin(ptr, 0));
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    if (!ptr)
        return emu_return(cudaErrorInvalidValue);
    *ptr = NULL;
    if (!size)
        return emu_return(cudaSuccess);
    void *p = aligned_alloc(4096, (size + 4095) / 4096 * 4096);
    if (!p)
        return emu_return(cudaErrorMemoryAllocation);
    cudaError_t rc = pin(p, size, 1);
    if (rc != cudaSuccess) {
        free(p);
        return emu_return(rc);
    }
    *ptr = p;
    return emu_return(cudaSuccess);
}

/* Every pinned allocation is mapped and portable here, as with unified addressing. */
cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags)
{
    (void)flags;
    return cudaMallocHost(ptr, size);
}

/* Unified addressing: the device reads pinned host memory at its host address. */
cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
    if (!pDevice || flags || !emu_is_pinned(pHost))
        return emu_return(cudaErrorInvalidValue);
    *pDevice = pHost;
    return emu_return(cudaSuccess);
}

cudaError_t cudaFreeHost(void *ptr)
{
    if (!ptr)
        return emu_return(cudaSuccess);
    cudaError_t rc = unpin(ptr, 1);
    if (rc == cudaSuccess)
        free(ptr);
    return emu_return(rc);
}

/* ---- pointer attributes -------------------------------------------------------------- */

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attr, const void *ptr)
{
    if (!attr)
        return emu_return(cudaErrorInvalidValue);
    memset(attr, 0, sizeof(*attr));
    attr->device = -1;
    int phys = emu_device_of(ptr);
    if (phys >= 0) {
        attr->type = cudaMemoryTypeDevice;
        attr->device = emu_ordinal(phys);
        attr->devicePointer = (void *)ptr;
    } else if (emu_is_pinned(ptr)) {
        attr->type = cudaMemoryTypeHost;
        attr->device = current_device;
        attr->devicePointer = attr->hostPointer = (void *)ptr;
    } else {
        attr->type = cudaMemoryTypeUnregistered;
        attr->hostPointer = (void *)ptr;
    }
    return emu_return(cudaSuccess);
}

/* The driver's cuPointerGetAttribute, handed out by cudaGetDriverEntryPointByVersion. */
static CUresult pointer_attribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    alloc_t *a = emu_is_device_address((void *)ptr) ? find((uintptr_t)ptr) : NULL;
    alloc_t copy = a ? *a : (alloc_t){0};
    pthread_mutex_unlock(&lock);
    if (!a) {
        if (!emu_is_pinned((void *)ptr))
            return CUDA_ERROR_INVALID_VALUE; /* memory the driver never saw */
        switch (attribute) {
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned *)data = CU_MEMORYTYPE_HOST; return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(unsigned *)data = 0; return CUDA_SUCCESS;
        default: return CUDA_ERROR_INVALID_VALUE;
        }
    }
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned *)data = CU_MEMORYTYPE_DEVICE; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(unsigned *)data = 0; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *)data = copy.dev; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data = copy.size; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: *(unsigned long long *)data = copy.id; return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = emu_ordinal(copy.phys); return CUDA_SUCCESS;
    default: return CUDA_ERROR_NOT_SUPPORTED;
    }
}

/* The same function by the driver's own name, as libcuda.so.1 exports it: a
 * libddl without its CUDA module still tells device memory apart with it
 * (runtime/gpu/gpu_load.c). */
CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    return pointer_attribute(data, attribute, ptr);
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                             unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult *driverStatus)
{
    (void)cudaVersion, (void)flags;
    if (!symbol || !funcPtr)
        return emu_return(cudaErrorInvalidValue);
    void *fn = strcmp(symbol, "cuPointerGetAttribute") == 0 ? (void *)pointer_attribute
               : strcmp(symbol, "cuStreamWaitValue32") == 0 ? (void *)emu_stream_wait_value32
                                                             : NULL;
    int found = fn != NULL;
    *funcPtr = fn;
    if (driverStatus)
        *driverStatus = found ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
    return emu_return(cudaSuccess);
}

/* For the kernels of runtime/gpu/gpu_launch.h: the view, or a device fault. */
void *ddl_emu_kernel_view(const void *p, size_t bytes)
{
    void *v = emu_view(p, bytes);
    if (!v && bytes)
        emu_fault(cudaErrorIllegalAddress, "a kernel's access", p);
    return v;
}
