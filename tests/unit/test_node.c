/* SPDX-License-Identifier: Apache-2.0 */
/* The node's waits (core/node.c): a rank asleep in a barrier wakes when the
 * last rank arrives.  A lost wake-up shows as a sleeper that returns only
 * when its 50 ms sleep slice ends.  A waiting rank calls the node's progress
 * hook (MPI progress) often while the wait lasts, never in one that ends at
 * once.  ddl_wait_until spins before it naps, except where the last wait at the
 * same place lasted 1 ms or more. */
#include "config.h"

#include <check.h>

#include "unit.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "node.h"

#define ROUNDS 10
#define LATE_S 0.02 /* the last rank comes this late: the first has long gone to sleep */
#define WAKE_LIMIT_S 0.01 /* a lost wake-up waits out the slice: 30 ms here */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The two ranks' times, shared: when the late one arrived, when the sleeper left. */
typedef struct {
    _Atomic double arrived[ROUNDS], left[ROUNDS];
} times_t;

static void run_rank(ddl_ctrl_t *ctrl, int rank, times_t *t)
{
    static const int world[2] = {0, 1};
    ddl_node_t n = {.ctrl = ctrl, .local_rank = rank, .local_size = 2, .timeout = 5, .world_of_local = world,
                    .host = "test"};
    ctrl->slots[rank].pid = (int32_t)getpid();
    ck_assert_int_eq(ddl_node_barrier(&n, "test: start"), DDL_OK);
    for (int i = 0; i < ROUNDS; i++) {
        if (rank == 1) {
            nanosleep(&(struct timespec){0, (long)(LATE_S * 1e9)}, NULL);
            atomic_store(&t->arrived[i], now());
        }
        ck_assert_int_eq(ddl_node_barrier(&n, "test: round"), DDL_OK);
        if (rank == 0)
            atomic_store(&t->left[i], now());
    }
}

START_TEST(test_sleeper_wakes)
{
    size_t size = ddl_node_ctrl_size(2);
    ddl_ctrl_t *ctrl = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    times_t *t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert(ctrl != MAP_FAILED && t != MAP_FAILED);
    ddl_node_ctrl_init(ctrl, 2);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        run_rank(ctrl, 1, t);
        _exit(0);
    }
    run_rank(ctrl, 0, t);
    int status = 0;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (int i = 0; i < ROUNDS; i++) {
        double late = atomic_load(&t->left[i]) - atomic_load(&t->arrived[i]);
        ck_assert_msg(late < WAKE_LIMIT_S, "round %d: the sleeper left %.1f ms after the last rank arrived", i,
                      late * 1e3);
    }
    munmap(ctrl, size);
    munmap(t, sizeof(*t));
}
END_TEST

static int hook_calls;
static double first_call_at, last_call_at;

static void count_hook(void *arg)
{
    (void)arg;
    last_call_at = now();
    if (hook_calls++ == 0)
        first_call_at = last_call_at;
}

/* Rank 0 waits LATE_S for rank 1: it must call the hook within a couple of
 * milliseconds (a peer on another node may wait for what MPI still has to
 * send for this rank) and keep calling it while asleep (before, the hook
 * was not there and a rank asleep here left its lane peer to DDL_TIMEOUT). */
START_TEST(test_progress_while_waiting)
{
    size_t size = ddl_node_ctrl_size(2);
    ddl_ctrl_t *ctrl = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert(ctrl != MAP_FAILED);
    ddl_node_ctrl_init(ctrl, 2);
    static const int world[2] = {0, 1};
    ddl_node_t n = {.ctrl = ctrl, .local_size = 2, .timeout = 5, .world_of_local = world, .host = "test",
                    .progress = count_hook};
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        n.local_rank = 1;
        nanosleep(&(struct timespec){0, (long)(LATE_S * 1e9)}, NULL);
        _exit(ddl_node_barrier(&n, "test: late") == DDL_OK ? 0 : 1);
    }
    ctrl->slots[0].pid = (int32_t)getpid();
    double start = now();
    ck_assert_int_eq(ddl_node_barrier(&n, "test: waiting"), DDL_OK);
    int status = 0;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_msg(hook_calls > 0 && first_call_at - start < 0.003, "the hook first ran %.1f ms into the wait (%d "
                  "calls)", hook_calls ? (first_call_at - start) * 1e3 : -1.0, hook_calls);
    ck_assert_msg(last_call_at - start >= LATE_S / 2, "the hook last ran %.1f ms into a wait of %.0f ms: not while "
                  "asleep", (last_call_at - start) * 1e3, LATE_S * 1e3);
    /* Alone on the node, a barrier ends at once: no hook. */
    ddl_node_ctrl_init(ctrl, 1);
    ddl_node_t alone = {.ctrl = ctrl, .local_size = 1, .timeout = 5, .world_of_local = world, .host = "test",
                        .progress = count_hook};
    hook_calls = 0;
    ck_assert_int_eq(ddl_node_barrier(&alone, "test: alone"), DDL_OK);
    ck_assert_int_eq(hook_calls, 0);
    munmap(ctrl, size);
}
END_TEST

