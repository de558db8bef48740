/* SPDX-License-Identifier: Apache-2.0 */
/* The step executor (steps.h): progresses a chunk's step list over MPI
 * point-to-point without blocking.  Uses core's reductions and traces. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mpi_types.h"
#include "node.h"
#include "steps.h"
#include "trace.h"

ddl_status_t ddl_sched_init(ddl_sched_t *s, MPI_Comm comm, int max_steps, ddl_dim_count_t *counts)
{
    s->counts = counts;
    s->comm = comm;
    s->tag = 0;
    s->early = 0;
    s->steps = calloc((size_t)max_steps, sizeof(*s->steps));
    s->nsteps = s->cur = s->posted = 0;
    s->nreq = 0;
    return s->steps ? DDL_OK : ddl_error(DDL_ERR_NO_MEMORY, "cannot allocate %d schedule steps", max_steps);
}

void ddl_sched_fini(ddl_sched_t *s)
{
    free(s->steps);
    s->steps = NULL;
}

void ddl_sched_start(ddl_sched_t *s, int tag, int early, int nsteps, void *buf, void *tmp, size_t esize,
                     ddl_reduce_fn_t fn)
{
    s->tag = tag;
    s->early = early;
    s->nsteps = nsteps;
    s->cur = 0;
    s->posted = 0;
    s->buf = buf;
    s->tmp = tmp;
    s->esize = esize;
    s->fn = fn;
}

/* Does the current step receive into tmp (to combine, or as an early first step)? */
static int into_tmp(const ddl_sched_t *s, const ddl_step_t *st)
{
    return st->combine != DDL_COMBINE_NONE || (s->early && s->cur == 0);
}

static int post(ddl_sched_t *s)
{
    const ddl_step_t *st = &s->steps[s->cur];
    s->nreq = 0;
    if (st->recv_peer >= 0) {
        char *dst = into_tmp(s, st) ? s->tmp : s->buf + st->recv_off * s->esize;
        if (MPI_Irecv(dst, (int)(st->recv_n * s->esize), MPI_BYTE, st->recv_peer, s->tag, s->comm,
                      &s->req[s->nreq++]) != MPI_SUCCESS)
            return DDL_ERR_MPI;
    }
    if (st->send_peer >= 0) {
        if (MPI_Isend(s->buf + st->send_off * s->esize, (int)(st->send_n * s->esize), MPI_BYTE,
                      st->send_peer, s->tag, s->comm, &s->req[s->nreq++]) != MPI_SUCCESS)
            return DDL_ERR_MPI;
    }
    s->posted = 1;
    s->posted_at = MPI_Wtime();
    if (ddl_trace_on)
        s->traced_at = ddl_now();
    return 0;
}

int ddl_sched_progress(ddl_sched_t *s)
{
    while (s->cur < s->nsteps) {
        if (!s->posted && post(s) != 0)
            return DDL_ERR_MPI;
        int done = 1;
        if (s->nreq && MPI_Testall(s->nreq, s->req, &done, ddl_mpi_statuses_ignore()) != MPI_SUCCESS)
            return DDL_ERR_MPI;
        if (!done)
            return 0;
        const ddl_step_t *st = &s->steps[s->cur];
        char *dst = s->buf + st->recv_off * s->esize;
        if (ddl_trace_on) { /* one event per step: its transfer, from posting to completion */
            char args[160];
            snprintf(args, sizeof(args), "\"dim\": %d, \"send_to\": %d, \"send_bytes\": %zu, \"recv_from\": %d, "
                     "\"recv_bytes\": %zu", st->dim, st->send_peer, st->send_peer >= 0 ? st->send_n * s->esize : 0,
                     st->recv_peer, st->recv_peer >= 0 ? st->recv_n * s->esize : 0);
            ddl_trace_event(st->combine == DDL_COMBINE_NONE ? "exchange" : "exchange and reduce", s->traced_at,
                            ddl_now(), args);
        }
        if (s->counts && st->dim >= 0 && st->dim < DDL_GRID_MAX_DIMS) {
            s->counts[st->dim].bytes_sent += st->send_peer >= 0 ? st->send_n * s->esize : 0;
            s->counts[st->dim].seconds += MPI_Wtime() - s->posted_at;
        }
        if (st->combine == DDL_COMBINE_RECV_FIRST)
            s->fn(dst, s->tmp, dst, st->recv_n);
        else if (st->combine == DDL_COMBINE_RECV_SECOND)
            s->fn(dst, dst, s->tmp, st->recv_n);
        else if (st->recv_peer >= 0 && into_tmp(s, st))
            memcpy(dst, s->tmp, st->recv_n * s->esize);
        s->cur++;
        s->posted = 0;
    }
    return 1;
}

void ddl_sched_abandon(ddl_sched_t *s)
{
    if (s->cur < s->nsteps && s->posted) {
        for (int i = 0; i < s->nreq; i++) {
            if (s->req[i] == MPI_REQUEST_NULL)
                continue;
            if (i == 0 && s->steps[s->cur].recv_peer >= 0) /* post() puts the receive first */
                MPI_Cancel(&s->req[i]);
            MPI_Request_free(&s->req[i]);
        }
    }
    s->nreq = 0;
    s->cur = s->nsteps;
    s->posted = 0;
}

int ddl_sched_waiting_for(const ddl_sched_t *s)
{
    if (s->cur >= s->nsteps)
        return -1;
    const ddl_step_t *st = &s->steps[s->cur];
    return st->recv_peer >= 0 ? st->recv_peer : st->send_peer;
}
