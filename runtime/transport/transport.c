/* SPDX-License-Identifier: Apache-2.0 */
/* The table of transports and the choice of one for a call (transport.h), and
 * the lane pipeline through it. */
#include "config.h"

#include "comm.h"
#include "pipeline.h"
#include "transport.h"

/* The transports, in the order they are tried: the first whose `usable`
 * says yes carries the call. */
static const ddl_transport_t *const transports[] = {
    &ddl_transport_host_mpi,
#ifdef DDL_HAVE_CUDA
    &ddl_transport_nccl, &ddl_transport_cuda_mpi, &ddl_transport_staged,
#endif
};

const ddl_transport_t *ddl_transport_for(const ddl_comm_t *c, int device, ddl_dtype_t dtype, ddl_redop_t op)
{
    for (size_t i = 0; i < sizeof(transports) / sizeof(transports[0]); i++)
        if (transports[i]->usable(c, device, dtype, op))
            return transports[i];
    return NULL; /* device buffers never get here without CUDA */
}

/* The pipeline's link to the transport for one call. */
struct transport_link {
    ddl_comm_t *c;
    ddl_call_t *call;
    const ddl_transport_t *t;
    ddl_dtype_t dtype;
    ddl_redop_t op;
};

static ddl_status_t link_start(void *ctx, int slot, void *buf, size_t n)
{
    const struct transport_link *l = ctx;
    return l->t->start(l->c, &l->call->plan, slot, buf, n, l->dtype, l->op);
}

static ddl_status_t link_finish(void *ctx, int slot, void *buf, size_t n)
{
    const struct transport_link *l = ctx;
    return l->t->finish(l->c, slot, buf, n, l->dtype);
}

static ddl_status_t link_ready(void *ctx)
{
    const struct transport_link *l = ctx;
    return ddl_comm_finish_signature(l->c, l->call);
}

ddl_status_t ddl_pipeline_run(ddl_comm_t *c, ddl_call_t *call, const ddl_transport_t *t, const ddl_chunks_t *plan,
                              size_t off, ddl_dtype_t dtype, ddl_redop_t op, const ddl_pipeline_ops_t *ops)
{
    struct transport_link l = {c, call, t, dtype, op};
    ddl_pipeline_link_t link = {link_start, link_finish, link_ready, &l};
    return ddl_pipeline_drive((size_t)c->set.inflight, plan, off, ddl_dtype_size(dtype), ops, &link,
                              &c->phase_seconds[DDL_PH_REDUCE]);
}