/* ddl_wait_until steps that end a wait `ready_s` after it began, counting their looks. */
typedef struct {
    double ready_at;
    int looks;
} timed_wait_t;

static int ready_one(void *arg)
{
    timed_wait_t *w = arg;
    w->looks++;
    return now() >= w->ready_at;
}

static int ready_two(void *arg)
{
    return ready_one(arg);
}

static int looks_of_wait(int (*step)(void *arg), double ready_s)
{
    timed_wait_t w = {.ready_at = now() + ready_s};
    ddl_wait_how_t how = {"the test step", 5, NULL, NULL, NULL};
    ck_assert_int_eq(ddl_wait_until(&how, step, &w), DDL_OK);
    return w.looks;
}

/* A wait 2 ms long spins its first 250 us (a look is well under a
 * microsecond here: hundreds of looks), and naps after that, at least 20 us
 * at a time (at most a hundred looks in 2 ms).  The next wait at the same
 * place naps from its start; a wait at another place spins; and once a wait
 * at the place ended sooner than 1 ms, the next one spins again. */
#define LONG_WAIT_S 0.002
#define NAPPING_LOOKS 110 /* 2 ms / 20 us, and a few */
START_TEST(test_poll_naps_where_waits_were_long)
{
    /* A long wait whose thread lost the core before its first reading of
     * the clock measures itself short (a loaded host: the sanitizers'
     * suite beside another build): up to three tries. */
    int napping = NAPPING_LOOKS + 1;
    for (int try = 0; try < 3 && napping > NAPPING_LOOKS; try++) {
        (void)looks_of_wait(ready_one, LONG_WAIT_S);
        napping = looks_of_wait(ready_one, LONG_WAIT_S);
    }
    ck_assert_msg(napping <= NAPPING_LOOKS, "a wait after a long one looked %d times in %.0f ms: "
                  "it spun", napping, LONG_WAIT_S * 1e3);
    int elsewhere = looks_of_wait(ready_two, LONG_WAIT_S);
    ck_assert_msg(elsewhere > NAPPING_LOOKS, "a first wait at another place looked only %d times: it did not spin",
                  elsewhere);
    (void)looks_of_wait(ready_one, 50e-6);
    int again = looks_of_wait(ready_one, LONG_WAIT_S);
    ck_assert_msg(again > NAPPING_LOOKS, "a wait after a short one looked only %d times: it did not spin", again);
}
END_TEST

/* Collective mode: an owner's record of each call (how it ended, the size
 * class it taught online selection) reaches its helper for every call, in
 * order, however far the helper falls behind: past three quarters of the
 * record the owner waits for it.  The helper here naps twice for 50 ms
 * (the owner meanwhile rings on, and must stop) and reads every record
 * exactly; the owner runs three times around the record. */
#define RECORDED_CALLS (3 * DDL_NODE_CALLS)
#define AHEAD_CALL (DDL_NODE_CALLS / 4) /* where the owner looks how far its helpers lag */
static int record_class(uint32_t call) { return (int)(call % 67) - 1; } /* -1 to 65 */
static ddl_status_t record_status(uint32_t call) { return call % 5 ? DDL_OK : DDL_ERR_MISMATCH; }

