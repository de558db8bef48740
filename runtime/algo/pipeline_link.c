/* SPDX-License-Identifier: Apache-2.0 */
/* The lane pipeline through a transport (pipeline.h: ddl_pipeline_run): the
 * driver's link to the transport row for one call, with the communicator's
 * DDL_INFLIGHT and phase counters. */
#include "config.h"

#include "clock.h"
#include "comm.h"
#include "exchange.h"
#include "paths.h"
#include "pipeline.h"
#include "trace.h"
#include "transport.h"

_Static_assert(DDL_PH_WRITE_BACK - DDL_PH_REDUCE + 1 == DDL_STAGES,
               "the pipeline's stages are phases of a lane call (phases.h), in its order");

void ddl_lane_started(ddl_comm_t *c, ddl_call_t *call)
{
    if (call->started)
        return;
    call->started = 1;
    double now = ddl_now();
    c->phase_seconds[DDL_PH_START] += now - call->lane_at;
    ddl_trace_event(ddl_phase_names[DDL_PH_START], call->lane_at, now, NULL);
}

/* The elements that travel for a chunk of n: one piece of n per node it
 * carries (ddl_call_pieces). */
static size_t travelling(const ddl_comm_t *c, const ddl_call_t *call, size_t n)
{
    return n * ddl_call_pieces(call->coll, c->info.nnodes);
}

/* The pipeline's link to the transport for one call. */
struct transport_link {
    ddl_comm_t *c;
    ddl_call_t *call;
    const ddl_transport_t *t;
    int early_slot; /* the slot of the chunk started before the signatures; -1: none */
    double early_at; /* when it started */
};

/* The first chunk may leave before the owners' exchange (and, for local
 * rank 0 gone ahead, before the node's meeting) where the node decided so
 * (call->early) and the transport can abandon it. */
static int link_early(void *ctx)
{
    const struct transport_link *l = ctx;
    return (l->call->sig_pending || l->call->meet_rest) && l->call->early > 0 && l->t->abandon;
}

static ddl_status_t link_start(void *ctx, int slot, void *buf, size_t n)
{
    struct transport_link *l = ctx;
    ddl_lane_started(l->c, l->call);
    int early = link_early(l) ? l->call->early : 0; /* false once the signatures have agreed */
    if (early) {
        l->early_slot = slot;
        l->early_at = ddl_now();
    }
    return l->t->start(l->c, &l->call->plan, ddl_lane_steps, slot, buf, travelling(l->c, l->call, n), l->call->dtype,
                       l->call->op, early);
}

static ddl_status_t link_finish(void *ctx, int slot, void *buf, size_t n)
{
    const struct transport_link *l = ctx;
    return l->t->finish(l->c, slot, buf, travelling(l->c, l->call, n), l->call->dtype);
}

static ddl_status_t link_ready(void *ctx)
{
    const struct transport_link *l = ctx;
    ddl_status_t st = l->call->meet_rest ? l->call->meet_rest(l->call->meet_ctx) : DDL_OK;
    if (st == DDL_OK)
        st = ddl_owners_finish_signature(l->c, l->call);
    if (l->early_slot < 0)
        return st;
    double now = ddl_now();
    l->c->early_calls++;
    l->c->phase_seconds[DDL_PH_EARLY] += now - l->early_at;
    ddl_trace_event(ddl_phase_names[DDL_PH_EARLY], l->early_at, now, NULL);
    ddl_status_t left = st == DDL_OK ? DDL_OK : l->t->abandon(l->c, l->early_slot);
    return left != DDL_OK ? left : st;
}

ddl_status_t ddl_pipeline_run(ddl_comm_t *c, ddl_call_t *call, const ddl_transport_t *t, const ddl_chunks_t *plan,
                              size_t off, const ddl_pipeline_ops_t *ops)
{
    struct transport_link l = {c, call, t, -1, 0};
    ddl_pipeline_link_t link = {.start = link_start, .finish = link_finish, .ready = link_ready, .early = link_early,
                                .ctx = &l};
    return ddl_pipeline_drive((size_t)c->set.inflight, plan, off, ddl_dtype_size(call->dtype), ops, &link,
                              &c->phase_seconds[DDL_PH_REDUCE]);
}
