/* SPDX-License-Identifier: Apache-2.0 */
/* The host-p2p transport (transport.h): the chunk's step list over MPI
 * point-to-point along the lane, progressed with the other chunks in flight. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "comm.h"
#include "log.h"
#include "reduce.h"
#include "steps.h"
#include "transport.h"

/* Each slot's messages have a tag of their own; a chunk started early takes
 * a tag of its early key's instead, which no agreed call's messages take. */
static int chunk_tag(int slot, int early)
{
    return slot + DDL_NSCHED * early;
}

static ddl_status_t host_start(ddl_comm_t *c, const ddl_call_plan_t *plan, ddl_steps_fn build, int slot, void *buf,
                              size_t n, ddl_dtype_t dtype, ddl_redop_t op, int early)
{
    ddl_sched_t *s = &c->sched[slot];
    int nsteps;
    ddl_status_t st = build(c, plan, n, ddl_dtype_size(dtype), s->steps, &nsteps);
    if (st != DDL_OK)
        return st;
    ddl_sched_start(s, chunk_tag(slot, early), early > 0, nsteps, buf, c->tmp[slot], ddl_dtype_size(dtype),
                    ddl_reduce_fn(dtype, op));
    /* Post the first step now: the chunk's first bytes leave while the node
     * reduces the next chunk, not when the pipeline first waits for this one. */
    return ddl_sched_progress(s) < 0 ? ddl_comm_mpi_error(c, "lane transfer") : DDL_OK;
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
    snprintf(buf, len, "rank %d on %s (node %d, lane of local rank %d)", wr, wr >= 0 ? c->hosts[wr] : "?",
             peer, c->info.local_rank);
}

static ddl_status_t host_finish(ddl_comm_t *c, int i, void *buf, size_t n, ddl_dtype_t dtype)
{
    (void)buf, (void)n, (void)dtype;
    struct chunk_arg a = {c, i};
    return ddl_comm_wait(c, progress_chunks, &a, "lane transfer", waiting_for_peer);
}

/* A receive of the abandoned chunk may still complete into the slot's tmp
 * (the pipeline abandons it at its first step, which receives nowhere
 * else): that buffer is left to MPI, kept reachable, and the slot gets a new
 * one.  Only the first failed call of a communicator can leave one
 * (lane_early.c: none starts early after it). */
static ddl_status_t host_abandon(ddl_comm_t *c, int slot)
{
    ddl_sched_abandon(&c->sched[slot]);
    void *fresh = aligned_alloc(64, c->scratch_bytes);
    if (!fresh)
        return ddl_error(DDL_ERR_NO_MEMORY, "cannot allocate %zu bytes of lane scratch", c->scratch_bytes);
    c->left_to_mpi = c->tmp[slot];
    c->tmp[slot] = fresh;
    return DDL_OK;
}

static int host_usable(const ddl_comm_t *c, int device, ddl_dtype_t dtype, ddl_redop_t op)
{
    (void)c, (void)dtype, (void)op;
    return !device;
}

const ddl_transport_t ddl_transport_host_p2p = {"host-p2p", host_usable, host_start, host_finish, host_abandon};
