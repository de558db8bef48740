/* SPDX-License-Identifier: Apache-2.0 */
/* Reduction kernels per type and op against the serial double-precision
 * reference, and the 16-bit float conversions. */
#include "config.h"

#include <check.h>

#include "unit.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "copy.h"
#include "half.h"
#include "reduce.h"
#include "refdata.h"

START_TEST(test_kernels_match_reference)
{
    const size_t n = 1031;
    for (int t = 0; t < DDL_DTYPE_COUNT; t++) {
        size_t es = ddl_dtype_size((ddl_dtype_t)t);
        for (int op = 0; op < DDL_REDOP_COUNT; op++) {
            for (int contributors = 1; contributors <= 9; contributors += 4) {
                uint64_t seed = (uint64_t)(t * 100 + op * 10 + contributors);
                char *acc = malloc(n * es), *in = malloc(n * es);
                ddl_ref_fill(acc, n, (ddl_dtype_t)t, (ddl_redop_t)op, 0, seed);
                ddl_reduce_fn_t fn = ddl_reduce_fn((ddl_dtype_t)t, (ddl_redop_t)op);
                for (int c = 1; c < contributors; c++) {
                    ddl_ref_fill(in, n, (ddl_dtype_t)t, (ddl_redop_t)op, c, seed);
                    fn(acc, acc, in, n); /* dst aliases the first operand */
                }
                if (op == DDL_REDOP_AVG)
                    ddl_avg_finish(acc, n, (ddl_dtype_t)t, contributors);
                for (size_t i = 0; i < n; i++) {
                    ddl_ref_t ref = ddl_ref_expected((ddl_dtype_t)t, (ddl_redop_t)op, contributors, i, seed);
                    ck_assert_msg(ddl_ref_matches(acc, i, (ddl_dtype_t)t, &ref),
                                  "%s %s x%d element %zu: got %g expected %g (bits %llx)", ddl_dtype_name((ddl_dtype_t)t),
                                  ddl_redop_name((ddl_redop_t)op), contributors, i, ddl_ref_value(acc, i, (ddl_dtype_t)t),
                                  ref.value, (unsigned long long)ref.bits);
                }
                free(acc);
                free(in);
            }
        }
    }
}
END_TEST

START_TEST(test_kernel_second_operand_alias)
{
    float a[5] = {1, -2, 3, 0.5f, 7}, b[5] = {4, 5, -6, 0.25f, -7};
    ddl_reduce_fn(DDL_DTYPE_F32, DDL_REDOP_MAX)(b, a, b, 5);
    float expect[5] = {4, 5, 3, 0.5f, 7};
    for (int i = 0; i < 5; i++)
        ck_assert(b[i] == expect[i]);
}
END_TEST

START_TEST(test_avg_integer_floor)
{
    int32_t v[4] = {7, -7, -8, 6};
    ddl_avg_finish(v, 4, DDL_DTYPE_I32, 2);
    ck_assert_int_eq(v[0], 3);
    ck_assert_int_eq(v[1], -4); /* floor, not truncation */
    ck_assert_int_eq(v[2], -4);
    ck_assert_int_eq(v[3], 3);
    uint8_t u[2] = {255, 5};
    ddl_avg_finish(u, 2, DDL_DTYPE_U8, 4);
    ck_assert_uint_eq(u[0], 63);
    ck_assert_uint_eq(u[1], 1);
}
END_TEST

START_TEST(test_f16_roundtrip_all)
{
    for (uint32_t h = 0; h < 65536; h++) {
        float f = ddl_f16_to_f32((uint16_t)h);
        uint16_t back = ddl_f32_to_f16(f);
        if (isnan(f))
            ck_assert_msg((back & 0x7c00) == 0x7c00 && (back & 0x3ff), "NaN %x lost", h);
        else
            ck_assert_msg(back == h, "%04x -> %g -> %04x", h, f, back);
    }
}
END_TEST

