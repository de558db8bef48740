/* SPDX-License-Identifier: Apache-2.0 */
/* Slicing and the lane map. */
#include "config.h"

#include <check.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

#include "lanemap.h"
#include "slice.h"

START_TEST(test_slices_cover_once)
{
    for (size_t parts = 1; parts <= 17; parts++) {
        for (size_t n = 0; n <= 300; n++) {
            unsigned char *seen = calloc(n + 1, 1);
            size_t expect_off = 0;
            for (size_t p = 0; p < parts; p++) {
                size_t off, len;
                ddl_slice(n, parts, p, &off, &len);
                ck_assert_uint_eq(off, expect_off); /* in order, no gap */
                ck_assert_uint_le(len, n / parts + 1);
                ck_assert_uint_ge(len, n / parts);
                for (size_t i = off; i < off + len; i++)
                    seen[i]++;
                expect_off = off + len;
            }
            ck_assert_uint_eq(expect_off, n);
            /* One assertion per n, not per element: each costs a message to
             * check's parent (seconds over the loop, 20 s under ASan). */
            size_t i = 0;
            while (i < n && seen[i] == 1)
                i++;
            ck_assert_msg(i == n, "n=%zu parts=%zu element %zu covered %d times", n, parts, i, i < n ? seen[i] : 1);
            free(seen);
        }
    }
}
END_TEST

START_TEST(test_place)
{
    /* 2 GPUs x 4 lanes */
    for (int t = 0; t < 8; t++) {
        ddl_place_t p = ddl_lanemap_place(t, 4);
        ck_assert_int_eq(p.gpu, t / 4);
        ck_assert_int_eq(p.lane, t % 4);
        ck_assert_int_eq(p.role, t % 4 == 0 ? DDL_ROLE_OWNER : DDL_ROLE_HELPER);
    }
    ddl_place_t p = ddl_lanemap_place(5, 1);
    ck_assert_int_eq(p.gpu, 5);
    ck_assert_int_eq(p.role, DDL_ROLE_OWNER);
}
END_TEST

START_TEST(test_layout_fits)
{
    int g;
    ck_assert_int_eq(ddl_lanemap_layout(8, 2, 0, &g), DDL_OK);
    ck_assert_int_eq(g, 4);
    ck_assert_int_eq(ddl_lanemap_layout(8, 2, 4, &g), DDL_OK);
    ck_assert_int_eq(g, 4);
    ck_assert_int_eq(ddl_lanemap_layout(1, 1, 0, &g), DDL_OK);
    ck_assert_int_eq(g, 1);
}
END_TEST

START_TEST(test_layout_errors)
{
    int g;
    const char *why = ddl_last_error();
    ck_assert_int_eq(ddl_lanemap_layout(6, 4, 0, &g), DDL_ERR_LAYOUT);
    ck_assert_ptr_nonnull(strstr(why, "6 ranks"));
    ck_assert_ptr_nonnull(strstr(why, "DDL_LANES"));
    ck_assert_int_eq(ddl_lanemap_layout(8, 2, 2, &g), DDL_ERR_LAYOUT);
    ck_assert_ptr_nonnull(strstr(why, "need 4"));
    ck_assert_int_eq(ddl_lanemap_layout(8, 0, 0, &g), DDL_ERR_LAYOUT);
    ck_assert_int_eq(ddl_lanemap_layout(8, 2, -1, &g), DDL_ERR_LAYOUT);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("layout");
    tcase_add_test(tc, test_slices_cover_once);
    tcase_add_test(tc, test_place);
    tcase_add_test(tc, test_layout_fits);
    tcase_add_test(tc, test_layout_errors);
    suite_add_tcase(s, tc);
    return ddl_unit_run(s);
}
