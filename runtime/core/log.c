/* SPDX-License-Identifier: Apache-2.0 */
/* Logging and the thread's last error (log.h).  Uses the settings' parsers. */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "ddl.h"
#include "log.h"
#include "parse.h"

static ddl_log_level_t log_level = DDL_LOG_WARN;
static unsigned log_subsys = DDL_SUBSYS_ALL;
static FILE *log_file;
static bool log_ready;
static int log_rank = -1;
static char log_host[64];
static _Thread_local char last_error[512];
static bool log_timestamps, log_version_once;
/* Where the settings come from (ddl_log_lookup): the environment until the
 * settings' table hands over its own lookup. */
static const char *environment(const char *name)
{
    return getenv(name);
}
static const char *(*log_lookup)(const char *name) = environment;

void ddl_log_lookup(const char *(*lookup)(const char *name))
{
    log_lookup = lookup;
    log_ready = false; /* read again at the next use: PowerAI's -dbg_level after an earlier error's line */
}

/* A setting's value; NULL where it is unset or empty (log's defaults hold). */
static const char *setting(const char *name)
{
    const char *v = log_lookup(name);
    return v && *v ? v : NULL;
}

static const char *const level_names[] = {"NONE", "WARN", "INFO", "TRACE", NULL};
static const struct {
    const char *name;
    unsigned bit;
} subsys_names[] = {
    {"INIT", DDL_SUBSYS_INIT}, {"COLL", DDL_SUBSYS_COLL}, {"SHM", DDL_SUBSYS_SHM},
    {"NET", DDL_SUBSYS_NET},   {"ENV", DDL_SUBSYS_ENV},   {"ALL", DDL_SUBSYS_ALL},
};

/* "INIT,COLL" or "^SHM" (everything but SHM), as NCCL_DEBUG_SUBSYS reads. */
static unsigned parse_subsys(const char *s)
{
    bool invert = (s[0] == '^');
    unsigned mask = 0;
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", invert ? s + 1 : s);
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        for (size_t i = 0; i < sizeof(subsys_names) / sizeof(subsys_names[0]); i++)
            if (strcasecmp(tok, subsys_names[i].name) == 0)
                mask |= subsys_names[i].bit;
    }
    return invert ? (DDL_SUBSYS_ALL & ~mask) : mask;
}

int ddl_log_expand_path(const char *path, const char *host, int pid, int rank, char *out, size_t len)
{
    size_t o = 0;
    for (const char *p = path; *p; p++) {
        char num[16];
        const char *put = NULL;
        if (p[0] == '%' && (p[1] == 'h' || p[1] == 'p' || p[1] == 'r')) {
            snprintf(num, sizeof(num), "%d", p[1] == 'p' ? pid : rank);
            put = *++p == 'h' ? host : num;
        }
        size_t n = put ? strlen(put) : 1;
        if (n >= len - o) /* and room for the NUL */
            return -1;
        memcpy(out + o, put ? put : p, n);
        o += n;
    }
    out[o] = '\0';
    return 0;
}

static int expand_log_path(const char *path, char *out, size_t len)
{
    return ddl_log_expand_path(path, log_host, (int)getpid(), log_rank, out, len);
}

