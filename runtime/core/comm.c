/* SPDX-License-Identifier: Apache-2.0 */
/* The communicator's own functions: whether one is live, its info and
 * counters, and the failure protocol every layer calls (a failed rank tells
 * its node and its lane's peers, a timeout names who failed first).  Creating
 * and destroying one is the composition root's (root/create.c), which builds
 * every layer.  Uses core only. */
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "log.h"
#include "signature.h"

bool ddl_comm_is_live(const ddl_comm_t *c) { return c && c->magic == DDL_COMM_LIVE; }

bool ddl_comm_one_host(const ddl_comm_t *c)
{
    for (int r = 1; r < c->info.size; r++)
        if (c->shm_host[r] != c->shm_host[0])
            return false;
    return true;
}

/* Destroyed communicators, kept reachable: the memory stays valid for a late
 * call to be refused, and it is not a leak. */
static _Atomic(ddl_comm_t *) graveyard;

void ddl_comm_bury(ddl_comm_t *c)
{
    ddl_comm_t *head = atomic_load(&graveyard);
    do
        c->next_dead = head;
    while (!atomic_compare_exchange_weak(&graveyard, &head, c));
}

ddl_status_t ddl_config_init(ddl_config_t *cfg)
{
    if (!cfg)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_config_init: cfg is NULL");
    return ddl_config_load(cfg);
}

ddl_status_t ddl_comm_info(const ddl_comm_t *c, ddl_comm_info_t *info)
{
    if (!ddl_comm_is_live(c) || !info)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_comm_info: not a live communicator, or info is NULL");
    *info = c->info;
    return DDL_OK;
}

int ddl_comm_stats(const ddl_comm_t *c, ddl_dim_stats_t *stats, int max)
{
    if (!ddl_comm_is_live(c) || !stats || max < 1)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_comm_stats: not a live communicator, or no room for stats");
    /* Entry 0: the lane algorithms between all nodes; then the grid's dimensions. */
    int n = 0, ndims = c->set.grid.ndims ? c->set.grid.ndims : 1;
    for (int d = 0; d < ndims && n < max; d++) {
        int size = d == 0 ? c->info.nnodes : c->set.grid.dims[d];
        stats[n++] = (ddl_dim_stats_t){d, size, c->counts[d].bytes_sent, c->counts[d].seconds};
    }
    return n;
}

const char *const ddl_phase_names[DDL_PH_COUNT] = {DDL_PHASE_NAMES};

int ddl_comm_phases(const ddl_comm_t *c, ddl_phase_stats_t *phases, int max)
{
    if (!ddl_comm_is_live(c) || !phases || max < 1)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_comm_phases: not a live communicator, or no room for phases");
    int n = 0;
    for (; n < DDL_PH_COUNT && n < max; n++)
        phases[n] = (ddl_phase_stats_t){ddl_phase_names[n], c->phase_seconds[n],
                                        n == DDL_PH_EARLY ? c->early_calls : c->lane_calls};
    return n;
}

void ddl_comm_stats_reset(ddl_comm_t *c)
{
    if (!ddl_comm_is_live(c))
        return;
    memset(c->counts, 0, sizeof(c->counts));
    memset(c->phase_seconds, 0, sizeof(c->phase_seconds));
    c->lane_calls = 0;
    c->early_calls = 0;
}

MPI_Comm ddl_comm_owners(const ddl_comm_t *c)
{
    return ddl_comm_is_live(c) ? c->owners_app : MPI_COMM_NULL;
}

/* A failed rank tells the ranks of its lane on the other nodes why, so that a
 * peer whose wait for it times out can name the cause instead of only the
 * rank it waited for (which may itself be waiting for a stalled rank of its
 * node).  Small eager messages on a tag of their own: nobody waits for them. */
#define DDL_TAG_FAILED 7101

static void tell_lane_peers(ddl_comm_t *c)
{
    if (c->lane_comm == MPI_COMM_NULL)
        return;
    int n, me;
    MPI_Comm_size(c->lane_comm, &n);
    MPI_Comm_rank(c->lane_comm, &me);
    for (int p = 0; p < n; p++) {
        MPI_Request r;
        if (p != me && MPI_Isend(c->broken_why, (int)strlen(c->broken_why) + 1, MPI_CHAR, p, DDL_TAG_FAILED,
                                 c->lane_comm, &r) == MPI_SUCCESS)
            MPI_Request_free(&r);
    }
}

