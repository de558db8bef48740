/* SPDX-License-Identifier: Apache-2.0 */
/* The chunk pipeline (pipeline.h). */
#include "config.h"

#include <stdio.h>

#include "comm.h"
#include "pipeline.h"
#include "trace.h"

/* Each chunk's stage: counted in the call's phases (ddl_comm_phases), and one
 * DDL_TRACE event. */
static void stage_done(ddl_comm_t *c, int phase, double start, size_t k, size_t n, ddl_dtype_t dtype)
{
    double now = ddl_now();
    c->phase_seconds[phase] += now - start;
    if (!ddl_trace_on)
        return;
    char args[96];
    snprintf(args, sizeof(args), "\"chunk\": %zu, \"bytes\": %zu", k, n * ddl_dtype_size(dtype));
    ddl_trace_event(ddl_phase_names[phase], start, now, args);
}

ddl_status_t ddl_pipeline_run(ddl_comm_t *c, const ddl_transport_t *t, const ddl_chunks_t *plan, size_t off,
                              ddl_dtype_t dtype, ddl_redop_t op, const ddl_pipeline_ops_t *ops)
{
    size_t depth = (size_t)c->set.inflight;
    void *buf[DDL_NSCHED] = {0};
    ddl_status_t st = DDL_OK;
    for (size_t k = 0; k < plan->count + depth - 1 && st == DDL_OK; k++) {
        size_t co, cn;
        if (k < plan->count) {
            int i = (int)(k % depth);
            ddl_chunk_at(plan, k, &co, &cn);
            double t0 = ddl_now();
            if ((st = ops->fill(ops->ctx, i, off + co, cn, &buf[i])) != DDL_OK)
                break;
            stage_done(c, DDL_PH_REDUCE, t0, k, cn, dtype);
            /* The signature travelled while the first chunk was reduced. */
            if (k == 0 && (st = ddl_comm_finish_signature(c)) != DDL_OK)
                break;
            if ((st = t->start(c, i, buf[i], cn, dtype, op)) != DDL_OK)
                break;
        }
        if (k + 1 >= depth && k + 1 - depth < plan->count) {
            size_t j = k + 1 - depth;
            int i = (int)(j % depth);
            ddl_chunk_at(plan, j, &co, &cn);
            double t0 = ddl_now();
            st = t->finish(c, i, buf[i], cn, dtype);
            stage_done(c, DDL_PH_WAIT, t0, j, cn, dtype);
            t0 = ddl_now();
            if (st == DDL_OK)
                st = ops->drain(ops->ctx, i, off + co, cn, buf[i]);
            stage_done(c, DDL_PH_WRITE_BACK, t0, j, cn, dtype);
        }
    }
    return st;
}