static void recording_rank(ddl_ctrl_t *ctrl, int rank, int *bad)
{
    static const int world[2] = {0, 1};
    ddl_node_t n = {.ctrl = ctrl, .local_rank = rank, .local_size = 2, .timeout = 10, .world_of_local = world,
                    .host = "test"};
    ctrl->slots[rank].pid = (int32_t)getpid();
    ck_assert_int_eq(ddl_node_barrier(&n, "test: start"), DDL_OK);
    for (uint32_t call = 1; call <= RECORDED_CALLS; call++) {
        ddl_sig_t sig = {.count = 1, .seq = call};
        ddl_node_publish(&n, &sig, call, 0); /* as every call does first */
        if (rank == 0) {
            /* After a lane call the helper may show its next call before the
             * owner has counted this one: it is ahead, not behind. */
            while (call == AHEAD_CALL && !(atomic_load(&ctrl->slots[1].box[(call + 1) & 1].seq) == call + 1))
                ;
            ck_assert_int_eq(ddl_node_ring_outcome(&n, record_status(call), record_class(call), 1), DDL_OK);
            continue;
        }
        if (call == AHEAD_CALL) {
            sig.seq = call + 1;
            ddl_node_publish(&n, &sig, call + 1, 0);
        }
        if (call == 100 || call == DDL_NODE_CALLS + 100)
            nanosleep(&(struct timespec){0, 50000000}, NULL);
        ddl_status_t ended;
        int cls;
        ck_assert_int_eq(ddl_node_wait_count(&n, 0, call), DDL_OK);
        if (ddl_node_outcome(&n, 0, call, &ended, &cls) != DDL_OK || ended != record_status(call) ||
            cls != record_class(call))
            (*bad)++;
    }
}

START_TEST(test_owner_records_reach_a_lagging_helper)
{
    ddl_ctrl_t *ctrl = mmap(NULL, ddl_node_ctrl_size(2), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int *bad = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert(ctrl != MAP_FAILED && bad != MAP_FAILED);
    ddl_node_ctrl_init(ctrl, 2);
    *bad = 0;
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        recording_rank(ctrl, 1, bad);
        _exit(0);
    }
    recording_rank(ctrl, 0, bad);
    int status;
    waitpid(pid, &status, 0);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the helper failed");
    ck_assert_msg(*bad == 0, "%d of %d records read wrong or lost", *bad, RECORDED_CALLS);
    munmap(bad, sizeof(int));
    munmap(ctrl, ddl_node_ctrl_size(2));
}
END_TEST

/* A helper whose owner never reaches its call returns within the deadline
 * (and its grace), naming the owner and the call. */
START_TEST(test_helper_waits_for_its_owner_with_a_deadline)
{
    static const int world[2] = {7, 0};
    ddl_ctrl_t *ctrl = mmap(NULL, ddl_node_ctrl_size(2), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert(ctrl != MAP_FAILED);
    ddl_node_ctrl_init(ctrl, 2);
    ddl_node_t n = {.ctrl = ctrl, .local_rank = 1, .local_size = 2, .timeout = 0.2, .world_of_local = world,
                    .host = "test"};
    ctrl->slots[0].pid = ctrl->slots[1].pid = (int32_t)getpid();
    double t0 = now();
    ddl_status_t st = ddl_node_wait_count(&n, 0, 3);
    double took = now() - t0;
    ck_assert_int_eq(st, DDL_ERR_TIMED_OUT);
    ck_assert_msg(took < 0.2 + 0.05 + 0.2, "the wait took %.2f s (deadline 0.2 s, grace 0.05 s)", took);
    ck_assert_msg(strstr(ddl_last_error(), "rank 7") && strstr(ddl_last_error(), "call 3"),
                  "the message does not name the owner and the call: %s", ddl_last_error());
    munmap(ctrl, ddl_node_ctrl_size(2));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("node");
    TCase *tc = tcase_create("node");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_sleeper_wakes);
    tcase_add_test(tc, test_progress_while_waiting);
    tcase_add_test(tc, test_poll_naps_where_waits_were_long);
    tcase_add_test(tc, test_owner_records_reach_a_lagging_helper);
    tcase_add_test(tc, test_helper_waits_for_its_owner_with_a_deadline);
    suite_add_tcase(s, tc);
    return ddl_unit_run(s);
}
