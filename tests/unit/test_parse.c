/* SPDX-License-Identifier: Apache-2.0 */
/* Configuration parsing: strict values, clear errors naming the variable. */
#include "config.h"

#include <check.h>

#include "unit.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "params.h"
#include "parse.h"
#include "tuning.h"

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

/* The overlay (PowerAI's options) wins over the environment without changing
 * it, reaches the loaded settings, and goes with a clear. */
START_TEST(test_params_overlay)
{
    setenv("DDL_ALGO", "mpi", 1);
    unsetenv("DDL_EXPLORE");
    ck_assert_int_eq(ddl_params_overlay("DDL_ALGO", "lane"), DDL_OK);
    ck_assert_int_eq(ddl_params_overlay("DDL_EXPLORE", "1"), DDL_OK);
    ck_assert_str_eq(ddl_param_string("DDL_ALGO"), "lane");
    ck_assert_str_eq(getenv("DDL_ALGO"), "mpi");
    ck_assert_ptr_null(getenv("DDL_EXPLORE"));
    ddl_settings_t s;
    ck_assert_int_eq(ddl_settings_load(&s), DDL_OK);
    ck_assert_int_eq(s.algo, DDL_ALGO_LANE);
    ck_assert_int_eq(s.explore, 1);
    ck_assert_int_eq(ddl_params_overlay("DDL_NO_SUCH", "1"), DDL_ERR_INVALID_ARG);
    ck_assert_int_eq(ddl_params_overlay("DDL_ALGO", "fastest"), DDL_OK); /* refused when loaded, as from the environment */
    ck_assert_int_eq(ddl_settings_load(&s), DDL_ERR_INVALID_ARG);
    ddl_params_overlay_clear();
    ck_assert_str_eq(ddl_param_string("DDL_ALGO"), "mpi");
    ck_assert_int_eq(ddl_settings_load(&s), DDL_OK);
    ck_assert_int_eq(s.algo, DDL_ALGO_MPI);
    ck_assert_int_eq(s.explore, 0);
    unsetenv("DDL_ALGO");
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

/* The sample tuning file of docs/selection.md (the block after "the
 * decisions as bands:") is one the parser takes. */
START_TEST(test_tuning_file_of_the_guide)
{
    const char *src = getenv("top_srcdir");
    char path[4096], text[4096] = "", line[512];
    snprintf(path, sizeof(path), "%s/docs/selection.md", src ? src : ".");
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    int state = 0; /* 0: before the sentence, 1: before the fence, 2: in the block */
    while (fgets(line, sizeof(line), f) && state < 3) {
        if (state == 0 && strstr(line, "the decisions as bands:"))
            state = 1;
        else if (state >= 1 && strncmp(line, "```", 3) == 0)
            state++;
        else if (state == 2)
            strncat(text, line, sizeof(text) - strlen(text) - 1);
    }
    fclose(f);
    ck_assert_msg(state == 3, "no tuning file after 'the decisions as bands:' in %s", path);
    ddl_tuning_t t;
    ck_assert_msg(ddl_tuning_parse(text, &t) == 0, "docs/selection.md's tuning file: %s", ddl_last_error());
    ck_assert_int_ge(t.nbands, 5);
}
END_TEST

START_TEST(test_tuning_file)
{
    ddl_tuning_t t;
    const char *err = ddl_last_error();
    const char *ok = "# written by hand\n\n0-8K mpi\n8K-64K mpi/exchange\n64K-16M   lane/ring chunk=512K  # comment\n"
                     "16M-1G lane/rab\n2G-inf lane chunk=1M\n";
    ck_assert_msg(ddl_tuning_parse(ok, &t) == 0, "%s", err);
    ck_assert_int_eq(t.nbands, 5);
    ck_assert(t.bands[1].algo == 1 && t.bands[1].mpi_form == DDL_MPI_FORM_EXCHANGE &&
              t.bands[0].mpi_form == DDL_MPI_FORM_PLAIN);
    ck_assert_uint_eq(t.bands[2].min, 65536);
    ck_assert_uint_eq(t.bands[2].chunk, 512 * 1024);
    ck_assert_int_eq(t.bands[3].lane_algo, 3); /* rab */
    ck_assert_uint_eq(t.bands[4].max, SIZE_MAX);
    ck_assert_int_eq(ddl_tuning_find(&t, 100)->algo, 1); /* mpi */
    ck_assert_int_eq(ddl_tuning_find(&t, 10000)->mpi_form, DDL_MPI_FORM_EXCHANGE);
    ck_assert_int_eq(ddl_tuning_find(&t, 65536)->lane_algo, 1);
    ck_assert_ptr_null(ddl_tuning_find(&t, (size_t)1 << 30)); /* the gap 1G-2G */
    ck_assert_ptr_nonnull(ddl_tuning_find(&t, (size_t)3 << 30));
    ck_assert_msg(ddl_tuning_parse("8K-128K mpi/after\n128K-1M mpi/halves\n", &t) == 0, "%s", err);
    ck_assert(t.bands[0].algo == 1 && t.bands[0].mpi_form == DDL_MPI_FORM_AFTER);
    ck_assert(t.bands[1].algo == 1 && t.bands[1].mpi_form == DDL_MPI_FORM_HALVES);
    struct {
        const char *text, *msg;
    } bad[] = {
        {"0-64K mpi\n64K-1M lane/tree\n", "line 2: 'lane/tree' is not an algorithm"},
        {"0-64K fastest\n", "line 1: 'fastest' is not an algorithm"},
        {"0-64K mpi/ring\n", "line 1: 'mpi/ring' is not an algorithm"},
        {"0-64K lane/exchange\n", "line 1: 'lane/exchange' is not an algorithm"},
        {"0-64K lane/after\n", "line 1: 'lane/after' is not an algorithm"},
        {"0-64K mpi/\n", "line 1: 'mpi/' is not an algorithm"},
        {"64K mpi\n", "line 1: '64K' is not a size range"},
        {"1M-64K mpi\n", "line 1: '1M-64K' is not a size range"},
        {"# a\n0-1M mpi\n512K-2M lane\n", "line 3: the band starts below the end of the previous one"},
        {"0-1M lane chunk=1K\n", "line 1: 'chunk=1K' is not chunk=SIZE"},
        {"0-1M lane chunk=1M extra\n", "line 1: 'extra' is neither chunk=SIZE nor dims=ALGO"},
        {"0-1M lane chunk=1M dims=ring a b\n", "line 1: too many fields"},
        {"0-1M lane dims=ring\n", "line 1: 'dims=ring' is not dims=ALGO"},
        {"0-1M multiring dims=ring,tree\n", "line 1: 'dims=ring,tree' is not dims=ALGO"},
        {"link 0 latency_us=10\n", "line 1: expected 'link DIM latency_us=NUMBER mbytes_per_s=NUMBER'"},
        {"link 9 latency_us=10 mbytes_per_s=100\n", "line 1: expected 'link DIM"},
        {"link 0 latency_us=-1 mbytes_per_s=100\n", "line 1: expected 'link DIM"},
        {"\nreduce mbytes_per_s=fast\n", "line 2: expected 'reduce mbytes_per_s=NUMBER'"},
        {"0-1M\n", "line 1: '' is not an algorithm"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(ddl_tuning_parse(bad[i].text, &t) == -1, "accepted: %s", bad[i].text);
        ck_assert_msg(strstr(err, bad[i].msg) != NULL, "'%s' does not say '%s'", err, bad[i].msg);
    }
    /* The cost model's lines, and per-dimension multiring bands. */
    const char *model = "link 0 latency_us=50 mbytes_per_s=100\nlink 2 latency_us=200.5 mbytes_per_s=25\n"
                        "reduce mbytes_per_s=2000\n0-1M multiring dims=rd,rd\n1M-inf multiring dims=ring,rd chunk=1M\n";
    ck_assert_msg(ddl_tuning_parse(model, &t) == 0, "%s", err);
    ck_assert_int_eq(t.nbands, 2);
    ck_assert_int_eq(t.model.measured[0], 1);
    ck_assert_int_eq(t.model.measured[1], 0);
    ck_assert_double_eq_tol(t.model.link[0].alpha, 50e-6, 1e-12);
    ck_assert_double_eq_tol(t.model.link[2].beta, 1.0 / 25e6, 1e-15);
    ck_assert_double_eq_tol(t.model.link[1].alpha, DDL_MODEL_ALPHA_DEFAULT, 1e-12);
    ck_assert_double_eq_tol(t.model.gamma, 1.0 / 2000e6, 1e-15);
    ck_assert_int_eq(t.bands[1].ndims, 2);
    ck_assert_int_eq(t.bands[1].dim_algo[1], DDL_DIM_RING);
    ck_assert_int_eq(t.bands[1].dim_algo[2], DDL_DIM_RD);
    ddl_tuning_t t2;
    const char *other = "link 0 latency_us=50 mbytes_per_s=101\nlink 2 latency_us=200.5 mbytes_per_s=25\n"
                        "reduce mbytes_per_s=2000\n0-1M multiring dims=rd,rd\n1M-inf multiring dims=ring,rd chunk=1M\n";
    ck_assert_int_eq(ddl_tuning_parse(other, &t2), 0);
    ck_assert_uint_ne(ddl_tuning_digest(&t), ddl_tuning_digest(&t2)); /* ranks with different links disagree */
    /* The runtime refuses a malformed file with its name and line. */
    FILE *f = fopen("tuning-bad.conf", "w");
    fputs("0-64K mpi\n64K-1M lane/tree\n", f);
    fclose(f);
    setenv("DDL_TUNING_FILE", "tuning-bad.conf", 1);
    ddl_settings_t s;
    ck_assert_int_eq(ddl_settings_load(&s), DDL_ERR_INVALID_ARG);
    ck_assert_ptr_nonnull(strstr(ddl_last_error(), "tuning file tuning-bad.conf, line 2"));
    setenv("DDL_TUNING_FILE", "no-such-file.conf", 1);
    ck_assert_int_eq(ddl_settings_load(&s), DDL_ERR_INVALID_ARG);
    ck_assert_ptr_nonnull(strstr(ddl_last_error(), "cannot open the tuning file no-such-file.conf"));
    unsetenv("DDL_TUNING_FILE");
    remove("tuning-bad.conf");
}
END_TEST

/* The hand-written lists of names agree with the rows they name: the
 * multiring's per-dimension algorithms (dims=) are lane algorithms of
 * inter_algos.def, and every MPI path's form has a name a tuning band can
 * give (mpi/NAME; the plain form "mpi"). */
START_TEST(test_names_agree_with_rows)
{
    for (int i = 0; ddl_dim_algo_names[i]; i++) {
        int row = 0;
        ck_assert_msg(ddl_parse_enum(ddl_dim_algo_names[i], ddl_inter_algo_names, &row) == 0 && row > 0,
                      "dims= names %s, which is no row of inter_algos.def", ddl_dim_algo_names[i]);
    }
    int n = 0;
    while (ddl_mpi_form_names[n])
        n++;
    ck_assert_int_eq(n, DDL_MPI_FORM_COUNT);
    ck_assert_str_eq(ddl_mpi_form_names[DDL_MPI_FORM_PLAIN], "");
    ck_assert_int_eq(ddl_mpi_form_early[DDL_MPI_FORM_PLAIN], 1);
}
END_TEST

int main(void)
{
    setenv("DDL_DEBUG", "NONE", 1);
    Suite *s = suite_create("parse");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_long);
    tcase_add_test(tc, test_names_agree_with_rows);
    tcase_add_test(tc, test_size);
    tcase_add_test(tc, test_seconds_enum_bool);
    tcase_add_test(tc, test_params_defaults);
    tcase_add_test(tc, test_params_overlay);
    tcase_add_test(tc, test_params_bad_values);
    tcase_add_test(tc, test_tuning_file);
    tcase_add_test(tc, test_tuning_file_of_the_guide);
    suite_add_tcase(s, tc);
    return ddl_unit_run(s);
}
