/* SPDX-License-Identifier: Apache-2.0 */
/* Logging by level and subsystem (DDL_DEBUG, DDL_DEBUG_SUBSYS, DDL_DEBUG_FILE) and
 * the thread's last error, which every failing entry point records. */
#ifndef DDL_LOG_H
#define DDL_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include "ddl.h"

typedef enum { DDL_LOG_NONE = 0, DDL_LOG_WARN, DDL_LOG_INFO, DDL_LOG_TRACE } ddl_log_level_t;

typedef enum {
    DDL_SUBSYS_INIT = 1u << 0,  /* communicator set-up, lane map */
    DDL_SUBSYS_COLL = 1u << 1,  /* collectives and algorithm choice */
    DDL_SUBSYS_SHM = 1u << 2,   /* shared memory and node synchronisation */
    DDL_SUBSYS_NET = 1u << 3,   /* inter-node transfers */
    DDL_SUBSYS_ENV = 1u << 4,   /* configuration variables */
    DDL_SUBSYS_ALL = 0xffffu,
} ddl_subsys_t;

/* DDL_DEBUG_FILE's and DDL_TRACE's %h (host), %p (pid) and %r (rank) filled
 * in; -1 when out (len bytes) is too small. */
int ddl_log_expand_path(const char *path, const char *host, int pid, int rank, char *out, size_t len);
/* Reads DDL_DEBUG* once; later calls only update the rank shown in the prefix. */
void ddl_log_init(int rank);
/* Where ddl_log_init reads DDL_DEBUG*: the environment (getenv) until the
 * settings' table (params.c) hands over its lookup, which adds the values
 * PowerAI's options set.  log reads no setting of its own accord: it is
 * below the settings, which log their own errors. */
void ddl_log_lookup(const char *(*lookup)(const char *name));
/* The version line of DDL_DEBUG=VERSION, INFO and TRACE: once per process. */
void ddl_log_version(void);
bool ddl_log_enabled(ddl_log_level_t level, unsigned subsys);
void ddl_log(ddl_log_level_t level, unsigned subsys, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The runtime's one error convention: a function that fails returns a
 * negative ddl_status_t, and the thread's last error (ddl_last_error) says
 * why.  ddl_error records the message, logs it at INFO (the caller reports it:
 * printed once) and returns status; ddl_fail only records it, for parsers and
 * helpers whose caller adds context, e.g.
 * ddl_error(st, "tuning file %s, %s", path, ddl_last_error()). */
ddl_status_t ddl_error(ddl_status_t status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
ddl_status_t ddl_fail(ddl_status_t status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Make msg the thread's last error again (after a later error replaced it), without logging it. */
void ddl_log_keep_error(const char *msg);
/* For APIs whose callers cannot read ddl_last_error (PowerAI DDL's): log a
 * failed status (< 0) with its message at WARN; returns status. */
int ddl_report(int status);

#define DDL_LOG(level, subsys, ...)                                                                \
    do {                                                                                           \
        if (ddl_log_enabled(level, subsys))                                                        \
            ddl_log(level, subsys, __VA_ARGS__);                                                   \
    } while (0)
#define DDL_INFO(subsys, ...) DDL_LOG(DDL_LOG_INFO, subsys, __VA_ARGS__)
#define DDL_TRACE(subsys, ...) DDL_LOG(DDL_LOG_TRACE, subsys, __VA_ARGS__)

/* Check-and-goto: one cleanup label per function. */
#define DDL_CHECK_GOTO(expr, status, label)                                                        \
    do {                                                                                           \
        (status) = (expr);                                                                         \
        if ((status) != DDL_OK)                                                                    \
            goto label;                                                                            \
    } while (0)

#endif
