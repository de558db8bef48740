/* SPDX-License-Identifier: Apache-2.0 */
/* The CUDA module (libddl-cuda.so): the device path as a module that libddl
 * loads at run time, as Open MPI loads its accelerator component and UCX its
 * ucx-cuda modules, so that one libddl serves hosts with and without CUDA.
 *
 * The module exports one symbol, DDL_GPU_MODULE_SYMBOL, this table; libddl
 * (gpu_load.c) finds it the first time it needs the device path, and calls
 * the GPU interface of gpu.h through it.  The module in turn calls libddl's
 * internals (the waits, the pipeline, the host transport), which libddl
 * exports for it alone (core/libddl.map): so module and library come from
 * one build, and the loader refuses a module whose version or layout differs. */
#ifndef DDL_GPU_MODULE_H
#define DDL_GPU_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "ddl.h"
#include "ipc_cache.h"

struct ddl_comm;
struct ddl_transport;

#define DDL_GPU_MODULE_SYMBOL "ddl_gpu_module"
#define DDL_GPU_MODULE_FILE "libddl-cuda.so"

typedef struct ddl_gpu_module {
    /* Checked at load: libddl's DDL_VERSION_STRING and its layout. */
    const char *version;
    size_t comm_bytes, call_bytes;
    const char *kind; /* "CUDA <version>" or "emulated" (ddl-info) */
    /* gpu.h's functions of the same names. */
    int (*devices)(char *why, size_t len);
    int (*nccl_available)(char *why, size_t len);
    int (*is_device)(const void *p);
    ddl_status_t (*alloc_zeroed)(int device, size_t bytes, void **p);
    ddl_status_t (*export_buffer)(const void *p, ddl_gpu_ref_t *ref, char *pci_bus_id, size_t len);
    ddl_status_t (*memcpy)(void *dst, const void *src, size_t bytes, double timeout);
    ddl_status_t (*wait_queued)(void *stream, double timeout);
    ddl_status_t (*record)(void *stream, void **event);
    ddl_status_t (*wait_recorded)(void *event, double timeout);
    void (*event_free)(void *event);
    ddl_status_t (*host_word)(uint32_t **word, uint32_t value);
    ddl_status_t (*stream_wait_word)(void *stream, uint32_t *word, uint32_t value);
    void (*comm_release)(struct ddl_comm *c);
    /* The device allreduce of the lane algorithm (algo/paths.h's ddl_allreduce_gpu). */
    ddl_status_t (*allreduce)(struct ddl_comm *c, ddl_call_t *call, const void *own_send, void *own_recv);
    /* The device rows of the transport table (transport/transport.h), in the
     * order they are tried. */
    const struct ddl_transport *const *transports;
    size_t ntransports;
} ddl_gpu_module_t;

#endif
