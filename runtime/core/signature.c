/* SPDX-License-Identifier: Apache-2.0 */
/* The always-on agreement check's signatures (signature.h): how one is
 * said, and its key (the node's checks of its control block are
 * node_checks.c; the owners' exchange between nodes is agree/).  Uses core
 * and the names of the settings' values (choices.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "choices.h"
#include "signature.h"

static const char *name_or(const char *name, char *buf, size_t len, long long v)
{
    if (name)
        return name;
    snprintf(buf, len, "%lld", v);
    return buf;
}

void ddl_sig_describe(const ddl_sig_t *s, char *buf, size_t len)
{
    char t[24], o[24], a[24];
    const char *dt = (unsigned)s->dtype < DDL_DTYPE_COUNT ? ddl_dtype_name((ddl_dtype_t)s->dtype) : NULL;
    const char *op = (unsigned)s->op < DDL_REDOP_COUNT ? ddl_redop_name((ddl_redop_t)s->op) : NULL;
    const char *al = (unsigned)s->algo < DDL_ALGO_COUNT ? ddl_algo_names[s->algo] : NULL;
    char k[24];
    const char *coll = (unsigned)s->coll < DDL_COLL_COUNT ? ddl_coll_names[s->coll] : NULL;
    snprintf(buf, len, "%s of count %lld, %s, %s, %s", name_or(coll, k, sizeof(k), s->coll), (long long)s->count,
             name_or(dt, t, sizeof(t), s->dtype),
             name_or(op, o, sizeof(o), s->op), name_or(al, a, sizeof(a), s->algo));
    size_t n = strlen(buf);
    if (s->algo == DDL_ALGO_MPI && s->lane_algo && n < len)
        n += (size_t)snprintf(buf + n, len - n, s->lane_algo == DDL_SIG_HALVES ? " (in halves)"
                                                                                : " (through the control block)");
    if (s->algo == DDL_ALGO_MPI && s->chunk && n < len)
        n += (size_t)snprintf(buf + n, len - n, " (started before the check)");
    if (s->algo != DDL_ALGO_MPI && n < len)
        n += (size_t)snprintf(buf + n, len - n, " (%s, chunk %llu)",
                              (unsigned)s->lane_algo < DDL_INTER_COUNT ? ddl_inter_algo_names[s->lane_algo] : "?",
                              (unsigned long long)s->chunk);
    if (n < len)
        snprintf(buf + n, len - n, ", call %u", (unsigned)s->seq);
}

/* The owners' exchange compares signatures packed into DDL_SIG_KEY_WORDS
 * words: the count, the chunk, and the rest in one word (from the lowest
 * bits: bad, lane_algo, algo, op, dtype, coll, seq).  Every field fits its bits
 * (below), so different signatures never pack alike, and the last word's
 * sign bit stays clear for the exchange's mark of a disagreement.  A small
 * call between nodes then sends 24 bytes of signature where the fields'
 * maxima and minima took 128, and each step of the exchange compares three
 * words (test_signature checks the packing). */
enum { K_COUNT = 0, K_CHUNK = 1, K_REST = 2 };
_Static_assert(K_REST == DDL_SIG_KEY_WORDS - 1, "the exchange's mark of a disagreement is in the rest's word");
#define BAD_BITS 2
#define LANE_BITS 8
#define ALGO_BITS 4
#define OP_BITS 6
#define DTYPE_BITS 6
#define COLL_BITS 3
#define BITS(n) ((UINT64_C(1) << (n)) - 1)
#define SEQ_SHIFT (BAD_BITS + LANE_BITS + ALGO_BITS + OP_BITS + DTYPE_BITS + COLL_BITS)
_Static_assert(DDL_SIG_KEY_WORDS == 3, "count, chunk, the rest");
_Static_assert(SEQ_SHIFT + 32 < 63, "seq's 32 bits above the rest, the sign bit clear");
_Static_assert(DDL_COLL_COUNT <= 1 << COLL_BITS, "coll fits");
_Static_assert(DDL_SIG_BAD_BUFFER < 1 << BAD_BITS && DDL_SIG_NODE_DISAGREES < 1 << BAD_BITS &&
               DDL_SIG_REFUSED < 1 << BAD_BITS, "bad fits");
