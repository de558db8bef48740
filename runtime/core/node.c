/* SPDX-License-Identifier: Apache-2.0 */
/* The node's control block and every wait among a node's ranks (node.h):
 * barriers, doorbells, the call's meeting.  They share one wait of their
 * own, wait_until: it sleeps on the control block's futex word, so a
 * peer's arrival wakes it at once, which poll.h's naps could not; its
 * timeouts say so in the one timeout message (ddl_timed_out).  Uses core and
 * the signatures' type. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "node.h"

#define DDL_CTRL_MAGIC 0xdd1c7a1u
#define SPIN_CHECKS 2000
#define SLEEP_SLICE_S 0.05 /* how often a sleeping waiter rechecks peers and deadline */
/* The node's progress hook (node.h) while spinning: not in the first checks,
 * where a small call's barrier ends (a hook is an MPI call, about a
 * microsecond), then every so many; and before every sleep, whose slices
 * start short and double up to SLEEP_SLICE_S, so that what this rank still
 * owes a peer leaves within a millisecond or so of the wait's start. */
#define PROGRESS_EVERY_CHECKS 256
#define FIRST_SLICE_S 0.001

size_t ddl_node_ctrl_size(int local_size)
{
    return sizeof(ddl_ctrl_t) + (size_t)local_size * sizeof(ddl_slot_t);
}

void ddl_node_ctrl_init(ddl_ctrl_t *ctrl, int local_size)
{
    memset(ctrl, 0, ddl_node_ctrl_size(local_size));
    ctrl->magic = DDL_CTRL_MAGIC;
    ctrl->nranks = local_size;
}

void ddl_node_attach(ddl_node_t *n)
{
    n->ctrl = n->seg.base;
    n->ctrl->slots[n->local_rank].pid = (int32_t)getpid();
}


void ddl_node_publish_early(ddl_node_t *n, uint32_t seq, int early)
{
    n->ctrl->slots[0].box[seq & 1].early = early; /* published with the signature (ddl_node_publish) */
}

int ddl_node_early(const ddl_node_t *n, uint32_t seq)
{
    return n->ctrl->slots[0].box[seq & 1].early;
}

void ddl_node_request_shutdown(ddl_node_t *n)
{
    n->ctrl->slots[n->local_rank].req.shutdown = 1;
}

const _Atomic int32_t *ddl_node_abort_flag(const ddl_node_t *n)
{
    return &n->ctrl->abort_rank;
}

static void futex_wait(_Atomic uint32_t *word, uint32_t expected, double seconds)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, expected, &ts, NULL, 0);
}

/* After publishing (an epoch, a doorbell, a signature): wake the sleepers, if
 * any.  The fence pairs with the sleeper's increment of `sleepers` before its
 * last look (wait_until): either this load sees the sleeper, or the sleeper
 * sees what was published.  Without sleepers nothing shared is written, so
 * ranks that spin do not fight over the futex word's cache line. */
