/* SPDX-License-Identifier: Apache-2.0 */
/* The CUDA module's own interface (gpu_module.h): the per-communicator CUDA
 * state, shared by gpu_cuda.c, algo/allreduce_gpu.c and
 * transport/transport_gpu.c, and gpu_cuda.c's implementations of the GPU
 * interface (gpu.h's functions of the same names, which libddl calls through
 * the module's table, root/cuda_module.c). */
#ifndef DDL_GPU_CUDA_H
#define DDL_GPU_CUDA_H

#include <cuda_runtime_api.h>

#include "comm.h"
#include "gpu.h"
#include "gpu_nccl.h"
#include "ipc_cache.h"

struct ddl_gpu {
    int device;                 /* CUDA ordinal of this rank's GPU; -1 before the first device call */
    cudaStream_t stream;        /* all of this rank's device work */
    ddl_ipc_cache_t ipc;        /* the node's owner buffers */
    void *chunk[DDL_NSCHED];    /* device chunks: reduction target and transport buffer */
    int scratch_pinned;         /* c->scratch[] registered with cudaHostRegister */
    ddl_nccl_t *nccl;           /* NCCL transport: created by the first call that needs it */
};

/* A failed CUDA call as a ddl error naming what was done and CUDA's reason. */
ddl_status_t ddl_cuda_error(cudaError_t rc, const char *what);
/* The state for the GPU at pci_bus_id, made current; created on first use and
 * remade when the owner's GPU changes. */
ddl_status_t ddl_gpu_state(ddl_comm_t *c, const char *pci_bus_id, struct ddl_gpu **out);
/* Wait for the rank's stream, with the communicator's deadline, the node's
 * abort flag and NCCL's error state checked while waiting. */
ddl_status_t ddl_gpu_wait(ddl_comm_t *c, const char *what);

/* gpu.h's functions, with CUDA. */
int ddl_cuda_devices(char *why, size_t len);
int ddl_cuda_is_device(const void *p);
ddl_status_t ddl_cuda_alloc_zeroed(int device, size_t bytes, void **p);
ddl_status_t ddl_cuda_export(const void *p, ddl_gpu_ref_t *ref, char *pci_bus_id, size_t len);
ddl_status_t ddl_cuda_memcpy(void *dst, const void *src, size_t bytes, double timeout);
ddl_status_t ddl_cuda_wait_queued(void *stream, double timeout);
ddl_status_t ddl_cuda_record(void *stream, void **event);
ddl_status_t ddl_cuda_wait_recorded(void *event, double timeout);
void ddl_cuda_event_free(void *event);
ddl_status_t ddl_cuda_host_word(uint32_t **word, uint32_t value);
ddl_status_t ddl_cuda_stream_wait_word(void *stream, uint32_t *word, uint32_t value);
void ddl_cuda_comm_release(ddl_comm_t *c);

#endif
