/* SPDX-License-Identifier: Apache-2.0 */
/* A C program written for PowerAI DDL 1.x, built against the installed tree:
 * every call of <ddl.hpp> on host memory, checked against sums computed here
 * serially in double precision.  Prints "PowerAI C: N ranks, F failures". */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddl.hpp>

static int failures;
#define CHECK(cond, ...)                                                                                             \
    do {                                                                                                             \
        if (!(cond) && failures++ < 10) {                                                                            \
            fprintf(stderr, "FAIL: " __VA_ARGS__);                                                                   \
            fputc('\n', stderr);                                                                                     \
        }                                                                                                            \
    } while (0)

/* binary16 from a small integer-valued float (exact for |v| <= 2048). */
static uint16_t to_half(float v)
{
    if (v == 0)
        return 0;
    int e = 0;
    float m = frexpf(v, &e); /* v = m * 2^e, 0.5 <= m < 1 */
    return (uint16_t)(((e + 14) << 10) | ((uint16_t)((m * 2 - 1) * 1024) & 0x3ff));
}

static float from_half(uint16_t h)
{
    if (!h)
        return 0;
    return ldexpf(1 + (float)(h & 0x3ff) / 1024, ((h >> 10) & 0x1f) - 15);
}

int main(void)
{
    int rank = -1, size = 0, lrank = -1, lsize = 0;
    CHECK(ddl_rank(&rank) < 0, "ddl_rank before ddl_init and without MPI succeeded");
    CHECK(ddl_init("-mode x:4") < 0, "a malformed -mode was accepted");
    if (ddl_init(NULL) != DDL_SUCCESS) { /* DDL_OPTIONS from the environment */
        fprintf(stderr, "FAIL: ddl_init: %s\n", ddl_last_error());
        return 1;
    }
    CHECK(ddl_rank(&rank) == DDL_SUCCESS && ddl_size(&size) == DDL_SUCCESS, "rank/size");
    CHECK(ddl_local_rank(&lrank) == DDL_SUCCESS && ddl_local_size(&lsize) == DDL_SUCCESS, "local rank/size");
    CHECK(rank >= 0 && rank < size && lrank >= 0 && lrank < lsize, "rank %d of %d, local %d of %d", rank, size, lrank,
          lsize);
    const size_t counts[] = {0, 1, 7, 1009, 100003};
    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
        size_t n = counts[ci];
        float *f;
        int bytes = ddl_malloc((void **)&f, 64, n * sizeof(float));
        size_t padded = (n * sizeof(float) + 63) / 64 * 64;
        CHECK(bytes == (int)padded, "ddl_malloc(%zu bytes, 64) returned %d, expected %zu", n * sizeof(float), bytes,
              padded);
        if (bytes < 0)
            break;
        CHECK((uintptr_t)f % 64 == 0, "ddl_malloc: %p is not 64-byte aligned", (void *)f);
        size_t nall = (size_t)bytes / sizeof(float);
        for (size_t i = n; i < nall; i++)
            CHECK(f[i] == 0, "padding element %zu is %g, not 0", i, f[i]);
        /* Two-argument form: float sum over the padded buffer. */
        for (size_t i = 0; i < n; i++)
            f[i] = (float)((rank + 1) * (int)(i % 13));
        CHECK(ddl_allreduce(f, nall) == DDL_SUCCESS, "ddl_allreduce(buf, %zu): %s", nall, ddl_last_error());
        double ranks_sum = (double)size * (size + 1) / 2;
        for (size_t i = 0; i < nall; i++) {
            double want = i < n ? ranks_sum * (double)(i % 13) : 0;
            CHECK(f[i] == want, "float sum, count %zu: element %zu is %g, expected %g", n, i, f[i], want);
        }
        /* Four-argument form: min, max and product of floats. */
        static const DDL_Op ops[] = {DDL_OP_MIN, DDL_OP_MAX, DDL_OP_PRODUCT};
        for (int o = 0; o < 3; o++) {
            for (size_t i = 0; i < n; i++)
                f[i] = (float)(rank % 3 + 1) * (i % 2 ? -1.0f : 1.0f);
            CHECK(ddl_allreduce(f, n, DDL_TYPE_FLOAT, ops[o]) == DDL_SUCCESS, "op %d: %s", (int)ops[o],
                  ddl_last_error());
            for (size_t i = 0; i < n; i++) {
                double want = ops[o] == DDL_OP_PRODUCT ? 1 : 0;
                for (int r = 0; r < size; r++) {
                    double v = (r % 3 + 1) * (i % 2 ? -1.0 : 1.0);
                    want = ops[o] == DDL_OP_MIN ? (r ? fmin(want, v) : v)
                         : ops[o] == DDL_OP_MAX ? (r ? fmax(want, v) : v) : want * v;
                }
                CHECK(f[i] == want, "op %d, count %zu: element %zu is %g, expected %g", (int)ops[o], n, i, f[i], want);
            }
        }
        /* Half-precision sum. */
        uint16_t *h = malloc((n ? n : 1) * sizeof(uint16_t));
        for (size_t i = 0; i < n; i++)
            h[i] = to_half((float)(rank + (int)(i % 3)));
        CHECK(ddl_allreduce(h, n, DDL_TYPE_HALF, DDL_OP_SUM) == DDL_SUCCESS, "half: %s", ddl_last_error());
        for (size_t i = 0; i < n; i++) {
            double want = (double)size * (size - 1) / 2 + (double)size * (double)(i % 3);
            CHECK(from_half(h[i]) == want, "half, count %zu: element %zu is %g, expected %g", n, i, from_half(h[i]),
                  want);
        }
        free(h);
        free(f);
    }
    /* Bad input: a negative status that ddl_status_string names. */
    float x = 1;
    int st = ddl_allreduce(&x, 1, (DDL_Type)7, DDL_OP_SUM);
    CHECK(st < 0 && strcmp(ddl_status_string((ddl_status_t)st), "unknown status") != 0, "a bad type: status %d", st);
    CHECK(ddl_malloc((void **)&x, 0, 4) < 0, "ddl_malloc with alignment 0 succeeded");
    int all = 0, mine = failures;
    /* The sum of failures over ranks, through the API under test itself. */
    float ff = (float)mine;
    if (ddl_allreduce(&ff, 1) == DDL_SUCCESS)
        all = (int)ff;
    if (rank == 0)
        printf("PowerAI C: %d ranks, %d failures\n", size, all);
    CHECK(ddl_finalize() == DDL_SUCCESS, "ddl_finalize");
    return all || failures ? 1 : 0;
}