_Static_assert(DDL_INTER_COUNT <= 1 << LANE_BITS, "lane_algo fits (on the MPI path: 0 or 1)");
_Static_assert(DDL_ALGO_COUNT <= 1 << ALGO_BITS, "algo fits");
_Static_assert(DDL_REDOP_COUNT <= 1 << OP_BITS && DDL_DTYPE_COUNT <= 1 << DTYPE_BITS, "op and dtype fit");

void ddl_sig_key(const ddl_sig_t *s, int64_t *k)
{
    uint64_t r = s->seq;
    r = r << COLL_BITS | ((uint64_t)s->coll & BITS(COLL_BITS));
    r = r << DTYPE_BITS | ((uint64_t)s->dtype & BITS(DTYPE_BITS));
    r = r << OP_BITS | ((uint64_t)s->op & BITS(OP_BITS));
    r = r << ALGO_BITS | ((uint64_t)s->algo & BITS(ALGO_BITS));
    r = r << LANE_BITS | ((uint64_t)s->lane_algo & BITS(LANE_BITS));
    r = r << BAD_BITS | ((uint64_t)s->bad & BITS(BAD_BITS));
    k[K_COUNT] = s->count; /* checked: 0 or more */
    k[K_CHUNK] = (int64_t)s->chunk; /* bytes of a buffer, or a flag */
    k[K_REST] = (int64_t)r;
}

int ddl_sig_key_versus(const int64_t *first, const int64_t *other)
{
    int bad = (int)(other[K_REST] & BITS(BAD_BITS)); /* the key's lowest field */
    if (bad == DDL_SIG_BAD_BUFFER || bad == DDL_SIG_REFUSED)
        return bad;
    return ddl_sig_key_same_but_bad(first, other) ? 0 : -1;
}

ddl_sig_t ddl_sig_from_key(const int64_t *k)
{
    uint64_t r = (uint64_t)k[K_REST];
    ddl_sig_t s = {.count = k[K_COUNT], .chunk = (uint64_t)k[K_CHUNK]};
    s.bad = (int32_t)(r & BITS(BAD_BITS));
    r >>= BAD_BITS;
    s.lane_algo = (int32_t)(r & BITS(LANE_BITS));
    r >>= LANE_BITS;
    s.algo = (int32_t)(r & BITS(ALGO_BITS));
    r >>= ALGO_BITS;
    s.op = (int32_t)(r & BITS(OP_BITS));
    r >>= OP_BITS;
    s.dtype = (int32_t)(r & BITS(DTYPE_BITS));
    r >>= DTYPE_BITS;
    s.coll = (int32_t)(r & BITS(COLL_BITS));
    s.seq = (uint32_t)(r >> COLL_BITS);
    return s;
}

int ddl_sig_key_same(const int64_t *a, const int64_t *b)
{
    return a[K_COUNT] == b[K_COUNT] && a[K_CHUNK] == b[K_CHUNK] && a[K_REST] == b[K_REST];
}

int ddl_sig_key_same_but_bad(const int64_t *a, const int64_t *b)
{
    return a[K_COUNT] == b[K_COUNT] && a[K_CHUNK] == b[K_CHUNK] &&
           ((a[K_REST] ^ b[K_REST]) & ~(int64_t)BITS(BAD_BITS)) == 0;
}

uint32_t ddl_sig_key_seq(const int64_t *key)
{
    return (uint32_t)((uint64_t)key[K_REST] >> SEQ_SHIFT);
}

int ddl_sig_key_follows(const int64_t *key, const int64_t *last)
{
    return ddl_sig_key_agreed(key) && key[K_COUNT] == last[K_COUNT] && key[K_CHUNK] == last[K_CHUNK] &&
           ((key[K_REST] ^ last[K_REST]) & BITS(SEQ_SHIFT)) == 0 &&
           ddl_sig_key_seq(key) == (uint32_t)(ddl_sig_key_seq(last) + 1);
}
