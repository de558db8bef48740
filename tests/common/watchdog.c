/* SPDX-License-Identifier: Apache-2.0 */
#include "watchdog.h"

#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char step[256] = "starting";
static atomic_ulong steps;
static double limit;
static int my_rank;

static void *watch(void *arg)
{
    (void)arg;
    unsigned long seen = atomic_load(&steps);
    double still = 0;
    for (;;) {
        sleep(1);
        unsigned long now = atomic_load(&steps);
        still = now == seen ? still + 1 : 0;
        seen = now;
        if (still < limit)
            continue;
        pthread_mutex_lock(&lock);
        fprintf(stderr, "FAIL rank %d: no progress for %.0f s (DDL_TEST_STEP_LIMIT) in: %s\n", my_rank, still, step);
        pthread_mutex_unlock(&lock);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return NULL;
}

void ddl_watchdog_start(int rank)
{
    const char *lim = getenv("DDL_TEST_STEP_LIMIT"), *timeout = getenv("DDL_TIMEOUT");
    limit = lim ? atof(lim) : 2 * (timeout ? atof(timeout) : 300) + 30;
    my_rank = rank;
    pthread_t t;
    if (limit > 0 && pthread_create(&t, NULL, watch, NULL) == 0)
        pthread_detach(t);
}

void ddl_watchdog_step(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&lock);
    vsnprintf(step, sizeof(step), fmt, ap);
    pthread_mutex_unlock(&lock);
    va_end(ap);
    atomic_fetch_add(&steps, 1);
}