struct failed_word {
    MPI_Comm lane_comm;
    MPI_Status status;
};

/* A probe's step: has a lane peer's word on why it failed arrived? */
static int failed_word_arrived(void *arg)
{
    struct failed_word *w = arg;
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, DDL_TAG_FAILED, w->lane_comm, &flag, &w->status);
    return flag;
}

/* A wait of this rank timed out (its message the last error): wait briefly
 * for a lane peer's word on why it failed first, and report both. */
static ddl_status_t explain_timeout(ddl_comm_t *c)
{
    char msg[512], why[sizeof(c->broken_why)] = "";
    snprintf(msg, sizeof(msg), "%s", ddl_last_error());
    int from = -1;
    struct failed_word w = {.lane_comm = c->lane_comm};
    ddl_wait_how_t probe = {NULL, ddl_failure_grace(c->set.timeout), NULL, NULL, NULL};
    if (c->lane_comm != MPI_COMM_NULL && ddl_wait_until(&probe, failed_word_arrived, &w) == DDL_OK) {
        MPI_Recv(why, (int)sizeof(why), MPI_CHAR, w.status.MPI_SOURCE, DDL_TAG_FAILED, c->lane_comm, MPI_STATUS_IGNORE);
        why[sizeof(why) - 1] = '\0';
        from = c->world_of_lane[w.status.MPI_SOURCE];
    }
    if (from < 0)
        return ddl_error(DDL_ERR_TIMED_OUT, "%s", msg);
    return ddl_error(DDL_ERR_TIMED_OUT, "%s; rank %d on %s, which failed first, says: %s", msg, from, c->hosts[from],
                     why);
}

ddl_status_t ddl_comm_abandoned(ddl_comm_t *c, const char *what)
{
    char reason[400];
    ddl_node_abort_reason(&c->node, reason, sizeof(reason));
    return ddl_error(DDL_ERR_PEER_FAILED, "%s abandoned: %s", what, reason);
}

ddl_status_t ddl_comm_mpi_error(ddl_comm_t *c, const char *what)
{
    if (ddl_mpi_failure_check(&c->mpi_failure, what) != DDL_OK)
        return DDL_ERR_MPI;
    return ddl_error(DDL_ERR_MPI, "%s failed in MPI", what);
}

ddl_status_t ddl_comm_wait_ended(ddl_comm_t *c, ddl_status_t st, const char *what)
{
    if (st == DDL_ERR_MPI)
        return ddl_comm_mpi_error(c, what);
    if (st == DDL_ERR_PEER_FAILED)
        return ddl_comm_abandoned(c, what);
    return st == DDL_ERR_TIMED_OUT ? explain_timeout(c) : st;
}

ddl_status_t ddl_comm_wait(ddl_comm_t *c, int (*step)(void *arg), void *arg, const char *what,
                           void (*waiting_for)(void *arg, char *buf, size_t len))
{
    ddl_wait_how_t w = {what, c->set.timeout, ddl_node_abort_flag(&c->node), waiting_for, NULL};
    return ddl_comm_wait_ended(c, ddl_wait_until(&w, step, arg), what);
}

int ddl_comm_world_rank(const ddl_comm_t *c, MPI_Comm comm, int r)
{
    MPI_Group mine, world;
    int w = r;
    MPI_Comm_group(comm, &mine);
    MPI_Comm_group(c->world, &world);
    MPI_Group_translate_ranks(mine, 1, &r, world, &w);
    MPI_Group_free(&mine);
    MPI_Group_free(&world);
    return w;
}

ddl_status_t ddl_comm_fail(ddl_comm_t *c, ddl_status_t st)
{
    if (!c->broken) {
        snprintf(c->broken_why, sizeof(c->broken_why), "%s", *ddl_last_error() ? ddl_last_error() : ddl_status_string(st));
        c->broken = true;
        tell_lane_peers(c);
    }
    if (c->node.ctrl)
        ddl_node_abort(&c->node, c->broken_why);
    return st;
}

ddl_status_t ddl_comm_bounce(ddl_comm_t *c, size_t bytes)
{
    if (c->bounce_bytes >= bytes)
        return DDL_OK;
    void *p = realloc(c->bounce, bytes);
    if (!p)
        return ddl_error(DDL_ERR_NO_MEMORY, "out of memory for a %zu-byte host copy on the MPI path", bytes);
    c->bounce = p;
    c->bounce_bytes = bytes;
    return DDL_OK;
}
