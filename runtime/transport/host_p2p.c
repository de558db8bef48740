/* SPDX-License-Identifier: Apache-2.0 */
/* The host-p2p transport (transport.h): the chunk's step list over MPI
 * point-to-point along the lane, progressed with the other chunks in flight. */
#include "config.h"

#include <stdio.h>

#include "comm.h"
#include "log.h"
#include "reduce.h"
#include "steps.h"
#include "transport.h"

static ddl_status_t host_start(ddl_comm_t *c, const ddl_call_plan_t *plan, ddl_steps_fn build, int slot, void *buf,
                              size_t n, ddl_dtype_t dtype, ddl_redop_t op)
{
    ddl_sched_t *s = &c->sched[slot];
    int nsteps;
    ddl_status_t st = build(c, plan, n, ddl_dtype_size(dtype), s->steps, &nsteps);
    if (st == DDL_OK)
        ddl_sched_start(s, nsteps, buf, c->tmp[slot], ddl_dtype_size(dtype), ddl_reduce_fn(dtype, op));
    return st;
}

struct chunk_arg {
    ddl_comm_t *c;
    int i;
};

/* Progress every schedule in flight; 1 when schedule i is done. */
static int progress_chunks(void *arg)
{
    const struct chunk_arg *a = arg;
    int rc = 1;
    for (int j = 0; j < DDL_NSCHED; j++) {
        int r = ddl_sched_progress(&a->c->sched[j]);
        if (r < 0)
            return r;
        if (j == a->i)
            rc = r;
    }
    return rc;
}

/* After a timeout: the lane peer that schedule i still waits for. */
static void waiting_for_peer(void *arg, char *buf, size_t len)
{
    const struct chunk_arg *a = arg;
    const ddl_comm_t *c = a->c;
    int peer = ddl_sched_waiting_for(&c->sched[a->i]);
    int wr = peer >= 0 ? c->world_of_lane[peer] : -1;
    snprintf(buf, len, ": waiting for rank %d on %s (node %d, lane of local rank %d)", wr, wr >= 0 ? c->hosts[wr] : "?",
             peer, c->info.local_rank);
}

static ddl_status_t host_finish(ddl_comm_t *c, int i, void *buf, size_t n, ddl_dtype_t dtype)
{
    (void)buf, (void)n, (void)dtype;
    struct chunk_arg a = {c, i};
    ddl_status_t st = ddl_comm_wait(c, progress_chunks, &a, "lane transfer", waiting_for_peer);
    return st == DDL_ERR_MPI ? ddl_error(st, "lane transfer failed in MPI") : st;
}

static int host_usable(const ddl_comm_t *c, int device, ddl_dtype_t dtype, ddl_redop_t op)
{
    (void)c, (void)dtype, (void)op;
    return !device;
}

const ddl_transport_t ddl_transport_host_p2p = {"host-p2p", host_usable, host_start, host_finish};
