/* SPDX-License-Identifier: Apache-2.0 */
/* The runtime's one clock (clock.h). */
#include "config.h"

#include <time.h>

#include "clock.h"

double ddl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
