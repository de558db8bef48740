/* SPDX-License-Identifier: Apache-2.0 */
/* A test's own deadline for every step, on top of the runtime's: a step that
 * never returns (a CUDA call without a deadline, a wait the runtime forgot to
 * bound) ends the job with the step named, instead of running until the
 * harness kills it without a word. */
#ifndef DDL_WATCHDOG_H
#define DDL_WATCHDOG_H

/* Starts the watchdog thread of this rank: a step that makes no progress for
 * DDL_TEST_STEP_LIMIT seconds (default twice DDL_TIMEOUT plus 30 s, so that
 * the runtime's own timeouts report first) prints its name and aborts the job. */
void ddl_watchdog_start(int rank);
/* The step this rank begins now, printf-style; it also counts as progress. */
void ddl_watchdog_step(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
