/* SPDX-License-Identifier: Apache-2.0 */
/* The CUDA module's composition root and its one exported symbol: the
 * table libddl calls it through (gpu/gpu_module.h). */
#include "config.h"

#include "ddl/version.h"
#include "gpu_cuda.h"
#include "gpu_module.h"
#include "gpu_nccl.h"
#include "paths.h"
#include "transport.h"

#define DDL_STR2(x) #x
#define DDL_STR(x) DDL_STR2(x)

/* The device rows, in the order they are tried (transport_gpu.c says which
 * call each takes). */
static const ddl_transport_t *const device_transports[] = {&ddl_transport_nccl, &ddl_transport_cuda_mpi,
                                                           &ddl_transport_staged};

const ddl_gpu_module_t ddl_gpu_module = {
    .version = DDL_VERSION_STRING,
    .comm_bytes = sizeof(ddl_comm_t),
    .call_bytes = sizeof(ddl_call_t),
#ifdef DDL_CUDA_EMULATION
    .kind = "emulated (tests/cuda-emu: for tests, not for use)",
#else
    .kind = "CUDA runtime " DDL_STR(CUDART_VERSION) " (static)",
#endif
    .devices = ddl_cuda_devices,
    .nccl_available = ddl_nccl_load,
    .is_device = ddl_cuda_is_device,
    .alloc_zeroed = ddl_cuda_alloc_zeroed,
    .export_buffer = ddl_cuda_export,
    .memcpy = ddl_cuda_memcpy,
    .wait_queued = ddl_cuda_wait_queued,
    .record = ddl_cuda_record,
    .wait_recorded = ddl_cuda_wait_recorded,
    .event_free = ddl_cuda_event_free,
    .host_word = ddl_cuda_host_word,
    .stream_wait_word = ddl_cuda_stream_wait_word,
    .comm_release = ddl_cuda_comm_release,
    .allreduce = ddl_allreduce_gpu,
    .transports = device_transports,
    .ntransports = sizeof(device_transports) / sizeof(device_transports[0]),
};
