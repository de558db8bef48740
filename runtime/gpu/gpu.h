/* SPDX-License-Identifier: Apache-2.0 */
/* The GPU side of the runtime, behind one interface that exists in every build
 * (gpu_load.c): the CUDA module's functions (gpu_module.h: gpu_cuda.c,
 * gpu_nccl.c, gpu_kernels.cu and the device paths above them, built where the
 * CUDA toolkit is) when the module loads; host memory only when it does not.
 *
 * Device buffers take the lane algorithm's shape: each rank of a node reduces
 * its slice across the node's GPU buffers with a kernel on its own GPU, reading
 * the other owners' buffers through CUDA IPC; moves the reduced slice between
 * nodes over its lane's transport (staged through pinned host memory and the
 * host lane schedules, CUDA-aware MPI on device memory, or one NCCL
 * communicator per lane); and writes the result into every owner's buffer. */
#ifndef DDL_GPU_H
#define DDL_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "choices.h"
#include "ddl.h"
#include "gpu_module.h"
#include "ipc_cache.h"

struct ddl_comm;

/* DDL_GPU_TRANSPORT's values: ddl_gpu_transport_t (core/choices.h). */

/* The CUDA module, loaded the first time it is asked for; NULL without it. */
const ddl_gpu_module_t *ddl_gpu_loaded(void);
/* For ddl-info: 1 and the module's file and kind in text, or 0 and why no
 * module loads. */
int ddl_gpu_module_status(char *text, size_t len);
/* CUDA devices this process sees; 0 with the reason in why. */
int ddl_gpu_devices(char *why, size_t len);

/* Whether libnccl.so.2 loads here; 0 and why when not. */
int ddl_gpu_nccl_available(char *why, size_t len);

/* What cudaPointerGetAttributes said, as the runtime treats it: only memory of
 * type device goes the device way.  Managed memory is host-accessible and goes
 * the host way; so does every pointer CUDA cannot classify (no driver, no
 * device, or memory CUDA never saw). */
typedef enum { DDL_CUDA_MEM_UNREGISTERED = 0, DDL_CUDA_MEM_HOST, DDL_CUDA_MEM_DEVICE, DDL_CUDA_MEM_MANAGED } ddl_cuda_mem_t;
static inline int ddl_gpu_kind_is_device(int query_ok, int cuda_mem_type)
{
    return query_ok && cuda_mem_type == DDL_CUDA_MEM_DEVICE;
}
/* 1 when p is device memory.  Without the module, a pointer the process's
 * CUDA driver calls device memory is still 1, so that it is refused by name. */
int ddl_gpu_is_device(const void *p);
/* bytes of zeroed memory on CUDA device `device` (freed with cudaFree). */
ddl_status_t ddl_gpu_alloc_zeroed(int device, size_t bytes, void **p);

/* An owner describes its device buffer p for its node: the IPC handle of the
 * allocation, and the PCI bus id of its GPU. */
ddl_status_t ddl_gpu_export(const void *p, ddl_gpu_ref_t *ref, char *pci_bus_id, size_t len);
/* Blocking copy between host and device memory (one side device memory),
 * on a stream of the runtime's own, up to timeout seconds. */
ddl_status_t ddl_gpu_memcpy(void *dst, const void *src, size_t bytes, double timeout);
/* Wait for the work queued on stream (a cudaStream_t), or on the whole device
 * when stream is NULL, before other processes read the owner's buffers. */
ddl_status_t ddl_gpu_wait_queued(void *stream, double timeout);
/* The same split in two for nonblocking calls: record an event on stream (NULL:
 * the legacy default stream) on the posting thread; the runner waits for it. */
ddl_status_t ddl_gpu_record(void *stream, void **event);
ddl_status_t ddl_gpu_wait_recorded(void *event, double timeout);
void ddl_gpu_event_free(void *event);
/* A 32-bit word of pinned host memory that every device can read, set to
 * `value`; it is never freed (a stream may still wait on it).  Without
 * the module: DDL_ERR_NOT_SUPPORTED, with the message for ddl_wait_stream. */
ddl_status_t ddl_gpu_host_word(uint32_t **word, uint32_t value);
/* Work queued on stream after this call waits, on the device, until
 * (int32_t)(*word - value) >= 0 (cuStreamWaitValue32): no host function, which
 * CUDA does not let wait for later device work.  DDL_ERR_NOT_SUPPORTED where
 * the driver has no stream memory operations. */
ddl_status_t ddl_gpu_stream_wait_word(void *stream, uint32_t *word, uint32_t value);

/* At communicator creation (collective, with or without the module): the
 * transport every rank can use, agreed over the communicator. */
ddl_status_t ddl_gpu_comm_setup(struct ddl_comm *c);
/* The device allreduce of the lane algorithm (the module's
 * ddl_allreduce_gpu, algo/paths.h); without the module, an error that says
 * what to install. */
ddl_status_t ddl_gpu_allreduce(struct ddl_comm *c, ddl_call_t *call, const void *own_send, void *own_recv);
/* Close IPC mappings, free device memory, destroy NCCL communicators. */
void ddl_gpu_comm_release(struct ddl_comm *c);

#endif
