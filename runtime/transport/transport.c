/* SPDX-License-Identifier: Apache-2.0 */
/* The transport table's one choice (transport.h), and the lane pipeline through it. */
#include "config.h"

#include "comm.h"
#include "gpu.h"
#include "pipeline.h"
#include "transport.h"

const ddl_transport_t *ddl_transport_for(const ddl_comm_t *c, int device, ddl_dtype_t dtype, ddl_redop_t op)
{
    (void)c, (void)dtype, (void)op;
    if (!device)
        return &ddl_transport_host_mpi;
#ifdef DDL_HAVE_CUDA
    MPI_Datatype type;
    MPI_Op mop;
    if (c->set.gpu_transport == DDL_GPU_NCCL)
        return &ddl_transport_nccl;
    if (c->set.gpu_transport == DDL_GPU_MPI && ddl_mpi_native(dtype, op, &type, &mop))
        return &ddl_transport_cuda_mpi;
    return &ddl_transport_staged;
#else
    return NULL; /* device buffers never get here without CUDA */
#endif
}

/* The pipeline's link to the transport for one call. */
struct transport_link {
    ddl_comm_t *c;
    const ddl_transport_t *t;
    ddl_dtype_t dtype;
    ddl_redop_t op;
};

static ddl_status_t link_start(void *ctx, int slot, void *buf, size_t n)
{
    const struct transport_link *l = ctx;
    return l->t->start(l->c, slot, buf, n, l->dtype, l->op);
}

static ddl_status_t link_finish(void *ctx, int slot, void *buf, size_t n)
{
    const struct transport_link *l = ctx;
    return l->t->finish(l->c, slot, buf, n, l->dtype);
}

static ddl_status_t link_ready(void *ctx)
{
    return ddl_comm_finish_signature(((const struct transport_link *)ctx)->c);
}

ddl_status_t ddl_pipeline_run(ddl_comm_t *c, const ddl_transport_t *t, const ddl_chunks_t *plan, size_t off,
                              ddl_dtype_t dtype, ddl_redop_t op, const ddl_pipeline_ops_t *ops)
{
    struct transport_link l = {c, t, dtype, op};
    ddl_pipeline_link_t link = {link_start, link_finish, link_ready, &l};
    return ddl_pipeline_drive((size_t)c->set.inflight, plan, off, ddl_dtype_size(dtype), ops, &link,
                              &c->phase_seconds[DDL_PH_REDUCE]);
}
