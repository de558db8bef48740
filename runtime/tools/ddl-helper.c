/* SPDX-License-Identifier: Apache-2.0 */
/* ddl-helper: what a helper rank runs when the application knows nothing of
 * lanes.  It joins the communicator that the owners create on MPI_COMM_WORLD
 * (in serve mode) and serves until they destroy it. */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ddl.h"
#include "parse.h"
#include "procstat.h"
#include "tool.h"

/* Under the plugin the helper follows its owner (DDL_OWNER_PID, DDL_OWNER_START):
 * when the owner's task ends, so does the helper, with status 0 so that the
 * step's exit code is the owner's.  That covers a program that never uses DDL
 * (the helper may still be in MPI_Init), one that exits without destroying its
 * communicator, and an owner that crashed. */
static pid_t owner_pid;
static unsigned long long owner_start;
static atomic_int serving; /* inside a live communicator */

static void *watch_owner(void *arg)
{
    (void)arg;
    const struct timespec tick = {0, 50 * 1000 * 1000};
    while (ddl_process_alive(owner_pid, owner_start))
        nanosleep(&tick, NULL);
    if (atomic_load(&serving))
        fprintf(stderr, "ddl-helper: the owner of this GPU (pid %ld) ended while its ddl communicator was open; "
                "leaving\n", (long)owner_pid);
    _exit(0);
    return NULL;
}

/* Returns 1 when an owner is watched, 0 when there is none to watch (not
 * launched by the plugin); exits at once when the owner has already ended. */
static int follow_owner(void)
{
    const char *p = getenv("DDL_OWNER_PID"), *s = getenv("DDL_OWNER_START");
    long pid;
    if (!p || !s || ddl_parse_long(p, 0, INT_MAX, &pid) != 0)
        return 0;
    owner_pid = (pid_t)pid;
    owner_start = strtoull(s, NULL, 10);
    if (pid == 0 || !ddl_process_alive(owner_pid, owner_start))
        _exit(0);
    pthread_t t;
    if (pthread_create(&t, NULL, watch_owner, NULL) != 0)
        return 0;
    pthread_detach(t);
    return 1;
}

/* After its owner's collective failed, a helper that follows its owner gives
 * the owner this long to see the error (a torch program gets it as an
 * exception, and may print it, save its state, or end) before it ends the
 * job: an abort at once raced the owner's own report, and waiting for good
 * would hold the step open if the owner's MPI_Finalize waits for this rank.
 * The owner's end ends the helper sooner, with status 0 (watch_owner). */
#define OWNER_GRACE_S 10

/* The owners never created a communicator: the application does not use DDL
 * (or is not an MPI program).  Leave instead of holding the step open. */
static void no_owners(int sig)
{
    (void)sig;
    static const char msg[] = "ddl-helper: the owners did not create a ddl communicator within DDL_TIMEOUT; "
                              "does the application call ddl_comm_create with DDL_HELPERS=serve? Exiting.\n";
    if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
    }
    _exit(4);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: ddl-helper\n"
               "Run on helper ranks (lane > 0) beside an application whose owners create a ddl\n"
               "communicator on MPI_COMM_WORLD with DDL_HELPERS=serve; configuration comes from\n"
               "the same DDL_* environment as the application's.\n");
}

int main(int argc, char **argv)
{
    /* Under the plugin (DDL_ROLE set) the helper runs in place of the application
     * and gets the application's arguments: they are not ours to read. */
    if (argc > 1 && !getenv("DDL_ROLE")) {
        if (ddl_tool_info(argc, argv, "ddl-helper", usage))
            return 0;
        usage(stderr);
        return 2;
    }
    /* Until the communicator exists no DDL wait is running: bound it here. */
    const char *t = getenv("DDL_TIMEOUT");
    double seconds = 300;
    if (t && *t && ddl_parse_seconds(t, &seconds) != 0) {
        fprintf(stderr, "ddl-helper: DDL_TIMEOUT=%s is not a positive number of seconds; unset it for the default "
                "(300) or give a valid value\n", t);
        return 2;
    }
    /* A helper that follows its owner waits as long as the owner runs (a long
     * step that does not use DDL must not fail); otherwise the wait is bounded. */
    int watched = follow_owner();
    if (!watched) {
        unsigned timeout = (unsigned)ddl_double_to_ll(ceil(seconds), 1, UINT_MAX);
        signal(SIGALRM, no_owners);
        alarm(timeout);
    }
    MPI_Init(&argc, &argv);
    ddl_config_t cfg;
    ddl_comm_t *comm = NULL;
    /* A PowerAI DDL program's owners apply DDL_OPTIONS in ddl_init: so do its helpers. */
    const char *options = getenv("DDL_OPTIONS");
    ddl_status_t st = options ? ddl_options_apply(options, NULL) : DDL_OK;
    if (st == DDL_OK)
        st = ddl_config_init(&cfg);
    cfg.helper_mode = DDL_HELPERS_SERVE;
    if (st == DDL_OK)
        st = ddl_comm_create(MPI_COMM_WORLD, &cfg, &comm);
    if (st != DDL_OK) {
        fprintf(stderr, "ddl-helper: cannot join the communicator: %s: %s\n", ddl_status_string(st), ddl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    alarm(0);
    ddl_comm_info_t info;
    ddl_comm_info(comm, &info);
    if (info.role != DDL_ROLE_HELPER) {
        fprintf(stderr, "ddl-helper: rank %d is the owner of GPU %d on node %d; owners run the application, "
                "only lanes 1..%d run ddl-helper\n", info.rank, info.gpu, info.node, info.lanes - 1);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    atomic_store(&serving, 1);
    st = ddl_serve(comm);
    if (st != DDL_OK) {
        fprintf(stderr, "ddl-helper: rank %d: %s: %s\n", info.rank, ddl_status_string(st), ddl_last_error());
        if (watched) {
            atomic_store(&serving, 0); /* its owner's end is no news now */
            fflush(stderr);
            sleep(OWNER_GRACE_S);
        }
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    ddl_comm_destroy(comm);
    atomic_store(&serving, 0);
    MPI_Finalize();
    return 0;
}
