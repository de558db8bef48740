/* SPDX-License-Identifier: Apache-2.0 */
/* The shared-heap allocator. */
#include "config.h"

#include <check.h>

#include "unit.h"

#include "heap.h"

START_TEST(test_alloc_free_coalesce)
{
    ddl_heap_t h;
    ddl_heap_init(&h, 4096, 16 * 4096);
    size_t a, b, c, len;
    ck_assert_int_eq(ddl_heap_alloc(&h, 1, &a, &len), DDL_OK);
    ck_assert_uint_eq(a, 4096);
    ck_assert_uint_eq(len, 4096);
    ck_assert_int_eq(ddl_heap_alloc(&h, 5000, &b, &len), DDL_OK);
    ck_assert_uint_eq(b, 8192);
    ck_assert_uint_eq(len, 8192);
    ck_assert_int_eq(ddl_heap_alloc(&h, 4096, &c, &len), DDL_OK);
    ck_assert_uint_eq(c, 16384);
    /* Free the middle one, then the first: they merge and take 3 pages again. */
    ck_assert_int_eq(ddl_heap_free(&h, b, &len), DDL_OK);
    ck_assert_int_eq(ddl_heap_free(&h, a, &len), DDL_OK);
    size_t d;
    ck_assert_int_eq(ddl_heap_alloc(&h, 3 * 4096, &d, &len), DDL_OK);
    ck_assert_uint_eq(d, 4096);
    ck_assert_int_eq(ddl_heap_free(&h, d, &len), DDL_OK);
    ck_assert_int_eq(ddl_heap_free(&h, c, &len), DDL_OK);
    /* Everything merged back: one allocation of the whole heap fits. */
    ck_assert_int_eq(ddl_heap_alloc(&h, 16 * 4096, &d, &len), DDL_OK);
    ddl_heap_fini(&h);
}
END_TEST

START_TEST(test_exhaustion_and_bad_free)
{
    ddl_heap_t h;
    ddl_heap_init(&h, 0, 4 * 4096);
    size_t a, len;
    ck_assert_int_eq(ddl_heap_alloc(&h, 5 * 4096, &a, &len), DDL_ERR_NO_MEMORY);
    ck_assert_int_eq(ddl_heap_alloc(&h, 4 * 4096, &a, &len), DDL_OK);
    ck_assert_int_eq(ddl_heap_alloc(&h, 1, &a, &len), DDL_ERR_NO_MEMORY);
    ck_assert_int_eq(ddl_heap_free(&h, 123, &len), DDL_ERR_INVALID_ARG);
    ck_assert_int_eq(ddl_heap_free(&h, 0, &len), DDL_OK);
    ck_assert_int_eq(ddl_heap_free(&h, 0, &len), DDL_ERR_INVALID_ARG); /* double free */
    ddl_heap_fini(&h);
}
END_TEST

/* What an allocation's start and any byte inside it say: its length (only at
 * the start) and the room from there to its end (anywhere inside). */
START_TEST(test_length_and_room)
{
    ddl_heap_t h;
    ddl_heap_init(&h, 4096, 8 * 4096);
    size_t a, b, len;
    ck_assert_int_eq(ddl_heap_alloc(&h, 2 * 4096, &a, &len), DDL_OK);
    ck_assert_int_eq(ddl_heap_alloc(&h, 100, &b, &len), DDL_OK);
    ck_assert_uint_eq(ddl_heap_length(&h, a), 2 * 4096);
    ck_assert_uint_eq(ddl_heap_length(&h, b), 4096);
    ck_assert_uint_eq(ddl_heap_length(&h, a + 8), 0); /* inside, not a start */
    ck_assert_uint_eq(ddl_heap_length(&h, 0), 0);     /* below the heap */
    ck_assert_uint_eq(ddl_heap_room(&h, a + 8), 2 * 4096 - 8);
    ck_assert_uint_eq(ddl_heap_room(&h, b + 4095), 1);
    ck_assert_uint_eq(ddl_heap_room(&h, b + 4096), 0); /* past the last allocation */
    ck_assert_int_eq(ddl_heap_free(&h, a, &len), DDL_OK);
    ck_assert_uint_eq(ddl_heap_length(&h, a), 0);
    ck_assert_uint_eq(ddl_heap_room(&h, a + 8), 0);
    ddl_heap_fini(&h);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("heap");
    TCase *tc = tcase_create("heap");
    tcase_add_test(tc, test_alloc_free_coalesce);
    tcase_add_test(tc, test_exhaustion_and_bad_free);
    tcase_add_test(tc, test_length_and_room);
    suite_add_tcase(s, tc);
    return ddl_unit_run(s);
}