/* f32 -> f16 against a reference that picks the nearest of the two neighbours. */
START_TEST(test_f16_rounding)
{
    ck_assert_uint_eq(ddl_f32_to_f16(1.0f), 0x3c00);
    ck_assert_uint_eq(ddl_f32_to_f16(65504.0f), 0x7bff);
    ck_assert_uint_eq(ddl_f32_to_f16(65520.0f), 0x7c00); /* rounds to inf */
    ck_assert_uint_eq(ddl_f32_to_f16(65519.0f), 0x7bff);
    ck_assert_uint_eq(ddl_f32_to_f16(-0.0f), 0x8000);
    ck_assert_uint_eq(ddl_f32_to_f16(1e-9f), 0x0000);
    for (uint32_t h = 0; h < 0x7bff; h++) {
        /* Midpoint between h and h+1 rounds to the even one; a bit above goes up. */
        double lo = ddl_f16_to_f32((uint16_t)h), hi = ddl_f16_to_f32((uint16_t)(h + 1));
        float mid = (float)((lo + hi) / 2);
        uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
        ck_assert_msg(ddl_f32_to_f16(mid) == even, "midpoint above %04x gave %04x", h, ddl_f32_to_f16(mid));
        float above = nextafterf(mid, INFINITY);
        ck_assert_msg(ddl_f32_to_f16(above) == h + 1, "above midpoint of %04x gave %04x", h, ddl_f32_to_f16(above));
        float below = nextafterf(mid, -INFINITY);
        ck_assert_msg(ddl_f32_to_f16(below) == h, "below midpoint of %04x gave %04x", h, ddl_f32_to_f16(below));
    }
}
END_TEST

START_TEST(test_bf16_rounding)
{
    for (uint32_t b = 0; b < 0x7f80; b += 7) {
        float lo = ddl_bf16_to_f32((uint16_t)b), hi = ddl_bf16_to_f32((uint16_t)(b + 1));
        float mid = (float)(((double)lo + hi) / 2);
        uint16_t even = (b & 1) ? (uint16_t)(b + 1) : (uint16_t)b;
        ck_assert_uint_eq(ddl_f32_to_bf16(lo), b);
        ck_assert_uint_eq(ddl_f32_to_bf16(mid), even);
        ck_assert_uint_eq(ddl_f32_to_bf16(nextafterf(mid, INFINITY)), b + 1);
    }
    ck_assert(isnan(ddl_bf16_to_f32(ddl_f32_to_bf16(NAN))));
}
END_TEST

/* The streaming copy against memcpy: every head (destination alignment) and
 * tail (length mod 64) in a poisoned buffer, so that a byte written outside
 * [dst, dst + n) or left unwritten inside it shows. */
START_TEST(test_copy_stream_every_alignment)
{
    enum { ROOM = 4096 + 256 };
    unsigned char *src = malloc(ROOM), *dst = malloc(ROOM + 64), *want = malloc(ROOM + 64);
    for (size_t i = 0; i < ROOM; i++)
        src[i] = (unsigned char)(i * 131 + 7);
    const size_t lengths[] = {0, 1, 15, 16, 63, 64, 65, 127, 128, 129, 1000, 1024, 4096 + 63};
    for (size_t a = 0; a < 64; a++) {
        for (size_t k = 0; k < sizeof(lengths) / sizeof(lengths[0]); k++) {
            size_t n = lengths[k];
            memset(dst, 0xA5, ROOM + 64);
            memset(want, 0xA5, ROOM + 64);
            memcpy(want + a, src + (a * 3) % 64, n);
            ddl_copy_stream(dst + a, src + (a * 3) % 64, n);
            ddl_copy_stream_fence();
            ck_assert_msg(memcmp(dst, want, ROOM + 64) == 0, "copy of %zu bytes to offset %zu differs from memcpy", n, a);
        }
    }
    free(src);
    free(dst);
    free(want);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("reduce");
    TCase *tc = tcase_create("reduce");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_kernels_match_reference);
    tcase_add_test(tc, test_kernel_second_operand_alias);
    tcase_add_test(tc, test_avg_integer_floor);
    tcase_add_test(tc, test_f16_roundtrip_all);
    tcase_add_test(tc, test_f16_rounding);
    tcase_add_test(tc, test_bf16_rounding);
    tcase_add_test(tc, test_copy_stream_every_alignment);
    suite_add_tcase(s, tc);
    return ddl_unit_run(s);
}
