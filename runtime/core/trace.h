/* SPDX-License-Identifier: Apache-2.0 */
/* DDL_TRACE=path: when each call and each of its phases ran, as Chrome /
 * Perfetto trace events (the JSON array format), one file per process (%r is
 * the rank, %h the host, %p the pid).  Each rank is a process track (pid =
 * rank); its caller and progress threads are threads.  ddl-trace-merge joins
 * the ranks' files into one. */
#ifndef DDL_TRACE_H
#define DDL_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>

/* True once a DDL_TRACE file is open: callers skip their stamps otherwise.
 * Atomic: the progress thread reads it while exit closes the file. */
extern _Atomic bool ddl_trace_on;

/* Opens the file for this process (the first communicator; later calls do
 * nothing) and names the rank's track.  A path that cannot be opened is a
 * warning, not an error: the job runs untraced. */
void ddl_trace_open(int rank, int node, int gpu, int lane, bool owner);
/* Names the calling thread's track (default "caller"). */
void ddl_trace_thread(const char *name);
/* One complete event from ddl_now() start to end (seconds); args is the
 * inside of a JSON object ("\"count\": 5, \"dim\": 1") or NULL. */
void ddl_trace_event(const char *name, double start, double end, const char *args);
/* Ends the file (also at exit). */
void ddl_trace_close(void);

#endif
