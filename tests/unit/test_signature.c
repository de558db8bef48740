/* SPDX-License-Identifier: Apache-2.0 */
/* The packed signature that the owners' exchange compares (core/signature.c):
 * every field comes back from the key, no key word is negative (the exchange
 * marks a disagreement with a negative word), and signatures that differ in
 * any field, at any value its range allows, never share a key: two ranks
 * that called differently would otherwise pass the check. */
#include "config.h"

#include <check.h>

#include "unit.h"

#include <stdlib.h>
#include <string.h>

#include "choices.h"
#include "ddl_limits.h"
#include "signature.h"

/* Each field's values at the edges of its range (and one inside). */
static const int64_t counts[] = {0, 1, 7, (int64_t)DDL_MAX_BUFFER_BYTES};
static const uint64_t chunks[] = {0, 1, 65536, DDL_MAX_BUFFER_BYTES};
static const uint32_t seqs[] = {0, 1, 12345, UINT32_MAX};
static const int32_t bads[] = {0, DDL_SIG_NODE_DISAGREES, DDL_SIG_BAD_BUFFER};
static const int32_t colls[] = {0, 7}; /* the first collective and the most the key holds */
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static ddl_sig_t sig_at(int i)
{
    /* Mixed radix over the fields, so that every combination below comes once. */
    ddl_sig_t s = {0};
    s.count = counts[i % N(counts)], i /= N(counts);
    s.chunk = chunks[i % N(chunks)], i /= N(chunks);
    s.seq = seqs[i % N(seqs)], i /= N(seqs);
    s.bad = bads[i % N(bads)], i /= N(bads);
    s.coll = colls[i % N(colls)], i /= N(colls);
    s.dtype = i % DDL_DTYPE_COUNT, i /= DDL_DTYPE_COUNT;
    s.op = i % DDL_REDOP_COUNT, i /= DDL_REDOP_COUNT;
    s.algo = 1 + i % (DDL_ALGO_COUNT - 1), i /= DDL_ALGO_COUNT - 1;
    s.lane_algo = i % DDL_INTER_COUNT;
    return s;
}

static int total(void)
{
    return N(counts) * N(chunks) * N(seqs) * N(bads) * N(colls) * DDL_DTYPE_COUNT * DDL_REDOP_COUNT * (DDL_ALGO_COUNT - 1) *
           DDL_INTER_COUNT;
}

static int same_fields(const ddl_sig_t *a, const ddl_sig_t *b)
{
    return a->count == b->count && a->dtype == b->dtype && a->op == b->op && a->algo == b->algo &&
           a->lane_algo == b->lane_algo && a->chunk == b->chunk && a->seq == b->seq && a->bad == b->bad &&
           a->coll == b->coll;
}

typedef struct {
    int64_t key[DDL_SIG_KEY_WORDS];
} sig_key_t;

static int by_key(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(sig_key_t));
}

START_TEST(test_round_trip)
{
    for (int i = 0; i < total(); i++) {
        ddl_sig_t s = sig_at(i), back;
        int64_t key[DDL_SIG_KEY_WORDS];
        ddl_sig_key(&s, key);
        for (int w = 0; w < DDL_SIG_KEY_WORDS; w++)
            ck_assert_msg(key[w] >= 0, "signature %d: key word %d is negative", i, w);
        back = ddl_sig_from_key(key);
        ck_assert_msg(same_fields(&s, &back), "signature %d does not come back from its key", i);
        ck_assert_msg(ddl_sig_key_seq(key) == s.seq, "signature %d: its key's call number is %u, not %u", i,
                      (unsigned)ddl_sig_key_seq(key), (unsigned)s.seq);
    }
}
END_TEST

START_TEST(test_keys_differ)
{
    int n = total();
    sig_key_t *keys = malloc(sizeof(sig_key_t) * (size_t)n);
    ck_assert_ptr_nonnull(keys);
    for (int i = 0; i < n; i++) {
        ddl_sig_t s = sig_at(i);
        ddl_sig_key(&s, keys[i].key);
    }
    qsort(keys, (size_t)n, sizeof(sig_key_t), by_key);
    for (int i = 1; i < n; i++)
        ck_assert_msg(memcmp(&keys[i - 1], &keys[i], sizeof(sig_key_t)) != 0, "two of %d different signatures share a key",
                      n);
    free(keys);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("signature");
    TCase *tc = tcase_create("signature");
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_keys_differ);
    suite_add_tcase(s, tc);
    return ddl_unit_run(s);
}
