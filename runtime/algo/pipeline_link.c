/* SPDX-License-Identifier: Apache-2.0 */
/* The lane pipeline through a transport (pipeline.h: ddl_pipeline_run): the
 * driver's link to the transport row for one call, with the communicator's
 * DDL_INFLIGHT and phase counters. */
#include "config.h"

#include "comm.h"
#include "paths.h"
#include "pipeline.h"
#include "transport.h"

_Static_assert(DDL_PH_WRITE_BACK - DDL_PH_REDUCE + 1 == DDL_STAGES,
               "the pipeline's stages are phases of a lane call (phases.h), in its order");

/* The pipeline's link to the transport for one call. */
struct transport_link {
    ddl_comm_t *c;
    ddl_call_t *call;
    const ddl_transport_t *t;
};

static ddl_status_t link_start(void *ctx, int slot, void *buf, size_t n)
{
    const struct transport_link *l = ctx;
    ddl_lane_started(l->c, l->call);
    return l->t->start(l->c, &l->call->plan, ddl_lane_steps, slot, buf, n, l->call->dtype, l->call->op);
}

static ddl_status_t link_finish(void *ctx, int slot, void *buf, size_t n)
{
    const struct transport_link *l = ctx;
    return l->t->finish(l->c, slot, buf, n, l->call->dtype);
}

static ddl_status_t link_ready(void *ctx)
{
    const struct transport_link *l = ctx;
    return ddl_comm_finish_signature(l->c, l->call);
}

ddl_status_t ddl_pipeline_run(ddl_comm_t *c, ddl_call_t *call, const ddl_transport_t *t, const ddl_chunks_t *plan,
                              size_t off, const ddl_pipeline_ops_t *ops)
{
    struct transport_link l = {c, call, t};
    ddl_pipeline_link_t link = {link_start, link_finish, link_ready, &l};
    return ddl_pipeline_drive((size_t)c->set.inflight, plan, off, ddl_dtype_size(call->dtype), ops, &link,
                              &c->phase_seconds[DDL_PH_REDUCE]);
}
