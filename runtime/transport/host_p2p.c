/* SPDX-License-Identifier: Apache-2.0 */
/* The host-p2p transport (transport.h): the chunk's step list over MPI
 * point-to-point along the lane, progressed with the other chunks in flight.
 * Its state, one schedule and one receive buffer per pipeline slot, is its
 * own (host_init). */
#include "config.h"

#include <pthread.h>
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

struct host_p2p {
    ddl_sched_t sched[DDL_NSCHED];
    void *tmp[DDL_NSCHED]; /* each slot's receive buffer, c->scratch_bytes */
};

/* The receive buffers left to MPI (host_abandon): never freed, never reused,
 * and kept reachable for the life of the process, past the communicator
 * that left them. */
static struct left_to_mpi {
    void *buf;
    struct left_to_mpi *next;
} *left_to_mpi;
static pthread_mutex_t left_lock = PTHREAD_MUTEX_INITIALIZER;

static struct host_p2p *state_of(const ddl_comm_t *c)
{
    return ddl_transport_state(c, &ddl_transport_host_p2p);
}

static void host_fini(ddl_comm_t *c, void *state)
{
    (void)c;
    struct host_p2p *h = state;
    for (int i = 0; i < DDL_NSCHED; i++) {
        ddl_sched_fini(&h->sched[i]);
        free(h->tmp[i]);
    }
    free(h); /* what was left to MPI stays on left_to_mpi */
}

/* Between nodes only: on one node no chunk leaves. */
static ddl_status_t host_init(ddl_comm_t *c, int max_steps, void **state)
{
    if (c->info.nnodes == 1)
        return DDL_OK;
    struct host_p2p *h = calloc(1, sizeof(*h));
    if (!h)
        return ddl_error(DDL_ERR_NO_MEMORY, "cannot allocate the lanes' schedules");
    *state = h;
    for (int i = 0; i < DDL_NSCHED; i++) {
        if (!(h->tmp[i] = aligned_alloc(64, c->scratch_bytes)))
            return ddl_error(DDL_ERR_NO_MEMORY, "cannot allocate %zu bytes of lane scratch", c->scratch_bytes);
        ddl_status_t st = ddl_sched_init(&h->sched[i], c->lane_comm, max_steps, c->counts);
        if (st != DDL_OK)
            return st;
    }
    return DDL_OK;
}

static ddl_status_t host_start(ddl_comm_t *c, const ddl_call_plan_t *plan, ddl_steps_fn build, int slot, void *buf,
                              size_t n, ddl_dtype_t dtype, ddl_redop_t op, int early)
{
    struct host_p2p *h = state_of(c);
    ddl_sched_t *s = &h->sched[slot];
    int nsteps;
    ddl_status_t st = build(c, plan, n, ddl_dtype_size(dtype), s->steps, &nsteps);
    if (st != DDL_OK)
        return st;
    ddl_sched_start(s, chunk_tag(slot, early), early > 0, nsteps, buf, h->tmp[slot], ddl_dtype_size(dtype),
                    ddl_reduce_fn(dtype, op));
    /* Post the first step now: the chunk's first bytes leave while the node
     * reduces the next chunk, not when the pipeline first waits for this one. */
    return ddl_sched_progress(s) < 0 ? ddl_comm_mpi_error(c, "lane transfer") : DDL_OK;
}

struct chunk_arg {
    ddl_comm_t *c;
    struct host_p2p *h;
    int i;
};

/* Progress every schedule in flight; 1 when schedule i is done. */
static int progress_chunks(void *arg)
{
    const struct chunk_arg *a = arg;
    int rc = 1;
    for (int j = 0; j < DDL_NSCHED; j++) {
        int r = ddl_sched_progress(&a->h->sched[j]);
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
    int peer = ddl_sched_waiting_for(&a->h->sched[a->i]);
    int wr = peer >= 0 ? c->world_of_lane[peer] : -1;
    snprintf(buf, len, "rank %d on %s (node %d, lane of local rank %d)", wr, wr >= 0 ? c->hosts[wr] : "?",
             peer, c->info.local_rank);
}

static ddl_status_t host_finish(ddl_comm_t *c, int i, void *buf, size_t n, ddl_dtype_t dtype)
{
    (void)buf, (void)n, (void)dtype;
    struct chunk_arg a = {c, state_of(c), i};
    return ddl_comm_wait(c, progress_chunks, &a, "lane transfer", waiting_for_peer);
}

/* A receive of the abandoned chunk may still complete into the slot's tmp
 * (the pipeline abandons it at its first step, which receives nowhere
 * else): that buffer is left to MPI, kept reachable, and the slot gets a new
 * one.  Only the first failed call of a communicator can leave one
 * (lane_early.c: none starts early after it). */
static ddl_status_t host_abandon(ddl_comm_t *c, int slot)
{
    struct host_p2p *h = state_of(c);
    ddl_sched_abandon(&h->sched[slot]);
    void *fresh = aligned_alloc(64, c->scratch_bytes);
    struct left_to_mpi *left = malloc(sizeof(*left));
    if (!fresh || !left) {
        free(fresh);
        free(left);
        return ddl_error(DDL_ERR_NO_MEMORY, "cannot allocate %zu bytes of lane scratch", c->scratch_bytes);
    }
    pthread_mutex_lock(&left_lock);
    *left = (struct left_to_mpi){h->tmp[slot], left_to_mpi};
    left_to_mpi = left;
    pthread_mutex_unlock(&left_lock);
    h->tmp[slot] = fresh;
    return DDL_OK;
}

static int host_usable(const ddl_comm_t *c, int device, ddl_dtype_t dtype, ddl_redop_t op)
{
    (void)c, (void)dtype, (void)op;
    return !device;
}

const ddl_transport_t ddl_transport_host_p2p = {.name = "host-p2p",
                                                 .init = host_init,
                                                 .fini = host_fini,
                                                 .usable = host_usable,
                                                 .start = host_start,
                                                 .finish = host_finish,
                                                 .abandon = host_abandon};
