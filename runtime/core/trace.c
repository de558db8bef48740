/* SPDX-License-Identifier: Apache-2.0 */
/* Trace events (trace.h). */
#include "config.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "node.h"
#include "params.h"
#include "trace.h"

_Atomic bool ddl_trace_on;

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *trace_file;
static int trace_rank, trace_events;
/* Wall clock minus ddl_now(): events carry wall-clock microseconds, which
 * line up across nodes as well as their clocks agree. */
static double trace_offset;
static _Thread_local const char *thread_name;
static _Thread_local int thread_named;

/* With the lock held. */
static void put(const char *event)
{
    fprintf(trace_file, "%s%s", trace_events++ ? ",\n" : "[\n", event);
}

void ddl_trace_open(int rank, int node, int gpu, int lane, bool owner)
{
    const char *pattern = ddl_param_string("DDL_TRACE");
    pthread_mutex_lock(&trace_lock);
    if (trace_file || !pattern[0]) {
        pthread_mutex_unlock(&trace_lock);
        return;
    }
    char host[256] = "", path[PATH_MAX];
    gethostname(host, sizeof(host) - 1);
    FILE *f = NULL;
    if (ddl_log_expand_path(pattern, host, (int)getpid(), rank, path, sizeof(path)) != 0)
        ddl_log(DDL_LOG_WARN, DDL_SUBSYS_ALL, "DDL_TRACE=%s is too long once %%r, %%h and %%p are filled in; "
                "not tracing", pattern);
    else if (!(f = fopen(path, "w")))
        ddl_log(DDL_LOG_WARN, DDL_SUBSYS_ALL, "cannot write the trace DDL_TRACE=%s (%s); not tracing", pattern, path);
    if (f) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        trace_offset = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec - ddl_now();
        trace_file = f;
        trace_rank = rank;
        char event[256];
        snprintf(event, sizeof(event), "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0, "
                 "\"args\": {\"name\": \"rank %d: node %d GPU %d lane %d (%s)\"}}", rank, rank, node, gpu, lane,
                 owner ? "owner" : "helper");
        put(event);
        snprintf(event, sizeof(event), "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0, "
                 "\"args\": {\"sort_index\": %d}}", rank, rank);
        put(event);
        atexit(ddl_trace_close);
        ddl_trace_on = true;
    }
    pthread_mutex_unlock(&trace_lock);
}

void ddl_trace_thread(const char *name) { thread_name = name; }

void ddl_trace_event(const char *name, double start, double end, const char *args)
{
    if (!ddl_trace_on)
        return;
    int tid = (int)syscall(SYS_gettid);
    char event[768];
    pthread_mutex_lock(&trace_lock);
    if (trace_file) {
        if (!thread_named) {
            snprintf(event, sizeof(event), "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": %d, "
                     "\"args\": {\"name\": \"%s\"}}", trace_rank, tid, thread_name ? thread_name : "caller");
            put(event);
            thread_named = 1;
        }
        snprintf(event, sizeof(event), "{\"name\": \"%s\", \"cat\": \"ddl\", \"ph\": \"X\", \"ts\": %.3f, "
                 "\"dur\": %.3f, \"pid\": %d, \"tid\": %d, \"args\": {%s}}", name, (start + trace_offset) * 1e6,
                 (end > start ? end - start : 0) * 1e6, trace_rank, tid, args ? args : "");
        put(event);
    }
    pthread_mutex_unlock(&trace_lock);
}

void ddl_trace_close(void)
{
    pthread_mutex_lock(&trace_lock);
    if (trace_file) {
        ddl_trace_on = false;
        fputs(trace_events ? "\n]\n" : "[]\n", trace_file);
        fclose(trace_file);
        trace_file = NULL;
    }
    pthread_mutex_unlock(&trace_lock);
}
