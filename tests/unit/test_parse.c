/* Configuration parsing: strict values, clear errors naming the variable. */
#include "config.h"

#include <check.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

#include "params.h"
#include "parse.h"

START_TEST(test_long)
{
    long v;
    ck_assert_int_eq(ddl_parse_long("4", 1, 16, &v), 0);
    ck_assert_int_eq(v, 4);
    ck_assert_int_eq(ddl_parse_long("16", 1, 16, &v), 0);
    const char *bad[] = {"", "0", "17", "-1", "+3", " 4", "4 ", "abc", "4x", "1e3", "99999999999999999999", NULL};
    for (int i = 0; bad[i]; i++)
        ck_assert_msg(ddl_parse_long(bad[i], 1, 16, &v) == -1, "'%s' accepted", bad[i]);
    ck_assert_int_eq(ddl_parse_long("-5", -10, 10, &v), 0);
    ck_assert_int_eq(v, -5);
    ck_assert_int_eq(ddl_parse_long(NULL, 0, 1, &v), -1);
}
END_TEST

START_TEST(test_size)
{
    size_t v;
    ck_assert_int_eq(ddl_parse_size("0", &v), 0);
    ck_assert_uint_eq(v, 0);
    ck_assert_int_eq(ddl_parse_size("65536", &v), 0);
    ck_assert_uint_eq(v, 65536);
    ck_assert_int_eq(ddl_parse_size("64K", &v), 0);
    ck_assert_uint_eq(v, 65536);
    ck_assert_int_eq(ddl_parse_size("16m", &v), 0);
    ck_assert_uint_eq(v, 16u << 20);
    ck_assert_int_eq(ddl_parse_size("2GiB", &v), 0);
    ck_assert_uint_eq(v, 2ull << 30);
    ck_assert_int_eq(ddl_parse_size("1KB", &v), 0);
    ck_assert_uint_eq(v, 1024);
    const char *bad[] = {"", "-1", "K", "1.5M", "1Q", "1KK", " 1", "1 ", "99999999999T", NULL};
    for (int i = 0; bad[i]; i++)
        ck_assert_msg(ddl_parse_size(bad[i], &v) == -1, "'%s' accepted", bad[i]);
}
END_TEST

START_TEST(test_seconds_enum_bool)
{
    double d;
    ck_assert_int_eq(ddl_parse_seconds("0.5", &d), 0);
    ck_assert(d == 0.5);
    ck_assert_int_eq(ddl_parse_seconds("300", &d), 0);
    const char *bad[] = {"0", "-1", "abc", "", "inf", "nan", "5s", NULL};
    for (int i = 0; bad[i]; i++)
        ck_assert_msg(ddl_parse_seconds(bad[i], &d) == -1, "'%s' accepted", bad[i]);
    static const char *const names[] = {"auto", "mpi", "lane", NULL};
    int idx;
    ck_assert_int_eq(ddl_parse_enum("LANE", names, &idx), 0);
    ck_assert_int_eq(idx, 2);
    ck_assert_int_eq(ddl_parse_enum("ring", names, &idx), -1);
    int b;
    ck_assert_int_eq(ddl_parse_bool("yes", &b), 0);
    ck_assert_int_eq(b, 1);
    ck_assert_int_eq(ddl_parse_bool("off", &b), 0);
    ck_assert_int_eq(b, 0);
    ck_assert_int_eq(ddl_parse_bool("2", &b), -1);
}
END_TEST

START_TEST(test_params_defaults)
{
    size_t n;
    const ddl_param_t *t = ddl_params_table(&n);
    ck_assert_uint_gt(n, 10);
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(strncmp(t[i].name, "DDL_", 4) == 0, "%s", t[i].name);
        ck_assert_msg(t[i].description && strlen(t[i].description) > 10, "%s has no description", t[i].name);
        unsetenv(t[i].name);
    }
    ddl_settings_t s;
    ck_assert_int_eq(ddl_settings_load(&s), DDL_OK);
    ck_assert(s.timeout == 300);
    ck_assert_uint_eq(s.stage_size, 16u << 20);
}
END_TEST

START_TEST(test_params_bad_values)
{
    struct {
        const char *name, *value;
    } bad[] = {{"DDL_TIMEOUT", "abc"}, {"DDL_TIMEOUT", "0"},     {"DDL_CHECK", "maybe"},
               {"DDL_ALGO", "fastest"}, {"DDL_CHUNK_SIZE", "1K"}, {"DDL_STAGE_SIZE", "12Q"},
               {"DDL_LANE_ALGO", "tree"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        setenv(bad[i].name, bad[i].value, 1);
        ddl_settings_t s;
        ck_assert_msg(ddl_settings_load(&s) == DDL_ERR_INVALID_ARG, "%s=%s accepted", bad[i].name, bad[i].value);
        ck_assert_msg(strstr(ddl_last_error(), bad[i].name) != NULL, "message '%s' does not name %s",
                      ddl_last_error(), bad[i].name);
        unsetenv(bad[i].name);
    }
    setenv("DDL_LANES", "0", 1);
    long v;
    ck_assert_int_eq(ddl_param_long("DDL_LANES", &v), DDL_ERR_INVALID_ARG);
    ck_assert_ptr_nonnull(strstr(ddl_last_error(), "DDL_LANES=0"));
    setenv("DDL_LANES", "4", 1);
    ck_assert_int_eq(ddl_param_long("DDL_LANES", &v), DDL_OK);
    ck_assert_int_eq(v, 4);
    unsetenv("DDL_LANES");
}
END_TEST

int main(void)
{
    setenv("DDL_DEBUG", "NONE", 1);
    Suite *s = suite_create("parse");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_long);
    tcase_add_test(tc, test_size);
    tcase_add_test(tc, test_seconds_enum_bool);
    tcase_add_test(tc, test_params_defaults);
    tcase_add_test(tc, test_params_bad_values);
    suite_add_tcase(s, tc);
    return ddl_unit_run(s);
}
