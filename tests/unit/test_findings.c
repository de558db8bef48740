/* SPDX-License-Identifier: Apache-2.0 */
/* Each finding of the sanitizer and fuzzing audit, kept fixed: bounded log
 * file names, tuning files that are not regular text, out-of-range numbers,
 * grids whose size overflows, PowerAI option strings, size arithmetic that
 * would wrap, and shared-memory names (unpredictable, stale ones reaped). */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "grid.h"
#include "log.h"
#include "params.h"
#include "parse.h"
#include "powerai_options.h"
#include "shm.h"
#include "tuning.h"
#include "unit.h"

START_TEST(test_log_path_bounded)
{
    char out[32], host[200];
    memset(host, 'h', sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    ck_assert_int_eq(ddl_log_expand_path("/tmp/%h.log", host, 1, 5, out, sizeof(out)), -1);
    ck_assert_int_eq(ddl_log_expand_path("%p%p%p%p%p%p", "n", 1234567, 5, out, sizeof(out)), -1);
    ck_assert_int_eq(ddl_log_expand_path("/t/%h-%p.log", "node1", 42, 5, out, sizeof(out)), 0);
    ck_assert_str_eq(out, "/t/node1-42.log");
    ck_assert_int_eq(ddl_log_expand_path("/t/trace-%r.json", "node1", 42, 5, out, sizeof(out)), 0);
    ck_assert_str_eq(out, "/t/trace-5.json");
    /* Exactly full (31 characters and the NUL), and one more. */
    ck_assert_int_eq(ddl_log_expand_path("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "", 0, 5, out, sizeof(out)), 0);
    ck_assert_int_eq(ddl_log_expand_path("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "", 0, 5, out, sizeof(out)), -1);
    ck_assert_int_eq(ddl_log_expand_path("100%", "", 0, 5, out, sizeof(out)), 0);
    ck_assert_str_eq(out, "100%");
}
END_TEST

static char *write_temp(const char *text, size_t len)
{
    static char path[64];
    snprintf(path, sizeof(path), "/tmp/ddl-test-tuning-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
    return path;
}

START_TEST(test_tuning_not_text)
{
    static ddl_tuning_t t;
    const char *err = ddl_last_error();
    ck_assert_int_eq(ddl_tuning_load("/tmp", &t), DDL_ERR_INVALID_ARG);
    ck_assert_msg(strstr(err, "not a regular file (a directory)"), "%s", err);
    static const char nul[] = "0-inf lane\0\n64K-inf mpi\n";
    char *path = write_temp(nul, sizeof(nul) - 1);
    ck_assert_int_eq(ddl_tuning_load(path, &t), DDL_ERR_INVALID_ARG);
    ck_assert_msg(strstr(err, "NUL byte at offset 10"), "%s", err);
    unlink(path);
    static char big[70000];
    memset(big, '#', sizeof(big));
    path = write_temp(big, sizeof(big));
    ck_assert_int_eq(ddl_tuning_load(path, &t), DDL_ERR_INVALID_ARG);
    ck_assert_msg(strstr(err, "larger than 64 KiB"), "%s", err);
    unlink(path);
    ck_assert_int_eq(ddl_tuning_load("/nonexistent/tuning", &t), DDL_ERR_INVALID_ARG);
    ck_assert_msg(strstr(err, "cannot open") && strstr(err, "No such file"), "%s", err);
}
END_TEST

START_TEST(test_numbers_in_range)
{
    static ddl_tuning_t t;
    const char *err = ddl_last_error();
    ck_assert_int_eq(ddl_tuning_parse("link 0 latency_us=1e300 mbytes_per_s=100\n", &t), DDL_ERR_INVALID_ARG);
    ck_assert_msg(strstr(err, "line 1") && strstr(err, "1e-6 to 1e9"), "%s", err);
    ck_assert_int_eq(ddl_tuning_parse("reduce mbytes_per_s=1e-300\n", &t), DDL_ERR_INVALID_ARG);
    ck_assert_int_eq(ddl_tuning_parse("link 1 latency_us=1e9 mbytes_per_s=1e-6\n", &t), DDL_OK);
    (void)ddl_tuning_digest(&t); /* converts the extremes: UBSan watches */
    ck_assert_int_eq(ddl_double_to_ll(NAN, -3, 7), -3);
    ck_assert_int_eq(ddl_double_to_ll(INFINITY, -3, 7), 7);
    ck_assert_int_eq(ddl_double_to_ll(-1e300, -3, 7), -3);
    ck_assert_int_eq(ddl_double_to_ll(1e10, 1, INT_MAX), INT_MAX);
    ck_assert_int_eq(ddl_double_to_ll(4.9, 0, 10), 4);
}
END_TEST

START_TEST(test_grid_overflow)
{
    ddl_grid_t g;
    const char *err = ddl_last_error();
    ck_assert_int_eq(ddl_grid_parse("1x1048576x1048576x1048576x1048576x1048576x1048576x1048576", &g),
                     0);
    ck_assert_int_eq(ddl_grid_check(&g, 1, 4), DDL_ERR_LAYOUT);
    ck_assert_msg(strstr(err, "more than"), "%s", err);
    ck_assert_int_eq(ddl_grid_parse("1x1048577", &g), DDL_ERR_INVALID_ARG);
}
END_TEST

START_TEST(test_powerai_options)
{
    ddl_powerai_options_t o;
    setenv("DDL_DEBUG", "NONE", 1);
    ck_assert_int_eq(ddl_powerai_options_parse("-mode p:4x2 -dump_iter 10 -dbg_level 1", &o), DDL_OK);
    ck_assert_int_eq(o.mode, 'p');
    ck_assert_str_eq(o.grid, "4x2");
    ck_assert_int_eq(o.dump_iter, 10);
    ck_assert_int_eq(o.dbg_level, 1);
    ck_assert_int_eq(ddl_powerai_options_parse("-mode zzz:4x2", &o), DDL_ERR_INVALID_ARG);
    ck_assert_msg(strstr(ddl_last_error(), "mode 'zzz'"), "%s", ddl_last_error());
    ck_assert_int_eq(ddl_powerai_options_parse("-mode pp:4x2", &o), DDL_ERR_INVALID_ARG);
    /* A one-dimensional grid is one node. */
    ck_assert_int_eq(ddl_powerai_options_parse("-mode r:4", &o), DDL_OK);
    ck_assert_str_eq(o.grid, "4x1");
    ck_assert_int_eq(ddl_powerai_options_parse("-mode r:", &o), DDL_ERR_INVALID_ARG);
    ck_assert_int_eq(ddl_powerai_options_parse("-mode r:0", &o), DDL_ERR_INVALID_ARG);
    /* Long strings are refused, never cut: the option after 511 characters counts. */
    char longer[1200];
    snprintf(longer, sizeof(longer), "-dbg_level 1%*s-mode zzz:4x2", 600, "");
    ck_assert_int_eq(ddl_powerai_options_parse(longer, &o), DDL_ERR_INVALID_ARG);
    static char huge[5000];
    memset(huge, ' ', sizeof(huge) - 1);
    ck_assert_int_eq(ddl_powerai_options_parse(huge, &o), DDL_ERR_INVALID_ARG);
    ck_assert_msg(strstr(ddl_last_error(), "4999 characters"), "%s", ddl_last_error());
}
END_TEST

START_TEST(test_settings_sizes)
{
    ddl_settings_t s;
    setenv("DDL_DEBUG", "NONE", 1);
    setenv("DDL_HEAP_SIZE", "9223372036854775807", 1);
    ck_assert_int_eq(ddl_settings_load(&s), DDL_ERR_INVALID_ARG);
    ck_assert_msg(strstr(ddl_last_error(), "more address space"), "%s", ddl_last_error());
    setenv("DDL_HEAP_SIZE", "18446744073709551615", 1);
    ck_assert_int_eq(ddl_settings_load(&s), DDL_ERR_INVALID_ARG);
    unsetenv("DDL_HEAP_SIZE");
    setenv("DDL_CHUNK_SIZE", "5000", 1);
    ck_assert_int_eq(ddl_settings_load(&s), DDL_ERR_INVALID_ARG);
    ck_assert_msg(strstr(ddl_last_error(), "multiple of 64"), "%s", ddl_last_error());
    unsetenv("DDL_CHUNK_SIZE");
    setenv("DDL_TIMEOUT", "1e10", 1); /* large, but a number: accepted, and converted with care */
    ck_assert_int_eq(ddl_settings_load(&s), DDL_OK);
    unsetenv("DDL_TIMEOUT");
}
END_TEST

static int shm_exists(const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "/dev/shm%s", name);
    return access(path, F_OK) == 0;
}

START_TEST(test_shm_names)
{
    char a[128], b[128];
    ddl_shm_make_name(a, sizeof(a), "ctrl");
    ddl_shm_make_name(b, sizeof(b), "ctrl");
    ck_assert_str_ne(a, b);
    char pid[32];
    snprintf(pid, sizeof(pid), "-%d-", (int)getpid());
    ck_assert_msg(strstr(a, pid), "%s does not name its creator", a);
    /* The part after the sequence number is random: two names differ there too. */
    ck_assert_str_ne(strrchr(a, '-') - 17, strrchr(b, '-') - 17);

    /* A name left by a dead process is reaped; a live one's is kept. */
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    waitpid(child, NULL, 0);
    char dead[128], live[128];
    snprintf(dead, sizeof(dead), "/ddl-%u-x.x-%d-0-0123456789abcdef-ctrl", (unsigned)getuid(), (int)child);
    snprintf(live, sizeof(live), "/ddl-%u-x.x-%d-0-0123456789abcdef-ctrl", (unsigned)getuid(), (int)getpid());
    int fd1 = shm_open(dead, O_RDWR | O_CREAT | O_EXCL, 0600), fd2 = shm_open(live, O_RDWR | O_CREAT | O_EXCL, 0600);
    ck_assert(fd1 >= 0 && fd2 >= 0);
    close(fd1);
    close(fd2);
    ck_assert_int_ge(ddl_shm_reap_stale(), 1);
    ck_assert(!shm_exists(dead));
    ck_assert(shm_exists(live));
    shm_unlink(live);

    /* A segment is created under a fresh name each time. */
    ddl_shm_t s1, s2;
    ck_assert_int_eq(ddl_shm_create("test", 4096, &s1), DDL_OK);
    ck_assert_int_eq(ddl_shm_create("test", 4096, &s2), DDL_OK);
    ck_assert_str_ne(s1.name, s2.name);
    ddl_shm_unlink(&s1);
    ddl_shm_unlink(&s2);
    ddl_shm_detach(&s1);
    ddl_shm_detach(&s2);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("findings");
    TCase *tc = tcase_create("findings");
    tcase_add_test(tc, test_log_path_bounded);
    tcase_add_test(tc, test_tuning_not_text);
    tcase_add_test(tc, test_numbers_in_range);
    tcase_add_test(tc, test_grid_overflow);
    tcase_add_test(tc, test_powerai_options);
    tcase_add_test(tc, test_settings_sizes);
    tcase_add_test(tc, test_shm_names);
    suite_add_tcase(s, tc);
    return ddl_unit_run(s);
}
