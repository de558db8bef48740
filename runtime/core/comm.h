/* SPDX-License-Identifier: Apache-2.0 */
/* The communicator's internal state, shared by the collective's files. */
#ifndef DDL_COMM_H
#define DDL_COMM_H

#include <mpi.h>
#include <pthread.h>
#include <stdbool.h>

#include "call.h"
#include "ddl.h"
#include "ddl_limits.h"
#include "grid.h"
#include "heap.h"
#include "mpi_errors.h"
#include "node.h"
#include "params.h"
#include "phases.h"

#define DDL_NSCHED DDL_INFLIGHT_MAX /* the most chunks in flight between nodes (DDL_INFLIGHT) */

/* Each layer's long-lived state, opaque here: the layer's own header has it. */
struct ddl_engine;  /* engine/engine.h: posted requests and the progress thread */
struct ddl_online;  /* select/online.h: online selection's size classes */
struct ddl_sched;   /* transport/steps.h: one lane schedule (a pipeline slot's step list in flight) */
struct ddl_step;    /* transport/steps.h: one step of a schedule */


typedef struct {
    void *ptr;
    size_t len;
} ddl_private_alloc_t;

struct ddl_comm {
    uint32_t magic; /* live or dead: see ddl_comm_is_live */
    struct ddl_comm *next_dead;  /* destroyed: the list that keeps it (comm.c) */
    MPI_Comm world, node_comm, lane_comm, owners;
    MPI_Comm owners_app;         /* ddl_comm_owners: the application's, apart from the runtime's */
    MPI_Comm owners_sig;         /* the owners' exchange of signatures alone: its receives take any tag */
    struct ddl_mpi_early *mpi_early; /* the MPI path's early starts between hosts (algo/mpi_early.c);
                                      * NULL where the owners share one host */
    struct ddl_lane_early *lane_early; /* owners between nodes: the lanes' early first chunks
                                        * (algo/lane_early.c); else NULL */
    ddl_comm_info_t info;
    ddl_helper_mode_t helper_mode;
    ddl_settings_t set;

    char (*hosts)[DDL_HOST_LEN]; /* by world rank */
    int *world_of_local;         /* world rank of each local rank */
    int *world_of_lane;          /* world rank of each rank of this rank's lane (by node) */
    int *world_of_owner;         /* owners: world rank of each rank of the owners' communicator */
    int *shm_host;               /* by world rank: the lowest world rank that MPI reaches through shared
                                  * memory from it (MPI_COMM_TYPE_SHARED: one host as MPI sees it) */

    ddl_node_t node;             /* control block and node waits */
    ddl_shm_t *segs;             /* one per GPU: the owner's stage area, then its heap */
    /* heap and priv change in ddl_malloc/ddl_free on any application thread
     * while a request's runner (the progress thread) looks allocations up:
     * both hold heap_lock (ddl_comm_heap_room). */
    pthread_mutex_t heap_lock;
    ddl_heap_t heap;             /* owners: allocations in segs[gpu] */
    _Atomic uint64_t heap_changes; /* ddl_malloc and ddl_free of the heap so far (counted under heap_lock) */
    /* The runner's last look-ups of ddl_comm_heap_room (one per buffer of a
     * call): a repeated call passes the same buffers, and their room stands
     * while no allocation has come or gone. */
    struct {
        uint64_t changes;
        size_t off, room;
    } heap_memo[2];
    ddl_private_alloc_t *priv;   /* helpers' ddl_malloc buffers (not shared) */
    size_t npriv, cap_priv;

    void *scratch[DDL_NSCHED];   /* between nodes: the pipeline's slot buffers (host_fill's target) */
    size_t scratch_bytes;
    struct ddl_online *online;   /* online selection (and DDL_EXPLORE), one per collective (online[DDL_COLL_*]):
                                  * what each size class measured and chose */
    MPI_Comm select_comm;        /* the ranks that choose and agree: every rank, or the owners in serve mode */
    char save_path[512];         /* DDL_TUNING_SAVE on rank 0; "" when unset */
    ddl_dim_count_t counts[DDL_GRID_MAX_DIMS];
    double phase_seconds[DDL_PH_COUNT]; /* lane-path calls, phase by phase (ddl_comm_phases) */
    unsigned long long lane_calls;
    unsigned long long early_calls; /* lane calls whose first chunk left before the signatures (DDL_PH_EARLY) */
    struct ddl_transports *transports; /* every transport's own state (transport/transport.h) */

    struct ddl_gpu *gpu;         /* CUDA state, from the first device call (gpu_cuda.h) */
    void *bounce;                /* host copy of device buffers on the MPI path: kept for the next call */
    size_t bounce_bytes;
    struct ddl_owners_exchange *owners_x; /* the owners' exchange of signatures between nodes (agree/exchange.h) */