static void wake_all(ddl_ctrl_t *ctrl)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load(&ctrl->sleepers) > 0) {
        atomic_fetch_add(&ctrl->wake_seq, 1);
        syscall(SYS_futex, (uint32_t *)&ctrl->wake_seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    }
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static int local_peer_dead(const ddl_node_t *n, int *who)
{
    for (int r = 0; r < n->local_size; r++) {
        pid_t pid = n->ctrl->slots[r].pid;
        if (r != n->local_rank && pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) {
            *who = r;
            return 1;
        }
    }
    return 0;
}

typedef int (*ready_fn_t)(const ddl_node_t *n, const void *arg);

/* Wait until ready(); fail on abort, on a dead local peer, or `timeout`
 * seconds after the spinning (timeout <= 0: never).  Spin `spins` checks
 * first (short waits), then sleep.  The clock is first read after the spin:
 * a small call on one node waits here once, and the read was a tenth of it.
 * describe() writes what is still missing. */
static ddl_status_t wait_until(const ddl_node_t *n, ready_fn_t ready, const void *arg, double timeout, int spins,
                               void (*describe)(const ddl_node_t *, const void *, char *, size_t),
                               const char *what)
{
    ddl_ctrl_t *ctrl = n->ctrl;
    for (int i = 1; i <= spins; i++) {
        if (ready(n, arg))
            return DDL_OK;
        if (n->progress && i % PROGRESS_EVERY_CHECKS == 0)
            n->progress(n->progress_arg);
        cpu_relax();
    }
    double deadline = timeout > 0 ? ddl_now() + timeout : 0;
    double slice = FIRST_SLICE_S;
    char missing[256];
    for (;;) {
        uint32_t seq = atomic_load(&ctrl->wake_seq);
        if (ready(n, arg))
            return DDL_OK;
        if (atomic_load(&ctrl->abort_rank) > 0) {
            char reason[400];
            ddl_node_abort_reason(n, reason, sizeof(reason));
            return ddl_error(DDL_ERR_PEER_FAILED, "%s: %s", what, reason);
        }
        int dead;
        if (local_peer_dead(n, &dead))
            return ddl_error(DDL_ERR_PEER_FAILED, "%s: local rank %d (rank %d, pid %d on %s, node %d) exited",
                             what, dead, n->world_of_local[dead], (int)ctrl->slots[dead].pid, n->host, n->node);
        double now = ddl_now();
        if (deadline > 0 && now >= deadline) {
            describe(n, arg, missing, sizeof(missing));
            /* A short grace for the reason of the rank waited for. */
            double grace_end = now + ddl_failure_grace(n->timeout);
            while (atomic_load(&ctrl->abort_rank) == 0 && ddl_now() < grace_end)
                futex_wait(&ctrl->wake_seq, atomic_load(&ctrl->wake_seq), 0.01);
            char reason[400] = "";
            if (atomic_load(&ctrl->abort_rank) > 0)
                ddl_node_abort_reason(n, reason, sizeof(reason));
            size_t o = strlen(missing);
            snprintf(missing + o, sizeof(missing) - o, " on %s (node %d)", n->host, n->node);
            return ddl_timed_out(what, n->timeout, missing, reason);
        }
        if (n->progress)
            n->progress(n->progress_arg);
        double nap = deadline > 0 && deadline - now < slice ? deadline - now : slice;
        slice = slice * 2 < SLEEP_SLICE_S ? slice * 2 : SLEEP_SLICE_S;
        atomic_fetch_add(&ctrl->sleepers, 1);
        if (!ready(n, arg)) /* the last look, after announcing the sleep (see wake_all) */
            futex_wait(&ctrl->wake_seq, seq, nap);
        atomic_fetch_sub(&ctrl->sleepers, 1);
    }
}

static int barrier_ready(const ddl_node_t *n, const void *arg)
{
    uint32_t target = *(const uint32_t *)arg;
    for (int r = 0; r < n->local_size; r++)
        if ((int32_t)(atomic_load_explicit(&n->ctrl->slots[r].epoch, memory_order_acquire) - target) < 0)
            return 0;
    return 1;
}

static void barrier_describe(const ddl_node_t *n, const void *arg, char *buf, size_t len)
{
    uint32_t target = *(const uint32_t *)arg;
    size_t o = (size_t)snprintf(buf, len, "local ranks");
    for (int r = 0; r < n->local_size && o + 24 < len; r++)
        if ((int32_t)(atomic_load(&n->ctrl->slots[r].epoch) - target) < 0)
            o += (size_t)snprintf(buf + o, len - o, " %d (rank %d)", r, n->world_of_local[r]);
}

ddl_status_t ddl_node_barrier(ddl_node_t *n, const char *what)
{
    uint32_t target = ++n->epoch;
    atomic_store_explicit(&n->ctrl->slots[n->local_rank].epoch, target, memory_order_release);
    wake_all(n->ctrl);
    return wait_until(n, barrier_ready, &target, n->timeout, SPIN_CHECKS, barrier_describe, what);
}

void ddl_node_ring(ddl_node_t *n)
{
    atomic_fetch_add_explicit(&n->ctrl->slots[n->local_rank].doorbell, 1, memory_order_release);
    wake_all(n->ctrl);
}

/* Has local rank r published call seq (or a later one) in its mailbox? */
static int has_published(const ddl_node_t *n, int r, uint32_t seq)
{
    return (int32_t)(atomic_load_explicit(&n->ctrl->slots[r].box[seq & 1].seq, memory_order_acquire) - seq) >= 0;
}

/* The last call local rank r has published (it publishes every call, on
 * every path, before it waits for anything). */
static uint32_t last_published(const ddl_node_t *n, int r)
{
    uint32_t a = atomic_load_explicit(&n->ctrl->slots[r].box[0].seq, memory_order_acquire);
    uint32_t b = atomic_load_explicit(&n->ctrl->slots[r].box[1].seq, memory_order_acquire);
    return (int32_t)(a - b) > 0 ? a : b;
}

struct lag_arg {
    int first, count;
    uint32_t bell, most;
};

/* No helper of the owner more than `most` calls behind `bell`. */
static int helpers_close(const ddl_node_t *n, const void *arg)
{
    const struct lag_arg *a = arg;
    for (int r = a->first; r < a->first + a->count; r++)
        if ((int32_t)(a->bell - last_published(n, r)) > (int32_t)a->most) /* a helper may be a call ahead */
            return 0;
    return 1;
}

static void helpers_describe(const ddl_node_t *n, const void *arg, char *buf, size_t len)
{
    const struct lag_arg *a = arg;
    size_t o = (size_t)snprintf(buf, len, "helpers more than %u calls behind call %u:", (unsigned)a->most,
                                (unsigned)a->bell);
    for (int r = a->first; r < a->first + a->count && o + 48 < len; r++)
        if ((int32_t)(a->bell - last_published(n, r)) > (int32_t)a->most)
            o += (size_t)snprintf(buf + o, len - o, " local rank %d (rank %d, at call %u)", r, n->world_of_local[r],
                                  (unsigned)last_published(n, r));
}

ddl_status_t ddl_node_ring_outcome(ddl_node_t *n, ddl_status_t st, int cls, int helpers)
{
    _Static_assert((DDL_NODE_CALLS & (DDL_NODE_CALLS - 1)) == 0, "calls[] wraps with the 32-bit count");
    ddl_slot_t *me = &n->ctrl->slots[n->local_rank];
    uint32_t bell = atomic_load_explicit(&me->doorbell, memory_order_relaxed) + 1;
    uint64_t word = (uint64_t)bell << 32 | (uint64_t)(uint16_t)(int16_t)st << 16 | (uint16_t)(cls + 1);
    atomic_store_explicit(&me->calls[bell % DDL_NODE_CALLS], word, memory_order_relaxed);
    atomic_store_explicit(&me->doorbell, bell, memory_order_release);
    if (helpers <= 0 || bell % (DDL_NODE_CALLS / 4) != 0)
        return DDL_OK;
    struct lag_arg lag = {n->local_rank + 1, helpers, bell, DDL_NODE_CALLS / 2};
    if (helpers_close(n, &lag))
        return DDL_OK;
    wake_all(n->ctrl); /* asleep in an earlier call of this owner's, which has ended */
    lag.most = DDL_NODE_CALLS * 3 / 4;
    if (helpers_close(n, &lag))
        return DDL_OK;
    lag.most = DDL_NODE_CALLS / 4;
    return wait_until(n, helpers_close, &lag, n->timeout, 0, helpers_describe,
                      "collective mode: this owner's helpers catching up");
}

ddl_status_t ddl_node_outcome(const ddl_node_t *n, int owner, uint32_t bell, ddl_status_t *ended, int *cls)
{
    /* The doorbell reached bell before this runs (acquire), so the record is
     * there; the owner waits for this helper before it could overwrite it. */
    uint64_t w = atomic_load_explicit(&n->ctrl->slots[owner].calls[bell % DDL_NODE_CALLS], memory_order_relaxed);
    *cls = -1;
    *ended = DDL_ERR_INTERNAL;
    if ((uint32_t)(w >> 32) != bell)
        return ddl_error(DDL_ERR_INTERNAL, "ddl_allreduce: the record of call %u of this helper's owner (local rank "
                         "%d) holds call %u", (unsigned)bell, owner, (unsigned)(w >> 32));
    *cls = (int)(uint16_t)w - 1;
    *ended = (ddl_status_t)(int16_t)(uint16_t)(w >> 16);
    return DDL_OK;
}

struct doorbell_arg {
    int owner;
    uint32_t seen;
};

static int doorbell_ready(const ddl_node_t *n, const void *arg)
{
    const struct doorbell_arg *a = arg;
    return atomic_load_explicit(&n->ctrl->slots[a->owner].doorbell, memory_order_acquire) != a->seen;
}

static void doorbell_describe(const ddl_node_t *n, const void *arg, char *buf, size_t len)
{
    const struct doorbell_arg *a = arg;
    snprintf(buf, len, "a request from owner local rank %d (rank %d)", a->owner, n->world_of_local[a->owner]);
}

ddl_status_t ddl_node_wait_doorbell(ddl_node_t *n, int owner, uint32_t seen, uint32_t *value)
{
    struct doorbell_arg a = {owner, seen};
    ddl_status_t st = wait_until(n, doorbell_ready, &a, 0, SPIN_CHECKS, doorbell_describe, "the owner's next request");
    if (st == DDL_OK)
        *value = atomic_load_explicit(&n->ctrl->slots[owner].doorbell, memory_order_acquire);
    return st;
}

static int count_reached(const ddl_node_t *n, const void *arg)
{
    const struct doorbell_arg *a = arg;
    uint32_t now = atomic_load_explicit(&n->ctrl->slots[a->owner].doorbell, memory_order_acquire);
    return (int32_t)(now - a->seen) >= 0;
}

/* The owner is in call `seen` (it has published it) or past it. */
static int owner_in_call(const ddl_node_t *n, const void *arg)
{
    const struct doorbell_arg *a = arg;
    return has_published(n, a->owner, a->seen) || count_reached(n, arg);
}

static void owner_call_describe(const ddl_node_t *n, const void *arg, char *buf, size_t len)
{
    const struct doorbell_arg *a = arg;
    snprintf(buf, len, "its owner, local rank %d (rank %d), to %s call %u (it is at call %u)", a->owner,
             n->world_of_local[a->owner], has_published(n, a->owner, a->seen) ? "end" : "reach", (unsigned)a->seen,
             (unsigned)last_published(n, a->owner));
}

ddl_status_t ddl_node_wait_count(ddl_node_t *n, int owner, uint32_t target)
{
    struct doorbell_arg a = {owner, target};
    /* No spin: the owner is in the system MPI, whose time spinning here would
     * take from it.  The owner reaches the call within the deadline, as every
     * rank of a collective does; then its own waits end within the deadline
     * and its graces, with its word. */
    ddl_status_t st = wait_until(n, owner_in_call, &a, n->timeout, 0, owner_call_describe,
                                 "ddl_allreduce on a helper: its owner's call");
    if (st != DDL_OK)
        return st;
    return wait_until(n, count_reached, &a, n->timeout + 3 * ddl_failure_grace(n->timeout), 0, owner_call_describe,
                      "ddl_allreduce on a helper: its owner's call");
}

struct owners_arg {
    int lanes, gpus;
    uint32_t seq;
};

static int owners_ready(const ddl_node_t *n, const void *arg)
{
    const struct owners_arg *a = arg;
    for (int g = 0; g < a->gpus; g++)
        if (!has_published(n, g * a->lanes, a->seq))
            return 0;
    return 1;
}

static void owners_describe(const ddl_node_t *n, const void *arg, char *buf, size_t len)
{
    const struct owners_arg *a = arg;
    size_t o = (size_t)snprintf(buf, len, "the owners of GPUs");
    for (int g = 0; g < a->gpus && o + 24 < len; g++)
        if (!has_published(n, g * a->lanes, a->seq))
            o += (size_t)snprintf(buf + o, len - o, " %d (rank %d)", g, n->world_of_local[g * a->lanes]);
}

void ddl_node_publish(ddl_node_t *n, const ddl_sig_t *sig, uint32_t seq, int wake)
{
    ddl_mailbox_t *b = &n->ctrl->slots[n->local_rank].box[seq & 1];
    ddl_sig_key(sig, b->key);
    atomic_store_explicit(&b->seq, seq, memory_order_release);
    if (wake)
        wake_all(n->ctrl);
}

ddl_status_t ddl_node_wait_owners(ddl_node_t *n, int lanes, int gpus, uint32_t seq, const char *what)
{
    struct owners_arg a = {lanes, gpus, seq};
    return wait_until(n, owners_ready, &a, n->timeout, SPIN_CHECKS, owners_describe, what);
}

ddl_status_t ddl_node_owners_meet(ddl_node_t *n, int lanes, int gpus, const ddl_sig_t *sig, uint32_t seq)
{
    ddl_node_publish(n, sig, seq, 1);
    return ddl_node_wait_owners(n, lanes, gpus, seq, "small allreduce: the node's owners");
}

struct meet_arg {
    uint32_t seq;
    int *split;
};

/* "local ranks 1 (rank 5) ...": those of first .. first + count - 1 that have not published call seq. */
static void list_unpublished(const ddl_node_t *n, int first, int count, uint32_t seq, char *buf, size_t len)
{
    size_t o = (size_t)snprintf(buf, len, "local ranks");
    for (int r = first; r < first + count && o + 24 < len; r++)
        if (!has_published(n, r, seq))
            o += (size_t)snprintf(buf + o, len - o, " %d (rank %d)", r, n->world_of_local[r]);
}

/* Every local rank at call seq on the lanes; or one that cannot come: on the
 * MPI path for this call, or past it (box[seq & 1] then holds seq + 2 or
 * later, and this call can no longer meet). */
static int meet_ready(const ddl_node_t *n, const void *arg)
{
    const struct meet_arg *a = arg;
    int all = 1;
    for (int r = 0; r < n->local_size; r++) {
        const ddl_mailbox_t *b = &n->ctrl->slots[r].box[a->seq & 1];
        int32_t ahead = (int32_t)(atomic_load_explicit(&b->seq, memory_order_acquire) - a->seq);
        if (ahead < 0) {
            all = 0;
        } else if (ahead > 0 || ddl_sig_from_key(b->key).algo == DDL_ALGO_MPI) {
            *a->split = r;
            return 1;
        }
    }
    return all;
}

static void meet_describe(const ddl_node_t *n, const void *arg, char *buf, size_t len)
{
    list_unpublished(n, 0, n->local_size, ((const struct meet_arg *)arg)->seq, buf, len);
}

ddl_status_t ddl_node_meet(ddl_node_t *n, uint32_t seq, int *split)
{
    *split = -1;
    struct meet_arg a = {seq, split};
    return wait_until(n, meet_ready, &a, n->timeout, SPIN_CHECKS, meet_describe,
                      "lane allreduce: the node's buffers");
}

struct published_arg {
    int first, count;
    uint32_t seq;
};

static int published_ready(const ddl_node_t *n, const void *arg)
{
    const struct published_arg *a = arg;
    for (int r = a->first; r < a->first + a->count; r++)
        if (!has_published(n, r, a->seq))
            return 0;
    return 1;
}

static void published_describe(const ddl_node_t *n, const void *arg, char *buf, size_t len)
{
    const struct published_arg *a = arg;
    list_unpublished(n, a->first, a->count, a->seq, buf, len);
}

ddl_status_t ddl_node_wait_published(ddl_node_t *n, int first, int count, uint32_t seq)
{
    struct published_arg a = {first, count, seq};
    return wait_until(n, published_ready, &a, n->timeout, SPIN_CHECKS, published_describe,
                      "lane allreduce: the helpers' taking of the last request");
}

void ddl_node_tell_verdict(ddl_node_t *n, uint32_t seq, ddl_status_t st)
{
    ddl_mailbox_t *b = &n->ctrl->slots[n->local_rank].box[seq & 1];
    b->verdict = st;
    atomic_store_explicit(&b->verdict_seq, seq, memory_order_release);
    wake_all(n->ctrl);
}

static int verdict_ready(const ddl_node_t *n, const void *arg)
{
    const struct doorbell_arg *a = arg; /* owner, and the call in `seen` */
    const ddl_mailbox_t *b = &n->ctrl->slots[a->owner].box[a->seen & 1];
    return (int32_t)(atomic_load_explicit(&b->verdict_seq, memory_order_acquire) - a->seen) >= 0;
}

static void verdict_describe(const ddl_node_t *n, const void *arg, char *buf, size_t len)
{
    const struct doorbell_arg *a = arg;
    snprintf(buf, len, "owner local rank %d (rank %d) to finish the owners' exchange of signatures", a->owner,
             n->world_of_local[a->owner]);
}

ddl_status_t ddl_node_wait_verdict(ddl_node_t *n, int owner, uint32_t seq, ddl_status_t *verdict)
{
    struct doorbell_arg a = {owner, seq};
    /* No spin: the owner is in MPI point-to-point with the other nodes, and a
     * helper spinning here takes the core it needs on a node with more ranks
     * than cores.  The owner's own wait ends within DDL_TIMEOUT and its
     * graces, with its word (a verdict, or its failure and the reason): this
     * wait outlasts it, so that the helper reports the cause, not the owner. */
    ddl_status_t st = wait_until(n, verdict_ready, &a, n->timeout + 3 * ddl_failure_grace(n->timeout), 0,
                                 verdict_describe,
                                 "lane allreduce: the other nodes' signatures");
    if (st == DDL_OK)
        *verdict = (ddl_status_t)n->ctrl->slots[owner].box[seq & 1].verdict;
    return st;
}

double ddl_failure_grace(double timeout)
{
    return timeout / 4 < 1.0 ? timeout / 4 : 1.0;
}

void ddl_node_abort(ddl_node_t *n, const char *why)
{
    int32_t expected = 0;
    if (atomic_load(&n->ctrl->abort_rank) == 0) /* the first failure's reason is the one that counts */
        snprintf(n->ctrl->slots[n->local_rank].why, sizeof(n->ctrl->slots[0].why), "%s", why ? why : "");
    atomic_compare_exchange_strong(&n->ctrl->abort_rank, &expected, n->local_rank + 1);
    wake_all(n->ctrl);
}

void ddl_node_abort_reason(const ddl_node_t *n, char *buf, size_t len)
{
    int r = atomic_load(&n->ctrl->abort_rank) - 1;
    if (r < 0 || r >= n->local_size) {
        snprintf(buf, len, "a rank of this node failed");
        return;
    }
    char why[sizeof(n->ctrl->slots[0].why)];
    memcpy(why, n->ctrl->slots[r].why, sizeof(why));
    why[sizeof(why) - 1] = '\0';
    snprintf(buf, len, "local rank %d (rank %d on %s, node %d) failed%s%s", r, n->world_of_local[r], n->host, n->node,
             why[0] ? ": " : "", why);
}
