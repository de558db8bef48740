/* SPDX-License-Identifier: Apache-2.0 */
/* IEEE binary16 and bfloat16 conversions, round to nearest even. */
#ifndef DDL_HALF_H
#define DDL_HALF_H

#include <stdint.h>
#include <string.h>

static inline float ddl_bits_to_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

static inline uint32_t ddl_f32_to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static inline float ddl_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
        float v = (float)mant * 0x1p-24f; /* zero or subnormal: exact in f32 */
        return ddl_bits_to_f32(ddl_f32_to_bits(v) | sign);
    }
    if (exp == 31)
        return ddl_bits_to_f32(sign | 0x7f800000u | (mant << 13));
    return ddl_bits_to_f32(sign | ((exp + 112u) << 23) | (mant << 13));
}

static inline uint16_t ddl_f32_to_f16(float f)
{
    uint32_t x = ddl_f32_to_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) /* inf stays inf; NaN stays a quiet NaN */
        return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0));
    if (ax >= 0x477ff000u) /* at or above 65520: rounds to inf */
        return (uint16_t)(sign | 0x7c00u);
    if (ax < 0x38800000u) {
        /* Below 2^-14: the result is subnormal.  Adding 0.5f leaves the value
         * rounded (nearest even) to a multiple of 2^-24, half's subnormal step. */
        float t = ddl_bits_to_f32(ax) + 0.5f;
        return (uint16_t)(sign | (ddl_f32_to_bits(t) - 0x3f000000u));
    }
    /* Normal: rebias the exponent and round the 13 dropped bits to nearest even. */
    uint32_t odd = (ax >> 13) & 1u;
    ax += 0xc8000fffu + odd;
    return (uint16_t)(sign | (ax >> 13));
}

static inline float ddl_bf16_to_f32(uint16_t b) { return ddl_bits_to_f32((uint32_t)b << 16); }

static inline uint16_t ddl_f32_to_bf16(float f)
{
    uint32_t x = ddl_f32_to_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u); /* quiet the NaN */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

#endif