    uint32_t doorbell_seen;      /* helpers: the owner's last call (collective) or request (serve) handled */
    uint32_t seq;                /* calls so far, count 0 included: the signature's call number */
    bool broken;                 /* a collective failed: later calls fail at once */
    ddl_mpi_failure_t mpi_failure; /* the first failed MPI call on its communicators (mpi_errors.h) */
    struct ddl_mpi_watch *mpi_watch; /* the deadline of the blocking system MPI collectives (mpi_watch.h) */
    bool mpi_watch_failed;       /* its thread could not start: calls go unwatched */
    MPI_Errhandler app_errors;   /* the caller's communicator's error handler, for owners_app */
    char broken_why[256];        /* the message of the failure that broke it */
    struct ddl_engine *engine;   /* posted requests and the progress thread (engine.c); kept after
                                    destruction, with this struct */
    unsigned logged_algos;       /* algorithms a fixed rule chose, already announced at INFO */
    unsigned long long model_logged; /* chunk sizes (log2) whose model choice was announced */
};

/* A destroyed communicator keeps its (small) struct, marked dead, so that a
 * later call with it is refused instead of reading freed memory. */
#define DDL_COMM_LIVE 0x64646c4cu
#define DDL_COMM_DEAD 0x64656164u
/* Is comm a live communicator (created and not destroyed)? */
bool ddl_comm_is_live(const ddl_comm_t *comm);
/* Does MPI reach every rank of c through shared memory (one host, as with
 * virtual nodes; shm_host)? */
bool ddl_comm_one_host(const ddl_comm_t *c);
/* The MPI path's host copy (c->bounce, kept for the next call) of at least
 * `bytes`: device buffers' data, or the reduce-scatter's and allgather's
 * packed blocks. */
ddl_status_t ddl_comm_bounce(ddl_comm_t *c, size_t bytes);
/* Keep a destroyed communicator's struct reachable (not a leak, and a late
 * call with it is refused). */
void ddl_comm_bury(ddl_comm_t *comm);

/* The GPUs of the job (the owners), from the layout: the same on every rank
 * (a helper has no owner_size). */
static inline size_t ddl_comm_gpus(const ddl_comm_t *c)
{
    return (size_t)c->info.nnodes * (size_t)c->info.gpus_per_node;
}

/* Does buf lie in this owner's ddl_malloc heap?  *off: its offset in the
 * owner's segment.  Asked several times on every call: inline. */
static inline int ddl_comm_heap_offset(const ddl_comm_t *c, const void *buf, size_t *off)
{
    const ddl_shm_t *seg = &c->segs[c->info.gpu];
    uintptr_t base = (uintptr_t)seg->base, p = (uintptr_t)buf; /* integers: no pointer past its object */
    if (p < base + c->set.stage_size || p - base >= seg->size)
        return 0;
    *off = (size_t)(p - base);
    return 1;
}
/* Bytes from segment offset off to the end of the ddl_malloc allocation that
 * holds it (0: none), under heap_lock: safe against ddl_malloc and ddl_free on
 * other threads.  For the call's runner only (heap_memo) (malloc.c). */
size_t ddl_comm_heap_room(ddl_comm_t *c, size_t off);
/* A wait of this rank ended because a rank of its node failed: DDL_ERR_PEER_FAILED,
 * "<what> abandoned: <that rank's reason>". */
ddl_status_t ddl_comm_abandoned(ddl_comm_t *c, const char *what);
/* The world rank of rank r of comm (a communicator of c's ranks). */
int ddl_comm_world_rank(const ddl_comm_t *c, MPI_Comm comm, int r);
/* The one wait (ddl_wait_until, poll.h) where a communicator waits: with
 * DDL_TIMEOUT and the node's abort word, then ddl_comm_wait_ended. */
ddl_status_t ddl_comm_wait(ddl_comm_t *c, int (*step)(void *arg), void *arg, const char *what,
                           void (*waiting_for)(void *arg, char *buf, size_t len));
/* DDL_ERR_MPI for `what`, a failed MPI call of c's: "<what>: <MPI's words
 * on the first failed call>" (mpi_errors.h), or "<what> failed in MPI" when
 * its handler kept none. */
ddl_status_t ddl_comm_mpi_error(ddl_comm_t *c, const char *what);
/* The communicator's failure protocol after a wait for `what` ended with
 * st: a failed rank of its node (DDL_ERR_PEER_FAILED) becomes "<what>
 * abandoned: <that rank's reason>"; a timeout keeps its message (the last
 * error), with a lane peer's word on why it failed first when one comes
 * within a short grace; DDL_ERR_MPI gets MPI's words on the failed call
 * (mpi_errors.h); any other status is returned as it is. */
ddl_status_t ddl_comm_wait_ended(ddl_comm_t *c, ddl_status_t st, const char *what);
/* Mark the communicator broken, tell the node's ranks to stop waiting and
 * the lane's ranks on other nodes why. */
ddl_status_t ddl_comm_fail(ddl_comm_t *comm, ddl_status_t st);

#endif
