/* SPDX-License-Identifier: Apache-2.0 */
/* Streaming copies (copy.h).  In libddl_kernels with the reductions: the
 * other hot loop of a call. */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "copy.h"

#if defined(__x86_64__) && defined(__SSE2__)
#include <immintrin.h>

/* The body's lines, dst 64-byte aligned.  A line written by one 64-byte
 * store (AVX-512) or two 32-byte ones (AVX) leaves the write-combining buffer
 * whole; with SSE2's four 16-byte stores, lines flushed part-written cost
 * reads again (measured: AVX2 and AVX-512 stores reached in-place speed at
 * 16 MiB, SSE2's did not). */
__attribute__((target("avx512f"))) static void lines_avx512(char *d, const char *s, size_t bytes)
{
    for (size_t i = 0; i < bytes; i += 64)
        _mm512_stream_si512((void *)(d + i), _mm512_loadu_si512((const void *)(s + i)));
}

__attribute__((target("avx"))) static void lines_avx(char *d, const char *s, size_t bytes)
{
    for (size_t i = 0; i < bytes; i += 64) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + i + 32));
        _mm256_stream_si256((__m256i *)(d + i), a);
        _mm256_stream_si256((__m256i *)(d + i + 32), b);
    }
}

static void lines_sse2(char *d, const char *s, size_t bytes)
{
    for (size_t i = 0; i < bytes; i += 64)
        for (size_t k = 0; k < 64; k += 16)
            _mm_stream_si128((__m128i *)(d + i + k), _mm_loadu_si128((const __m128i *)(s + i + k)));
}

void ddl_copy_stream(void *dst, const void *src, size_t bytes)
{
    char *d = dst;
    const char *s = src;
    /* The head up to a line boundary and the tail under a line go through memcpy. */
    size_t head = (64 - ((uintptr_t)d & 63)) & 63;
    if (head > bytes)
        head = bytes;
    memcpy(d, s, head);
    d += head;
    s += head;
    bytes -= head;
    size_t body = bytes & ~(size_t)63;
    if (__builtin_cpu_supports("avx512f"))
        lines_avx512(d, s, body);
    else if (__builtin_cpu_supports("avx"))
        lines_avx(d, s, body);
    else
        lines_sse2(d, s, body);
    memcpy(d + body, s + body, bytes - body);
}

void ddl_copy_stream_fence(void)
{
    _mm_sfence();
}

#else

void ddl_copy_stream(void *dst, const void *src, size_t bytes)
{
    memcpy(dst, src, bytes);
}

void ddl_copy_stream_fence(void)
{
}

#endif
