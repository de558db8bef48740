/* SPDX-License-Identifier: Apache-2.0 */
/* The chunk pipeline's driver (pipeline.h). */
#include "config.h"

#include <stdio.h>

#include "clock.h"
#include "pipeline.h"
#include "trace.h"

static const char *const stage_names[DDL_STAGES] = {DDL_STAGE_NAMES};

/* Each chunk's stage: counted, and one DDL_TRACE event. */
static void stage_done(double *seconds, int stage, double start, size_t k, size_t bytes)
{
    double now = ddl_now();
    seconds[stage] += now - start;
    if (!ddl_trace_on)
        return;
    char args[96];
    snprintf(args, sizeof(args), "\"chunk\": %zu, \"bytes\": %zu", k, bytes);
    ddl_trace_event(stage_names[stage], start, now, args);
}

ddl_status_t ddl_pipeline_drive(size_t depth, const ddl_chunks_t *plan, size_t off, size_t esize,
                                const ddl_pipeline_ops_t *ops, const ddl_pipeline_link_t *link,
                                double *stage_seconds)
{
    void *buf[DDL_PIPELINE_MAX_DEPTH] = {0};
    ddl_status_t st = DDL_OK;
    if (depth < 1 || depth > DDL_PIPELINE_MAX_DEPTH)
        return DDL_ERR_INTERNAL;
    for (size_t k = 0; k < plan->count + depth - 1 && st == DDL_OK; k++) {
        size_t co, cn;
        if (k < plan->count) {
            int i = (int)(k % depth);
            ddl_chunk_at(plan, k, &co, &cn);
            double t0 = ddl_now();
            if ((st = ops->fill(ops->ctx, i, off + co, cn, &buf[i])) != DDL_OK)
                break;
            stage_done(stage_seconds, DDL_STAGE_FILL, t0, k, cn * esize);
            int early = k == 0 && link->early && link->early(link->ctx);
            if (k == 0 && !early && link->ready && (st = link->ready(link->ctx)) != DDL_OK)
                break;
            if ((st = link->start(link->ctx, i, buf[i], cn)) != DDL_OK)
                break;
            if (early && link->ready && (st = link->ready(link->ctx)) != DDL_OK)
                break;
        }
        if (k + 1 >= depth && k + 1 - depth < plan->count) {
            size_t j = k + 1 - depth;
            int i = (int)(j % depth);
            ddl_chunk_at(plan, j, &co, &cn);
            double t0 = ddl_now();
            st = link->finish(link->ctx, i, buf[i], cn);
            stage_done(stage_seconds, DDL_STAGE_WAIT, t0, j, cn * esize);
            t0 = ddl_now();
            if (st == DDL_OK)
                st = ops->drain(ops->ctx, i, off + co, cn, buf[i]);
            stage_done(stage_seconds, DDL_STAGE_DRAIN, t0, j, cn * esize);
        }
    }
    return st;
}
