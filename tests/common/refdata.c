/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "half.h"
#include "refdata.h"

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static int is_float(ddl_dtype_t t)
{
    return t == DDL_DTYPE_F32 || t == DDL_DTYPE_F64 || t == DDL_DTYPE_F16 || t == DDL_DTYPE_BF16;
}

static int is_signed(ddl_dtype_t t) { return t == DDL_DTYPE_I8 || t == DDL_DTYPE_I32 || t == DDL_DTYPE_I64; }

static unsigned width(ddl_dtype_t t) { return (unsigned)ddl_dtype_size(t) * 8; }

static uint64_t mask(ddl_dtype_t t) { return width(t) == 64 ? ~0ull : (1ull << width(t)) - 1; }

/* Floating inputs: k/64 with |k| <= 64 (sum, min, max, avg), or 1 + k/64 with
 * |k| <= 8 (prod): exact in every floating type, bfloat16 included. */
static double float_input(ddl_redop_t op, uint64_t h)
{
    if (op == DDL_REDOP_PROD)
        return 1.0 + (double)((int)(h % 17) - 8) / 64.0;
    return (double)((int)(h % 129) - 64) / 64.0;
}

static uint64_t hash_of(int c, size_t i, uint64_t seed)
{
    return mix(seed ^ mix((uint64_t)c * 0x100000001b3ull) ^ mix((uint64_t)i));
}

static void store(void *buf, size_t i, ddl_dtype_t t, double f, uint64_t bits)
{
    switch (t) {
    case DDL_DTYPE_F32: ((float *)buf)[i] = (float)f; break;
    case DDL_DTYPE_F64: ((double *)buf)[i] = f; break;
    case DDL_DTYPE_F16: ((uint16_t *)buf)[i] = ddl_f32_to_f16((float)f); break;
    case DDL_DTYPE_BF16: ((uint16_t *)buf)[i] = ddl_f32_to_bf16((float)f); break;
    case DDL_DTYPE_I8: case DDL_DTYPE_U8: ((uint8_t *)buf)[i] = (uint8_t)bits; break;
    case DDL_DTYPE_I32: case DDL_DTYPE_U32: ((uint32_t *)buf)[i] = (uint32_t)bits; break;
    default: ((uint64_t *)buf)[i] = bits; break;
    }
}

void ddl_ref_fill(void *buf, size_t n, ddl_dtype_t t, ddl_redop_t op, int c, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t h = hash_of(c, i, seed);
        store(buf, i, t, float_input(op, h), h & mask(t));
    }
}

static int64_t as_signed(uint64_t v, ddl_dtype_t t)
{
    unsigned w = width(t);
    v &= mask(t);
    if (w < 64 && (v >> (w - 1)) & 1)
        return (int64_t)(v | ~mask(t));
    return (int64_t)v;
}

static uint64_t int_combine(ddl_dtype_t t, ddl_redop_t op, uint64_t a, uint64_t b)
{
    switch (op) {
    case DDL_REDOP_PROD: return (a * b) & mask(t);
    case DDL_REDOP_MIN:
        if (is_signed(t))
            return as_signed(b, t) < as_signed(a, t) ? b : a;
        return b < a ? b : a;
    case DDL_REDOP_MAX:
        if (is_signed(t))
            return as_signed(b, t) > as_signed(a, t) ? b : a;
        return b > a ? b : a;
    default: return (a + b) & mask(t);
    }
}

static double unit_roundoff(ddl_dtype_t t)
{
    switch (t) {
    case DDL_DTYPE_F64: return 0x1p-53;
    case DDL_DTYPE_F16: return 0x1p-11;
    case DDL_DTYPE_BF16: return 0x1p-8;
    default: return 0x1p-24;
    }
}

ddl_ref_t ddl_ref_expected(ddl_dtype_t t, ddl_redop_t op, int n, size_t i, uint64_t seed)
{
    ddl_ref_t r = {0, 0, 0};
    if (is_float(t)) {
        double acc = 0, mag = 0;
        for (int c = 0; c < n; c++) {
            double x = float_input(op, hash_of(c, i, seed));
            if (c == 0)
                acc = x;
            else if (op == DDL_REDOP_PROD)
                acc *= x;
            else if (op == DDL_REDOP_MIN)
                acc = x < acc ? x : acc;
            else if (op == DDL_REDOP_MAX)
                acc = x > acc ? x : acc;
            else
                acc += x;
            mag += fabs(x);
        }
        double u = unit_roundoff(t);
        if (op == DDL_REDOP_AVG) {
            acc /= n;
            mag /= n;
        }
        r.value = acc;
        if (op == DDL_REDOP_SUM || op == DDL_REDOP_AVG)
            r.tol = (n + 1) * u * mag;
        else if (op == DDL_REDOP_PROD)
            r.tol = (n + 1) * u * fabs(acc) * 1.01;
        return r;
    }
    uint64_t acc = 0;
    for (int c = 0; c < n; c++) {
        uint64_t x = hash_of(c, i, seed) & mask(t);
        acc = c == 0 ? x : int_combine(t, op, acc, x);
    }
    if (op == DDL_REDOP_AVG) {
        if (is_signed(t)) {
            int64_t s = as_signed(acc, t), q = s / n;
            if (s % n != 0 && s < 0)
                q--;
            acc = (uint64_t)q & mask(t);
        } else {
            acc /= (uint64_t)n;
        }
    }
    r.bits = acc;
    return r;
}

double ddl_ref_value(const void *buf, size_t i, ddl_dtype_t t)
{
    switch (t) {
    case DDL_DTYPE_F32: return ((const float *)buf)[i];
    case DDL_DTYPE_F64: return ((const double *)buf)[i];
    case DDL_DTYPE_F16: return ddl_f16_to_f32(((const uint16_t *)buf)[i]);
    case DDL_DTYPE_BF16: return ddl_bf16_to_f32(((const uint16_t *)buf)[i]);
    case DDL_DTYPE_I8: return ((const int8_t *)buf)[i];
    case DDL_DTYPE_U8: return ((const uint8_t *)buf)[i];
    case DDL_DTYPE_I32: return ((const int32_t *)buf)[i];
    case DDL_DTYPE_U32: return ((const uint32_t *)buf)[i];
    case DDL_DTYPE_I64: return (double)((const int64_t *)buf)[i];
    default: return (double)((const uint64_t *)buf)[i];
    }
}

int ddl_ref_matches(const void *buf, size_t i, ddl_dtype_t t, const ddl_ref_t *ref)
{
    if (is_float(t)) {
        double got = ddl_ref_value(buf, i, t);
        return fabs(got - ref->value) <= ref->tol; /* false for NaN */
    }
    size_t es = ddl_dtype_size(t);
    uint64_t got = 0;
    memcpy(&got, (const char *)buf + i * es, es); /* little-endian */
    return got == ref->bits;
}

void ddl_ref_poison(void *buf, size_t bytes) { memset(buf, 0xff, bytes); }

uint64_t ddl_ref_hash(const void *buf, size_t bytes)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const unsigned char *p = buf;
    for (size_t i = 0; i < bytes; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}
