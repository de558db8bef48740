/* SPDX-License-Identifier: Apache-2.0 */
/* Waiting with a deadline (poll.h): the one poll loop of the runtime, and its
 * step for MPI requests. */
#include "config.h"

#include <stdio.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "poll.h"

/* Spin for the first POLL_SPIN_S of a wait: short waits end without a sleep.
 * After that the poller sleeps between looks, for an eighth of the time waited
 * so far (at most POLL_SLEEP_MAX_S), so a wait ends at most about 12% late
 * while a long one (a chunk on a slow link) leaves the core to the ranks that
 * compute: on a node with fewer cores than processes a spinning poller would
 * take a core's share from the training.  While spinning the clock is read
 * every POLL_CLOCK_LOOKS looks, and after every look once it naps.  Not
 * every look: a small call between ranks of one host waits about half a
 * microsecond for its message, a look there is a tenth of that, and a clock
 * read is a third of a look (measured between 2 virtual nodes: 0.05 us of a
 * 0.6 us exchange).  Not many more: a look is an MPI_Testall or a CUDA query
 * (a system call, microseconds on a loaded host), and counting 1024 looks
 * kept the pollers spinning for tens of milliseconds, both of this host's
 * cores busy during a 64 MiB allreduce on the emulated rails. */
#define POLL_SPIN_S 250e-6
#define POLL_SLEEP_MAX_S 500e-6
#define POLL_CLOCK_LOOKS 16

/* A wait like the last one at its place that lasted POLL_LONG_S or more (a
 * chunk on a slow link, a large MPI_Iallreduce) will most likely last as
 * long again: it naps from its first look on, reading the clock at every
 * look.  Spinning there only burns the core (measured on the emulated rails:
 * a run of 4 MiB allreduces kept the host busy for 10.8-12.3 CPU seconds
 * with the spin before every wait, 9.8-11.7 without it where the last wait
 * was long, in the same time), and on a node with fewer cores than
 * processes that core is the training's.  Not from the spin's end on: a nap
 * lasts at least the timer's slack (50 us), which a wait of a few hundred
 * microseconds (a 64 KiB call on those rails) felt as 10-60% more time.  A
 * place is the wait's step function, per thread (a thread waits at a few);
 * the next wait there that ends sooner spins again.  A wait whose first
 * look finds it done does not look its place up. */
#define POLL_LONG_S 1e-3
#define POLL_PLACES 4
#define POLL_NAP_MIN_S 20e-6

static _Thread_local struct poll_place {
    int (*step)(void *arg);
    int was_long; /* the last wait here lasted POLL_LONG_S or more */
} poll_places[POLL_PLACES];
static _Thread_local unsigned poll_places_next;

static struct poll_place *poll_place_of(int (*step)(void *arg))
{
    for (int i = 0; i < POLL_PLACES; i++)
        if (poll_places[i].step == step)
            return &poll_places[i];
    struct poll_place *p = &poll_places[poll_places_next++ % POLL_PLACES];
    *p = (struct poll_place){.step = step};
    return p;
}

/* The loop under ddl_wait_until, without its message. */
static ddl_status_t poll_loop(int (*step)(void *arg), void *arg, double timeout, const _Atomic int32_t *abort)
{
    /* The clock starts at its first read, POLL_CLOCK_LOOKS looks in. */
    double start = -1, deadline = 0, spin = POLL_SPIN_S, now = 0;
    unsigned looks = 0;
    int napping = 0;
    struct poll_place *place = NULL;
    for (;;) {
        int rc = step(arg);
        if (rc == 1 || rc < 0) {
            if (place)
                place->was_long = start >= 0 && now - start >= POLL_LONG_S;
            return rc == 1 ? DDL_OK : (ddl_status_t)rc;
        }
        if (!place) {
            place = poll_place_of(step);
            if (place->was_long)
                napping = 1, spin = 0;
        }
        if (!napping && ++looks % POLL_CLOCK_LOOKS != 0)
            continue;
        now = ddl_now();
        if (start < 0) {
            start = now;
            deadline = now + timeout;
        }
        if (now > deadline)
            return DDL_ERR_TIMED_OUT;
        if (abort && atomic_load(abort))
            return DDL_ERR_PEER_FAILED;
        double waited = now - start;
        if (waited < spin)
            continue;
        napping = 1;
        double nap = waited / 8 < POLL_SLEEP_MAX_S ? waited / 8 : POLL_SLEEP_MAX_S;
        if (nap < POLL_NAP_MIN_S)
            nap = POLL_NAP_MIN_S; /* a wait that naps from its start */
        struct timespec ts = {0, (long)(nap * 1e9)};
        nanosleep(&ts, NULL);
    }
}

int ddl_mpi_done(void *arg)
{
    const ddl_mpi_wait_t *w = arg;
    int done = 0;
    return MPI_Testall(w->n, w->req, &done, w->status ? w->status : MPI_STATUSES_IGNORE) != MPI_SUCCESS ? DDL_ERR_MPI
                                                                                                  : done;
}

ddl_status_t ddl_timed_out(const char *what, double timeout, const char *whom, const char *why)
{
    int has_whom = whom && whom[0], has_why = why && why[0];
    return ddl_error(DDL_ERR_TIMED_OUT, "%s timed out after %.1f s (DDL_TIMEOUT)%s%s%s%s", what, timeout,
                     has_whom ? ", waiting for " : "", has_whom ? whom : "", has_why ? "; " : "", has_why ? why : "");
}

ddl_status_t ddl_wait_until(const ddl_wait_how_t *w, int (*step)(void *arg), void *arg)
{
    ddl_status_t st = poll_loop(step, arg, w->timeout, w->abort);
    if (st != DDL_ERR_TIMED_OUT || !w->what)
        return st;
    char whom[400] = "";
    if (w->waiting_for)
        w->waiting_for(arg, whom, sizeof(whom));
    return ddl_timed_out(w->what, w->timeout, whom, w->hint);
}