void ddl_log_init(int rank)
{
    log_rank = rank;
    if (log_ready)
        return;
    log_ready = true;
    gethostname(log_host, sizeof(log_host) - 1);
    if (log_file && log_file != stderr)
        fclose(log_file); /* read again (ddl_log_lookup): DDL_DEBUG_FILE is opened anew */
    log_file = stderr;
    const char *level = setting("DDL_DEBUG"), *stamp_text = setting("DDL_DEBUG_TIMESTAMP");
    const char *subsys = setting("DDL_DEBUG_SUBSYS"), *path = setting("DDL_DEBUG_FILE");
    int idx, version = level && strcasecmp(level, "VERSION") == 0, stamp = 0;
    if (!level || version)
        log_level = DDL_LOG_WARN;
    else if (ddl_parse_enum(level, level_names, &idx) == 0)
        log_level = (ddl_log_level_t)idx;
    else
        fprintf(stderr, "ddl: DDL_DEBUG=%s is not one of NONE, VERSION, WARN, INFO, TRACE; using WARN\n", level);
    if (stamp_text && ddl_parse_bool(stamp_text, &stamp) == 0)
        log_timestamps = stamp;
    log_version_once = version || log_level >= DDL_LOG_INFO;
    if (subsys)
        log_subsys = parse_subsys(subsys);
    if (path) {
        /* %h and %p make one file per host and process. */
        char name[PATH_MAX];
        if (expand_log_path(path, name, sizeof(name)) != 0) {
            fprintf(stderr, "ddl: DDL_DEBUG_FILE=%s is longer than %zu bytes once %%h and %%p are filled in; "
                    "logging to stderr\n", path, sizeof(name) - 1);
            return;
        }
        FILE *f = fopen(name, "a");
        if (f) {
            setvbuf(f, NULL, _IOLBF, 0);
            log_file = f;
        } else {
            fprintf(stderr, "ddl: cannot open DDL_DEBUG_FILE=%s; logging to stderr\n", name);
        }
    }
}

bool ddl_log_enabled(ddl_log_level_t level, unsigned subsys)
{
    if (!log_ready)
        ddl_log_init(log_rank);
    return level <= log_level && (subsys & log_subsys) != 0;
}

/* One line: [time] host:pid:rank DDL LEVEL message. */
static void log_line(const char *level_name, const char *msg)
{
    char stamp[40] = "";
    if (log_timestamps) {
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        size_t n = strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(stamp + n, sizeof(stamp) - n, ".%03ldZ ", ts.tv_nsec / 1000000);
    }
    /* One fprintf per line so lines of concurrent ranks do not interleave. */
    fprintf(log_file ? log_file : stderr, "%s%s:%d:%d DDL %s %s\n", stamp, log_host, (int)getpid(), log_rank,
            level_name, msg);
}

static void log_vprint(ddl_log_level_t level, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    log_line(level_names[level], msg);
}

/* DDL_DEBUG=VERSION (and INFO, TRACE): the library's version, once per process,
 * when the first communicator knows this rank. */
void ddl_log_version(void)
{
    if (!log_ready)
        ddl_log_init(log_rank);
    if (!log_version_once)
        return;
    log_version_once = false;
    log_line("VERSION", "DDL lanes " DDL_VERSION_STRING);
}

void ddl_log(ddl_log_level_t level, unsigned subsys, const char *fmt, ...)
{
    (void)subsys;
    va_list ap;
    va_start(ap, fmt);
    log_vprint(level, fmt, ap);
    va_end(ap);
}

/* Formatted aside first: an argument may be ddl_last_error() itself. */
static void record(const char *fmt, va_list ap)
{
    char msg[sizeof(last_error)];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    memcpy(last_error, msg, sizeof(msg));
}

ddl_status_t ddl_error(ddl_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(fmt, ap);
    va_end(ap);
    /* The caller gets it (the status, ddl_last_error) and reports it: the tools
     * print it, the Python binding raises it.  Logged here at INFO only, so that
     * an error is printed once; DDL_DEBUG=INFO shows where each arose. */
    if (ddl_log_enabled(DDL_LOG_INFO, DDL_SUBSYS_ALL))
        ddl_log(DDL_LOG_INFO, DDL_SUBSYS_ALL, "%s: %s", ddl_status_string(status), last_error);
    return status;
}

int ddl_report(int status)
{
    if (status < 0 && ddl_log_enabled(DDL_LOG_WARN, DDL_SUBSYS_ALL))
        ddl_log(DDL_LOG_WARN, DDL_SUBSYS_ALL, "%s: %s", ddl_status_string((ddl_status_t)status), last_error);
    return status;
}

ddl_status_t ddl_fail(ddl_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(fmt, ap);
    va_end(ap);
    return status;
}

const char *ddl_last_error(void) { return last_error; }

void ddl_log_keep_error(const char *msg) { snprintf(last_error, sizeof(last_error), "%s", msg); }
