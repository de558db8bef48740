/* SPDX-License-Identifier: Apache-2.0 */
/* The deadline of the blocking system MPI collectives (mpi_watch.h). */
#include "config.h"

#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "mpi_watch.h"
#include "poll.h"

struct ddl_mpi_watch {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t stop_cond;
    int stop;                  /* under lock */
    _Atomic double since;      /* ddl_now() when the current call began; 0: none */
    const char *_Atomic what;  /* its name */
    double timeout;            /* DDL_TIMEOUT */
    int rank;                  /* for the message */
    MPI_Comm world;            /* what MPI_Abort ends */
};

/* Looks about four times per deadline, at most twice a second: a call is
 * ended within a quarter of DDL_TIMEOUT after it. */
static void *watch_main(void *arg)
{
    struct ddl_mpi_watch *w = arg;
    double slice = fmin(w->timeout / 4, 0.5);
    pthread_mutex_lock(&w->lock);
    while (!w->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        double end = (double)until.tv_sec + until.tv_nsec * 1e-9 + slice;
        until.tv_sec = (time_t)end;
        until.tv_nsec = (long)((end - (double)until.tv_sec) * 1e9);
        pthread_cond_timedwait(&w->stop_cond, &w->lock, &until);
        double since = atomic_load(&w->since);
        if (w->stop || since == 0 || ddl_now() - since <= w->timeout)
            continue;
        char what[96];
        snprintf(what, sizeof(what), "the system %s", atomic_load(&w->what));
        ddl_timed_out(what, w->timeout, "a peer that has stopped inside it, or gave up on the call after agreeing to it",
                      "MPI cannot leave a collective, so the job ends here (MPI_Abort)");
        fprintf(stderr, "ddl: rank %d: %s\n", w->rank, ddl_last_error());
        fflush(stderr);
        /* From this thread whatever the thread level: the job ends, and an
         * abort is what every MPI takes from any thread in practice. */
        MPI_Abort(w->world, 1);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* The thread, once per communicator; NULL where it cannot start (then the
 * calls go unwatched, as before, and a warning says so once). */
static struct ddl_mpi_watch *watch_of(ddl_comm_t *c)
{
    if (c->mpi_watch || c->mpi_watch_failed)
        return c->mpi_watch;
    struct ddl_mpi_watch *w = calloc(1, sizeof(*w));
    if (!w) {
        c->mpi_watch_failed = true;
        return NULL;
    }
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->stop_cond, NULL);
    w->timeout = c->set.timeout;
    w->rank = c->info.rank;
    w->world = c->world;
    sigset_t all, old; /* signals stay with the application's threads */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&w->thread, NULL, watch_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        DDL_LOG(DDL_LOG_WARN, DDL_SUBSYS_COLL, "cannot start the watch of the system MPI's collectives: a peer that "
                "fails inside one may hang this rank");
        pthread_cond_destroy(&w->stop_cond);
        pthread_mutex_destroy(&w->lock);
        free(w);
        c->mpi_watch_failed = true;
        return NULL;
    }
    return c->mpi_watch = w;
}

void ddl_mpi_watch_enter(ddl_comm_t *c, const char *what)
{
    struct ddl_mpi_watch *w = watch_of(c);
    if (!w)
        return;
    atomic_store(&w->what, what);
    atomic_store(&w->since, ddl_now());
}

void ddl_mpi_watch_leave(ddl_comm_t *c)
{
    if (c->mpi_watch)
        atomic_store(&c->mpi_watch->since, 0.0);
}

void ddl_mpi_watch_stop(ddl_comm_t *c)
{
    struct ddl_mpi_watch *w = c->mpi_watch;
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->stop = 1;
    pthread_cond_signal(&w->stop_cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->stop_cond);
    pthread_mutex_destroy(&w->lock);
    free(w);
    c->mpi_watch = NULL;
}
