/* SPDX-License-Identifier: Apache-2.0 */
/* The GPU interface in a build without CUDA: every buffer is host memory. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "comm.h"
#include "gpu.h"
#include "log.h"

int ddl_gpu_built(void)
{
    return 0;
}

int ddl_gpu_devices(char *why, size_t len)
{
    snprintf(why, len, "libddl was built without CUDA (configure found no CUDA toolkit, or --without-cuda)");
    return 0;
}

int ddl_gpu_nccl_available(char *why, size_t len)
{
    snprintf(why, len, "libddl was built without CUDA");
    return 0;
}

int ddl_gpu_is_device(const void *p)
{
    (void)p;
    return 0;
}

ddl_status_t ddl_gpu_export(const void *p, ddl_gpu_ref_t *ref, char *pci_bus_id, size_t len)
{
    (void)p, (void)ref, (void)pci_bus_id, (void)len;
    return ddl_error(DDL_ERR_INVALID_ARG, "device buffers need libddl built with CUDA (configure --with-cuda)");
}

ddl_status_t ddl_gpu_memcpy(void *dst, const void *src, size_t bytes, double timeout)
{
    (void)timeout;
    memcpy(dst, src, bytes); /* only host memory exists in this build */
    return DDL_OK;
}

ddl_status_t ddl_gpu_wait_queued(void *stream, double timeout)
{
    (void)stream, (void)timeout;
    return DDL_OK;
}

ddl_status_t ddl_gpu_record(void *stream, void **event)
{
    (void)stream;
    *event = NULL;
    return DDL_OK;
}

ddl_status_t ddl_gpu_wait_recorded(void *event, double timeout)
{
    (void)event, (void)timeout;
    return DDL_OK;
}

void ddl_gpu_event_free(void *event)
{
    (void)event;
}

ddl_status_t ddl_gpu_host_word(uint32_t **word, uint32_t value)
{
    (void)value;
    *word = NULL;
    return ddl_error(DDL_ERR_NOT_SUPPORTED, "ddl_wait_stream needs libddl built with CUDA; use ddl_wait");
}

ddl_status_t ddl_gpu_stream_wait_word(void *stream, uint32_t *word, uint32_t value)
{
    (void)stream, (void)word, (void)value;
    return ddl_error(DDL_ERR_NOT_SUPPORTED, "ddl_wait_stream needs libddl built with CUDA; use ddl_wait");
}

ddl_status_t ddl_gpu_comm_setup(ddl_comm_t *c)
{
    if (c->set.gpu_transport != DDL_GPU_AUTO && c->set.gpu_transport != DDL_GPU_STAGED)
        return ddl_error(DDL_ERR_INVALID_ARG, "DDL_GPU_TRANSPORT=%s needs libddl built with CUDA%s; use auto or "
                         "staged", ddl_gpu_transport_names[c->set.gpu_transport],
                         c->set.gpu_transport == DDL_GPU_NCCL ? " and NCCL" : "");
    return DDL_OK;
}

void ddl_gpu_comm_release(ddl_comm_t *c)
{
    (void)c;
}

ddl_status_t ddl_gpu_alloc_zeroed(int device, size_t bytes, void **p)
{
    (void)device, (void)bytes;
    *p = NULL;
    return ddl_error(DDL_ERR_NOT_SUPPORTED, "device memory needs a libddl built with CUDA");
}
