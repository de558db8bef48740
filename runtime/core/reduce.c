/* SPDX-License-Identifier: Apache-2.0 */
/* Kept in its own file so it can be built with vectorisation (see Makefile.am). */
#include "config.h"

#include <stdint.h>

#include "half.h"
#include "reduce.h"

#define OP_SUM(x, y) ((x) + (y))
#define OP_PROD(x, y) ((x) * (y))
#define OP_MIN(x, y) ((y) < (x) ? (y) : (x))
#define OP_MAX(x, y) ((y) > (x) ? (y) : (x))

/* Native types: the loop vectorises.  Signed integers add and multiply as their
 * unsigned twins so that overflow wraps instead of being undefined. */
#define DEFINE_KERNEL(name, T, U, OP)                                                              \
    static void name(void *dst, const void *a, const void *b, size_t n)                           \
    {                                                                                              \
        T *d = dst;                                                                                \
        const T *x = a, *y = b;                                                                    \
        for (size_t i = 0; i < n; i++)                                                             \
            d[i] = (T)OP((U)x[i], (U)y[i]);                                                        \
    }

#define DEFINE_MINMAX(name, T, OP)                                                                 \
    static void name(void *dst, const void *a, const void *b, size_t n)                           \
    {                                                                                              \
        T *d = dst;                                                                                \
        const T *x = a, *y = b;                                                                    \
        for (size_t i = 0; i < n; i++)                                                             \
            d[i] = OP(x[i], y[i]);                                                                 \
    }

#define DEFINE_TYPE(suffix, T, U)                                                                  \
    DEFINE_KERNEL(sum_##suffix, T, U, OP_SUM)                                                      \
    DEFINE_KERNEL(prod_##suffix, T, U, OP_PROD)                                                    \
    DEFINE_MINMAX(min_##suffix, T, OP_MIN)                                                         \
    DEFINE_MINMAX(max_##suffix, T, OP_MAX)

DEFINE_TYPE(f32, float, float)
DEFINE_TYPE(f64, double, double)
DEFINE_TYPE(i8, int8_t, uint8_t)
DEFINE_TYPE(u8, uint8_t, uint8_t)
DEFINE_TYPE(i32, int32_t, uint32_t)
DEFINE_TYPE(u32, uint32_t, uint32_t)
DEFINE_TYPE(i64, int64_t, uint64_t)
DEFINE_TYPE(u64, uint64_t, uint64_t)

/* 16-bit floats: widen to f32, operate, round back to nearest even. */
#define DEFINE_HALF_KERNEL(name, TO_F32, FROM_F32, OP)                                             \
    static void name(void *dst, const void *a, const void *b, size_t n)                           \
    {                                                                                              \
        uint16_t *d = dst;                                                                         \
        const uint16_t *x = a, *y = b;                                                             \
        for (size_t i = 0; i < n; i++)                                                             \
            d[i] = FROM_F32(OP(TO_F32(x[i]), TO_F32(y[i])));                                       \
    }

#define DEFINE_HALF_TYPE(suffix, TO_F32, FROM_F32)                                                 \
    DEFINE_HALF_KERNEL(sum_##suffix, TO_F32, FROM_F32, OP_SUM)                                     \
    DEFINE_HALF_KERNEL(prod_##suffix, TO_F32, FROM_F32, OP_PROD)                                   \
    DEFINE_HALF_KERNEL(min_##suffix, TO_F32, FROM_F32, OP_MIN)                                     \
    DEFINE_HALF_KERNEL(max_##suffix, TO_F32, FROM_F32, OP_MAX)

DEFINE_HALF_TYPE(f16, ddl_f16_to_f32, ddl_f32_to_f16)
DEFINE_HALF_TYPE(bf16, ddl_bf16_to_f32, ddl_f32_to_bf16)

#define ROW(suffix) {sum_##suffix, prod_##suffix, min_##suffix, max_##suffix, sum_##suffix}

static const ddl_reduce_fn_t kernels[DDL_DTYPE_COUNT][DDL_REDOP_COUNT] = {
    [DDL_DTYPE_F32] = ROW(f32), [DDL_DTYPE_F64] = ROW(f64), [DDL_DTYPE_F16] = ROW(f16),
    [DDL_DTYPE_BF16] = ROW(bf16), [DDL_DTYPE_I8] = ROW(i8), [DDL_DTYPE_U8] = ROW(u8),
    [DDL_DTYPE_I32] = ROW(i32), [DDL_DTYPE_U32] = ROW(u32), [DDL_DTYPE_I64] = ROW(i64),
    [DDL_DTYPE_U64] = ROW(u64),
};

ddl_reduce_fn_t ddl_reduce_fn(ddl_dtype_t dtype, ddl_redop_t op) { return kernels[dtype][op]; }

#define AVG_DIVIDE(T, DIV_T)                                                                        \
    do {                                                                                           \
        T *p = buf;                                                                                \
        for (size_t i = 0; i < n; i++)                                                             \
            p[i] = (T)(p[i] / (DIV_T)divisor);                                                     \
    } while (0)

/* floor(s / d) for d > 0: C division truncates toward zero. */
#define AVG_SIGNED(T)                                                                              \
    do {                                                                                           \
        T *p = buf;                                                                                \
        for (size_t i = 0; i < n; i++) {                                                           \
            T q = (T)(p[i] / divisor);                                                             \
            if (p[i] % divisor != 0 && p[i] < 0)                                                   \
                q--;                                                                               \
            p[i] = q;                                                                              \
        }                                                                                          \
    } while (0)

#define AVG_HALF(TO_F32, FROM_F32)                                                                 \
    do {                                                                                           \
        uint16_t *p = buf;                                                                         \
        for (size_t i = 0; i < n; i++)                                                             \
            p[i] = FROM_F32(TO_F32(p[i]) / (float)divisor);                                        \
    } while (0)

void ddl_avg_finish(void *buf, size_t n, ddl_dtype_t dtype, int divisor)
{
    if (divisor == 1)
        return;
    switch (dtype) {
    case DDL_DTYPE_F32: AVG_DIVIDE(float, float); break;
    case DDL_DTYPE_F64: AVG_DIVIDE(double, double); break;
    case DDL_DTYPE_F16: AVG_HALF(ddl_f16_to_f32, ddl_f32_to_f16); break;
    case DDL_DTYPE_BF16: AVG_HALF(ddl_bf16_to_f32, ddl_f32_to_bf16); break;
    case DDL_DTYPE_I8: AVG_SIGNED(int8_t); break;
    case DDL_DTYPE_I32: AVG_SIGNED(int32_t); break;
    case DDL_DTYPE_I64: AVG_SIGNED(int64_t); break;
    case DDL_DTYPE_U8: AVG_DIVIDE(uint8_t, unsigned); break;
    case DDL_DTYPE_U32: AVG_DIVIDE(uint32_t, uint32_t); break;
    case DDL_DTYPE_U64: AVG_DIVIDE(uint64_t, uint64_t); break;
    default: break;
    }
}
