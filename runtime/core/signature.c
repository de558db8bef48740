/* SPDX-License-Identifier: Apache-2.0 */
/* The always-on agreement check (signature.h): the signatures' key and
 * their exchange among the owners (the node's checks of its control block
 * are node_checks.c).  Uses core and the names of the settings' values
 * (choices.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "choices.h"
#include "log.h"
#include "mpi_types.h"
#include "poll.h"
#include "reduce.h"
#include "signature.h"

/* A signature's fields as numbers, in this order (V_BAD: the last). */
enum { V_BAD = DDL_SIG_FIELDS - 1 };

static void to_vector(const ddl_sig_t *s, int64_t *v)
{
    int64_t f[DDL_SIG_FIELDS] = {s->count, s->dtype, s->op, s->algo, s->lane_algo, (int64_t)s->chunk, s->seq, s->bad};
    memcpy(v, f, sizeof(f));
}

static ddl_sig_t from_vector(const int64_t *v)
{
    return (ddl_sig_t){.count = v[0], .dtype = (int32_t)v[1], .op = (int32_t)v[2], .algo = (int32_t)v[3],
                       .lane_algo = (int32_t)v[4], .chunk = (uint64_t)v[5], .seq = (uint32_t)v[6],
                       .bad = (int32_t)v[7]};
}

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
    snprintf(buf, len, "count %lld, %s, %s, %s", (long long)s->count, name_or(dt, t, sizeof(t), s->dtype),
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
 * bits: bad, lane_algo, algo, op, dtype, seq).  Every field fits its bits
 * (below), so different signatures never pack alike, and the last word's
 * sign bit stays clear for the exchange's mark of a disagreement.  A small
 * call between nodes then sends 24 bytes of signature where the fields'
 * maxima and minima took 128, and each step of the exchange compares three
 * words (test_signature checks the packing). */
enum { K_COUNT = 0, K_CHUNK = 1, K_REST = 2 };
#define BAD_BITS 2
#define LANE_BITS 8
#define ALGO_BITS 4
#define OP_BITS 6
#define DTYPE_BITS 6
#define BITS(n) ((UINT64_C(1) << (n)) - 1)
#define SEQ_SHIFT (BAD_BITS + LANE_BITS + ALGO_BITS + OP_BITS + DTYPE_BITS)
_Static_assert(DDL_SIG_KEY_WORDS == 3, "count, chunk, the rest");
_Static_assert(BAD_BITS + LANE_BITS + ALGO_BITS + OP_BITS + DTYPE_BITS + 32 < 64, "seq's 32 bits above the rest");
_Static_assert(DDL_SIG_BAD_BUFFER < 1 << BAD_BITS && DDL_SIG_NODE_DISAGREES < 1 << BAD_BITS &&
               DDL_SIG_REFUSED < 1 << BAD_BITS, "bad fits");
_Static_assert(DDL_INTER_COUNT <= 1 << LANE_BITS, "lane_algo fits (on the MPI path: 0 or 1)");
_Static_assert(DDL_ALGO_COUNT <= 1 << ALGO_BITS, "algo fits");
_Static_assert(DDL_REDOP_COUNT <= 1 << OP_BITS && DDL_DTYPE_COUNT <= 1 << DTYPE_BITS, "op and dtype fit");

void ddl_sig_key(const ddl_sig_t *s, int64_t *k)
{
    uint64_t r = s->seq;
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
    s.seq = (uint32_t)(r >> DTYPE_BITS);
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

/* In the exchange a key stands for every signature combined into it so
 * far, all alike; once any two differ its last word says so instead (a key's
 * words are never negative).  Exact, where comparing maxima and minima took
 * twice the words. */
#define DISAGREE INT64_C(-1)

static int agreed(const int64_t *key)
{
    return key[K_REST] != DISAGREE;
}

/* The owners' exchange: what travels. */
typedef struct {
    int64_t key[DDL_SIG_KEY_WORDS];
    _Alignas(8) unsigned char data[DDL_SIG_MESSAGE_BYTES]; /* right after the key: see combine_msg */
} sig_msg_t;

#define KEY_BYTES ((int)sizeof(int64_t[DDL_SIG_KEY_WORDS]))

size_t ddl_sig_scratch_bytes(void)
{
    /* This rank's message, an inbox (a key's room before a message) and the
     * halves' vector; a multiple of 64: the caller's aligned_alloc asks for
     * that alignment. */
    return (2 * sizeof(sig_msg_t) + KEY_BYTES + DDL_SIG_HALVES_BYTES + 63) / 64 * 64;
}
_Static_assert((DDL_SIG_HALVES_BYTES + 64) / 2 <= DDL_SIG_MESSAGE_BYTES, "a half fits a message");
_Static_assert(DDL_SIG_EXCHANGE_BYTES <= DDL_SIG_MESSAGE_BYTES, "the exchange's data fits a message");

/* Point-to-point on a communicator of the exchange's own (the owners').  A
 * message with its key has SIG_TAG; one that repeats the last agreed
 * signature (ddl_sig_last_t) has REPEAT_TAG plus its call number modulo the
 * tags there are.  The receives take any tag from their peer: its next
 * message there is always the exchange's (the halves' allgather, on its own
 * tag, follows only an exchange that every rank completed). */
#define SIG_TAG 0x5d1
#define REPEAT_TAG 0x1000
#define REPEAT_TAG_SPAN (1 << 16)

/* Between ranks that MPI reaches through shared memory a message of up to
 * SIG_WHOLE_BYTES goes in pieces of at most this many bytes, so that a call's
 * data up to 8 KiB (DDL_SIG_DATA_BYTES) never waits for its receiver: Open
 * MPI's shared-memory transport sends at most 4 KiB at once
 * (btl_vader_eager_limit, its header included; measured between 2 virtual
 * nodes: 4 KiB took 2.2 us as one message against MPI_Allreduce's 1.0 us, and
 * 1.0 us with the limit raised to 8 KiB).  A full piece says that another
 * follows (possibly empty), up to SIG_PIECES, whose last holds the rest: the
 * receiver learns of each from the lengths alone, so ranks that called
 * differently still match every message.  Between hosts a message is one
 * piece: the network transports send up to 64 KiB at once, and there the
 * pieces cost (measured on the emulated 2 x 2 x 2 cluster: 16 KiB 1.33-1.48x
 * MPI_Allreduce as one message, 0.95-0.99x in three). */
#define SIG_PIECE_BYTES 4032
#define SIG_PIECES 3
/* A longer message goes whole, as MPI_Allreduce's own: its rest would take
 * the transport's slower path anyway, and the pieces before it cost their
 * own sends.  The receiver's first receive has room for it, and tells it
 * from a piece by its length (longer than one). */
#define SIG_WHOLE_BYTES (SIG_PIECES * SIG_PIECE_BYTES)
_Static_assert(SIG_WHOLE_BYTES >= SIG_PIECE_BYTES, "a whole message is longer than a piece");
_Static_assert(SIG_PIECE_BYTES > offsetof(sig_msg_t, data), "the first piece holds the signatures");
_Static_assert(SIG_PIECES * SIG_PIECE_BYTES >= offsetof(sig_msg_t, data) + DDL_SIG_DATA_BYTES,
               "the data that always rides with the signatures goes in pieces of at most SIG_PIECE_BYTES");

/* Open MPI's shared-memory transport writes a message of up to this many
 * bytes straight into the receiver's queue (btl_vader_max_inline_send); a
 * longer one takes its slower path.  A call of 256 bytes fits there as
 * MPI_Allreduce's message but not with the key before it (280 bytes: 0.58 us
 * against 0.42 for 232 bytes between 2 virtual nodes, MPI_Allreduce's 256
 * bytes 0.24), so such a message goes as two that each fit: the key alone,
 * marked with KEY_APART (counts are below 2^57), then the data. */
#define SIG_INLINE_BYTES 256
#define KEY_APART (INT64_C(1) << 62)

_Static_assert(KEY_BYTES == offsetof(sig_msg_t, data), "the data follows the key at once");

/* The tag of this rank's next message, whose key is `key`: REPEAT_TAG and
 * the call number where it repeats p->last, else SIG_TAG. */
static int message_tag(const ddl_sig_peers_t *p, const int64_t *key)
{
    ddl_sig_last_t *l = p->last;
    if (!l || !l->valid)
        return SIG_TAG;
    if (!l->tag_span) { /* the same on every process (MPI_TAG_UB), at least 32767 */
        int *ub = NULL, flag = 0;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
        int span = flag && ub && *ub > REPEAT_TAG ? *ub - REPEAT_TAG + 1 : -1;
        l->tag_span = span > REPEAT_TAG_SPAN ? REPEAT_TAG_SPAN : span;
    }
    uint64_t seq = (uint64_t)key[K_REST] >> SEQ_SHIFT, last_seq = (uint64_t)l->key[K_REST] >> SEQ_SHIFT;
    int repeat = l->tag_span > 0 && agreed(key) && key[K_COUNT] == l->key[K_COUNT] &&
                 key[K_CHUNK] == l->key[K_CHUNK] && ((key[K_REST] ^ l->key[K_REST]) & BITS(SEQ_SHIFT)) == 0 &&
                 seq == ((last_seq + 1) & BITS(32));
    return repeat ? REPEAT_TAG + (int)(seq % (uint64_t)l->tag_span) : SIG_TAG;
}

/* After an exchange: what the next call may repeat (key: the verdict every
 * rank reached, NULL when this rank's exchange failed or its signature is
 * marked bad). */
static void remember(const ddl_sig_peers_t *p, const int64_t *key)
{
    if (!p->last)
        return;
    p->last->valid = key && agreed(key);
    if (p->last->valid)
        memcpy(p->last->key, key, sizeof(p->last->key));
}

/* A peer's message as it came to an inbox (KEY_BYTES of room, then where
 * the message lands): with its key, as sent; a repeat's data lands right
 * after the room, which then gets this rank's key, so either reads as a
 * sig_msg_t.  Messages of the two kinds, or repeats of different calls,
 * disagree (their key marked so): both ends see the same two tags.
 * *got: the message's bytes, its key included. */
static sig_msg_t *arrived(unsigned char *inbox, int their_tag, int my_tag, const int64_t *my_key, int *got)
{
    sig_msg_t *m = (sig_msg_t *)(inbox + KEY_BYTES);
    if (their_tag != SIG_TAG) {
        m = (sig_msg_t *)inbox;
        memcpy(m->key, my_key, KEY_BYTES);
        *got += KEY_BYTES;
    }
    if (their_tag != my_tag)
        m->key[K_REST] = DISAGREE;
    return m;
}

static int key_apart(int len)
{
    return len > SIG_INLINE_BYTES && len - (int)offsetof(sig_msg_t, data) <= SIG_INLINE_BYTES;
}

/* One swap with a peer: the receives of the pieces (each posted when the one
 * before it came full), or of the key apart and then the rest in one; then
 * the sends. */
typedef struct {
    MPI_Request req[2 * SIG_PIECES];
    MPI_Comm comm;
    int peer;
    unsigned char *recv; /* where the message lands (an inbox's, after its room) */
    int pieces;  /* SIG_PIECES, or 1: the whole message at once */
    int piece;   /* the bytes of a full piece */
    int awaited; /* the piece received next; pieces: all came */
    int got;     /* bytes received so far */
    int apart;   /* the key came apart: the next message is the last */
    int tag;     /* the message's, from its first part on (a repeat's pieces have it too) */
} swap_t;

static int swap_step(void *arg)
{
    swap_t *w = arg;
    while (w->awaited < w->pieces) {
        int in = 0, n = 0;
        MPI_Status st;
        if (MPI_Test(&w->req[w->awaited], &in, &st) != MPI_SUCCESS)
            return DDL_ERR_MPI;
        if (!in)
            return 0;
        MPI_Get_count(&st, MPI_BYTE, &n);
        if (w->tag < 0)
            w->tag = st.MPI_TAG;
        w->got += n;
        int64_t *key = (int64_t *)w->recv;
        if (!w->apart && w->tag == SIG_TAG && w->got == KEY_BYTES && (key[K_COUNT] & KEY_APART)) {
            key[K_COUNT] &= ~KEY_APART;
            w->apart = 1;
            w->awaited = w->pieces - 1; /* the rest, in the last receive */
        } else if (w->apart || n != w->piece || ++w->awaited == w->pieces) { /* shorter: the last; longer: whole */
            w->awaited = w->pieces;
            break;
        }
        int room = w->awaited < w->pieces - 1 ? w->piece : (int)sizeof(sig_msg_t) - w->got;
        if (MPI_Irecv(w->recv + w->got, room, MPI_BYTE, w->peer, w->tag, w->comm, &w->req[w->awaited]) != MPI_SUCCESS)
            return DDL_ERR_MPI;
    }
    int done = 0;
    if (MPI_Testall(SIG_PIECES, w->req + SIG_PIECES, &done, ddl_mpi_statuses_ignore()) != MPI_SUCCESS)
        return DDL_ERR_MPI;
    return done;
}

/* Whether MPI reaches `peer` through shared memory (unknown: not). */
static int shares_host(const ddl_sig_peers_t *p, int peer)
{
    return p->world_of && p->shm_host && p->shm_host[p->world_of[p->rank]] == p->shm_host[p->world_of[peer]];
}

/* How a wait of the owners' exchange for `peer` ended (ddl_poll's st), said
 * for `what` ("exchange of signatures", "allgather of the halves"). */
static ddl_status_t wait_outcome(ddl_status_t st, int peer, const ddl_sig_peers_t *p, const char *what)
{
    if (st == DDL_ERR_TIMED_OUT)
        return ddl_error(st, "ddl_allreduce: rank %d (an owner) did not take part in this call's %s within %.1f s "
                         "(DDL_TIMEOUT): it, or a rank of its node, may have stopped, or stopped calling "
                         "ddl_allreduce", p->world_of ? p->world_of[peer] : peer, what, p->timeout);
    if (st == DDL_ERR_PEER_FAILED) /* the caller names the rank that failed */
        return st;
    if (st != DDL_OK)
        return ddl_error(st, "ddl_allreduce: the owners' %s failed in MPI", what);
    return DDL_OK;
}

/* Send `send` (send_len bytes, its key included) with `tag` to and/or
 * receive into `inbox` from `peer` (either may be NULL), within the
 * deadline; *got: the bytes received, *their_tag: their tag.  data: where
 * the message's data is, when not in send after the key (it then goes apart
 * from the key, uncopied).  With a repeat's tag the data goes alone. */
static ddl_status_t swap(const ddl_sig_peers_t *p, int peer, const sig_msg_t *send, const void *data, int send_len,
                         int tag, unsigned char *inbox, int *got, int *their_tag)
{
    MPI_Comm comm = p->comm;
    int shared = shares_host(p, peer);
    swap_t w = {.comm = comm, .peer = peer, .recv = inbox ? inbox + KEY_BYTES : NULL, .tag = -1,
                .pieces = shared ? SIG_PIECES : 1, .piece = shared ? SIG_PIECE_BYTES : (int)sizeof(sig_msg_t)};
    w.awaited = inbox ? 0 : w.pieces;
    for (int i = 0; i < 2 * SIG_PIECES; i++)
        w.req[i] = MPI_REQUEST_NULL;
    /* The first receive has room for a whole message (SIG_WHOLE_BYTES). */
    if (inbox && MPI_Irecv(w.recv, (int)sizeof(sig_msg_t), MPI_BYTE, peer, MPI_ANY_TAG, comm, &w.req[0]) !=
                     MPI_SUCCESS)
        return ddl_error(DDL_ERR_MPI, "ddl_allreduce: the owners' signature exchange failed in MPI");
    const unsigned char *from = (const unsigned char *)send;
    if (send && tag != SIG_TAG) { /* a repeat: no key */
        from = data ? data : send->data;
        send_len -= KEY_BYTES;
        data = NULL;
    }
    int64_t head[DDL_SIG_KEY_WORDS]; /* the key apart, marked; sent before this returns */
    if (send && tag == SIG_TAG && (data || (shared && key_apart(send_len)))) {
        memcpy(head, send->key, sizeof(head));
        head[K_COUNT] |= KEY_APART;
        if (MPI_Isend(head, (int)sizeof(head), MPI_BYTE, peer, SIG_TAG, comm, &w.req[SIG_PIECES]) != MPI_SUCCESS ||
            MPI_Isend(data ? data : send->data, send_len - (int)sizeof(head), MPI_BYTE, peer, SIG_TAG, comm,
                      &w.req[SIG_PIECES + 1]) != MPI_SUCCESS)
            return ddl_error(DDL_ERR_MPI, "ddl_allreduce: the owners' signature exchange failed in MPI");
        send = NULL;
    }
    int pieces = send_len > SIG_WHOLE_BYTES ? 1 : w.pieces;
    for (int k = 0, off = 0; send && k < pieces; k++) {
        int n = k < pieces - 1 && send_len - off > w.piece ? w.piece : send_len - off;
        if (MPI_Isend(from + off, n, MPI_BYTE, peer, tag, comm, &w.req[SIG_PIECES + k]) != MPI_SUCCESS)
            return ddl_error(DDL_ERR_MPI, "ddl_allreduce: the owners' signature exchange failed in MPI");
        off += n;
        if (n < w.piece)
            break;
    }
    ddl_status_t st = wait_outcome(ddl_poll(swap_step, &w, p->timeout, p->abort), peer, p, "exchange of signatures");
    if (st == DDL_OK) {
        *got = w.got;
        *their_tag = w.tag;
    }
    return st;
}

/* theirs into mine (this rank's signature s): the key stays while both
 * stand for one and the same signature; the data is reduced only then, and
 * when that signature carries data, the lower rank's first: this rank's
 * (from src) and theirs into out.  1 when it was. */
static int combine_msg(sig_msg_t *mine, const sig_msg_t *theirs, int their_len, int me_first, const ddl_sig_t *s,
                       const void *src, void *out)
{
    int same = agreed(mine->key) && ddl_sig_key_same(mine->key, theirs->key);
    if (!same) {
        mine->key[K_REST] = DISAGREE;
        return 0;
    }
    /* Still this rank's own key, from s, whose checks passed: the type, op
     * and count are valid.  The length is checked all the same. */
    if (s->algo != DDL_ALGO_MPI || s->lane_algo != 1 || s->bad != 0 ||
        (size_t)their_len < offsetof(sig_msg_t, data) + (size_t)s->count * ddl_dtype_size((ddl_dtype_t)s->dtype))
        return 0;
    ddl_reduce_fn_t fn = ddl_reduce_fn((ddl_dtype_t)s->dtype, (ddl_redop_t)s->op);
    fn(out, me_first ? src : theirs->data, me_first ? theirs->data : src, (size_t)s->count);
    return 1;
}

/* This rank's message for a swap, whose key mine->key holds: its length and
 * where its data goes from (*apart; NULL: in mine after the key).  The data
 * (bytes, at *src) goes only while every key met so far agreed; with a key
 * it follows the key at once, copied there (a small call's 24 bytes of key
 * and 8 of data then fit one cache line with Open MPI's headers: measured
 * between 2 virtual nodes, 8 bytes took 0.04-0.1 us less than 56 over the
 * same exchange), and *src then points there; a repeat's goes alone, from
 * where it is. */
static int message(sig_msg_t *mine, int tag, const unsigned char **src, size_t bytes, const void **apart)
{
    *apart = NULL;
    if (!bytes || !agreed(mine->key))
        return KEY_BYTES;
    if (tag != SIG_TAG)
        *apart = *src;
    else if (*src != mine->data) {
        memcpy(mine->data, *src, bytes);
        *src = mine->data;
    }
    return KEY_BYTES + (int)bytes;
}

ddl_status_t ddl_sig_exchange_data(ddl_sig_exchange_t *x, const ddl_sig_peers_t *p, const ddl_sig_t *s,
                                   const void *data, void *result, void *scratch, int group)
{
    x->world_rank = p->world_rank;
    x->comm = p->comm;
    x->mine = *s;
    sig_msg_t *mine = scratch, *theirs;
    unsigned char *inbox = (unsigned char *)(mine + 1);
    ddl_sig_key(s, mine->key);
    size_t bytes = data ? (size_t)s->count * ddl_dtype_size((ddl_dtype_t)s->dtype) : 0;
    /* This rank's data so far: the caller's, until a round reduces it into
     * mine->data or, in the last round, where every key has been met, into
     * result. */
    const unsigned char *src = data;
    unsigned char *out = result && s->bad == 0 ? result : mine->data;
    const void *apart;
    int len, got = 0, size = p->size, rank = p->rank;
    int core = 1;
    while (core * 2 <= size)
        core *= 2;
    if (core != size || group < 1 || (group & (group - 1)) != 0)
        group = 1; /* the groups are not the doubling's blocks: every round runs */
    ddl_status_t st = DDL_OK;
    int tag, their_tag = SIG_TAG; /* this rank's message's, as its key stands; the peer's */
    if (rank >= core) { /* an extra rank: in through its partner, and the result back */
        tag = message_tag(p, mine->key);
        len = message(mine, tag, &src, bytes, &apart);
        st = swap(p, rank - core, mine, apart, len, tag, NULL, &got, &their_tag);
        if (st == DDL_OK && (st = swap(p, rank - core, NULL, NULL, 0, 0, inbox, &got, &their_tag)) == DDL_OK) {
            theirs = arrived(inbox, their_tag, tag, mine->key, &got);
            memcpy(mine->key, theirs->key, KEY_BYTES);
            if (agreed(mine->key) && (size_t)got >= offsetof(sig_msg_t, data) + bytes)
                src = theirs->data;
        }
    } else {
        if (rank + core < size &&
            (st = swap(p, rank + core, NULL, NULL, 0, 0, inbox, &got, &their_tag)) == DDL_OK) {
            theirs = arrived(inbox, their_tag, message_tag(p, mine->key), mine->key, &got);
            if (combine_msg(mine, theirs, got, 1, s, src, mine->data)) /* the rounds follow (group is 1) */
                src = mine->data;
        }
        for (int mask = group; mask < core && st == DDL_OK; mask <<= 1) { /* below group: agreed */
            int peer = rank ^ mask;
            tag = message_tag(p, mine->key);
            len = message(mine, tag, &src, bytes, &apart);
            if ((st = swap(p, peer, mine, apart, len, tag, inbox, &got, &their_tag)) != DDL_OK)
                break;
            theirs = arrived(inbox, their_tag, tag, mine->key, &got);
            unsigned char *to = mask * 2 == core ? out : mine->data; /* the last round: every key met */
            if (combine_msg(mine, theirs, got, rank < peer, s, src, to))
                src = to;
        }
        if (st == DDL_OK && rank + core < size) {
            tag = message_tag(p, mine->key);
            len = message(mine, tag, &src, bytes, &apart);
            st = swap(p, rank + core, mine, apart, len, tag, NULL, &got, &their_tag);
        }
    }
    remember(p, st == DDL_OK && s->bad == 0 ? mine->key : NULL);
    if (st == DDL_OK) {
        memcpy(x->key, mine->key, sizeof(x->key));
        /* Only when every signature agreed: a mismatch writes nothing. */
        if (result && bytes && agreed(mine->key) && s->bad == 0 && src != result) /* agreed: the key is s's */
            memcpy(result, src, bytes);
    }
    return st;
}

/* The allgather of the halves: a plain pair of messages, on a tag of its
 * own (every rank is in it, having agreed). */
#define HALVES_TAG 0x5d2
/* The largest range the halves' last round swaps whole.  Measured on the
 * emulated 2 x 2 x 2 rails with links that serialise (bench/JOURNAL.md): a
 * call of 16 KiB (8 KiB swapped whole) took 1.25-1.37x MPI_Allreduce
 * against 0.90-0.97x halved and gathered back, 32 KiB (16 KiB whole)
 * 0.96-1.00x against 0.91-0.98x; 64 KiB (32 KiB whole) 268-304 us against
 * 262-269, a loss.  Not between ranks of one host, where a crossing costs
 * little and a message goes in pieces: there 16 KiB took 0.87-0.90x whole
 * against 0.95-1.01x halved. */
#define HALVES_WHOLE_BYTES (16 * 1024)

ddl_status_t ddl_sig_exchange_halves(ddl_sig_exchange_t *x, const ddl_sig_peers_t *p, const ddl_sig_t *s,
                                     const void *data, void *result, void *scratch)
{
    x->world_rank = p->world_rank;
    x->comm = p->comm;
    x->mine = *s;
    sig_msg_t *mine = scratch, *theirs;
    unsigned char *inbox = (unsigned char *)(mine + 1);
    unsigned char *vec = inbox + KEY_BYTES + sizeof(sig_msg_t); /* the ranges reduced so far, by element index */
    ddl_sig_key(s, mine->key);
    int size = p->size, rank = p->rank, got = 0;
    MPI_Comm comm = p->comm;
    if (size & (size - 1))
        return ddl_error(DDL_ERR_INTERNAL, "ddl_allreduce: the exchange in halves needs a power of two of owners, "
                         "not %d", size);
    size_t esize = ddl_dtype_size((ddl_dtype_t)s->dtype), lo = 0, hi = data ? (size_t)s->count : 0;
    size_t range_lo[32], range_hi[32]; /* this rank's range before each round's split */
    ddl_reduce_fn_t fn = data ? ddl_reduce_fn((ddl_dtype_t)s->dtype, (ddl_redop_t)s->op) : NULL;
    const unsigned char *src = data; /* the first round reads the caller's buffer */
    ddl_status_t st = DDL_OK;
    int level = 0, top_whole = 0;
    for (int mask = 1; mask < size && st == DDL_OK; mask <<= 1, level++) {
        int peer = rank ^ mask, upper = (rank & mask) != 0;
        /* The last round (between the nodes, on 2) swaps its whole range
         * when that is small (HALVES_WHOLE_BYTES) and the peer on another
         * host: the bytes of halving it and gathering it back, in one
         * crossing instead of two.  Both ranks reduce it alike, so both hold
         * the same bits; each pair decides for itself. */
        top_whole = mask == size >> 1 && (hi - lo) * esize <= HALVES_WHOLE_BYTES && !shares_host(p, peer);
        size_t mid = lo + (hi - lo) / 2;
        size_t keep_lo = top_whole || !upper ? lo : mid, keep_hi = top_whole || upper ? hi : mid;
        size_t send_lo = top_whole || upper ? lo : mid, send_hi = top_whole || !upper ? hi : mid;
        /* The data goes only while every key met so far is this one; a
         * long range apart from the key, uncopied (SIG_WHOLE_BYTES), else as
         * the exchange's (message()). */
        int with_data = data && agreed(mine->key), tag = message_tag(p, mine->key), their_tag = SIG_TAG;
        size_t sent = with_data ? (send_hi - send_lo) * esize : 0, want = (keep_hi - keep_lo) * esize;
        const unsigned char *from = src + send_lo * esize;
        const void *apart = from;
        int len = KEY_BYTES + (int)sent;
        if (sent <= SIG_WHOLE_BYTES)
            len = message(mine, tag, &from, sent, &apart);
        st = swap(p, peer, mine, apart, len, tag, inbox, &got, &their_tag);
        if (st != DDL_OK)
            break;
        theirs = arrived(inbox, their_tag, tag, mine->key, &got);
        if (!agreed(mine->key) || !ddl_sig_key_same(mine->key, theirs->key) ||
            (with_data && (size_t)got != offsetof(sig_msg_t, data) + want)) {
            mine->key[K_REST] = DISAGREE;
        } else if (with_data && want) { /* the lower rank's operand first, as the exchange */
            /* After the last round's compare every key met is this one, all
             * the owners': its range is the call's result, reduced straight
             * into it (the caller's buffer is read only in the first round,
             * and a send from it has completed). */
            int final = mask == size >> 1 && s->bad == 0;
            const unsigned char *a = src + keep_lo * esize, *b = theirs->data;
            fn((final ? (unsigned char *)result : vec) + keep_lo * esize, rank < peer ? a : b, rank < peer ? b : a,
               keep_hi - keep_lo);
        }
        range_lo[level] = lo;
        range_hi[level] = hi;
        lo = keep_lo;
        hi = keep_hi;
        src = vec;
    }
    memcpy(x->key, mine->key, sizeof(x->key));
    remember(p, st == DDL_OK && s->bad == 0 ? mine->key : NULL);
    /* Only when every signature agreed: a mismatch writes nothing. */
    if (st != DDL_OK || !data || !agreed(mine->key) || s->bad != 0) /* agreed: the key is still s's */
        return st;
    unsigned char *out = result;
    if (size == 1 && out != src) /* no round reduced into it */
        memcpy(out, src, (hi - lo) * esize);
    if (top_whole) /* that round gathered nothing to give back */
        level--;
    for (int mask = 1 << level >> 1; mask >= 1; mask >>= 1) {
        int peer = rank ^ mask, upper = (rank & mask) != 0; /* as in the split */
        size_t whole_lo = range_lo[--level], whole_hi = range_hi[level];
        size_t peer_lo = upper ? whole_lo : hi, peer_hi = upper ? lo : whole_hi;
        MPI_Request req[2];
        if (MPI_Irecv(out + peer_lo * esize, (int)((peer_hi - peer_lo) * esize), MPI_BYTE, peer, HALVES_TAG, comm,
                      &req[0]) != MPI_SUCCESS ||
            MPI_Isend(out + lo * esize, (int)((hi - lo) * esize), MPI_BYTE, peer, HALVES_TAG, comm, &req[1]) !=
                MPI_SUCCESS)
            return ddl_error(DDL_ERR_MPI, "ddl_allreduce: the owners' allgather of the halves failed in MPI");
        ddl_mpi_wait_t w = {req, NULL, 2};
        st = wait_outcome(ddl_poll(ddl_mpi_done, &w, p->timeout, p->abort), peer, p, "allgather of the halves");
        if (st != DDL_OK)
            return st;
        lo = whole_lo;
        hi = whole_hi;
    }
    return DDL_OK;
}

/* Which two ranks differ, and how: every rank of comm knows there is a
 * difference, so all of them gather the signatures with their world ranks. */
static ddl_status_t name_mismatch(ddl_sig_exchange_t *x, const char (*hosts)[DDL_HOST_LEN], const char *where)
{
    enum { W = DDL_SIG_FIELDS + 1 };
    int size;
    MPI_Comm_size(x->comm, &size);
    int64_t mine[W], *all = malloc(sizeof(mine) * (size_t)size);
    if (!all)
        return ddl_error(DDL_ERR_MISMATCH, "%s: ranks called ddl_allreduce with different arguments (out of memory "
                         "naming them)", where);
    to_vector(&x->mine, mine);
    mine[DDL_SIG_FIELDS] = x->world_rank;
    MPI_Allgather(mine, W, MPI_INT64_T, all, W, MPI_INT64_T, x->comm);
    int a = 0, b = -1;
    int why = 0;
    for (int r = 0; r < size && b < 0; r++)
        if ((why = (int)all[r * W + V_BAD]) != 0) /* it said so itself, and its message says more */
            a = b = r;
    for (int r = 1; r < size && b < 0; r++)
        if (memcmp(&all[r * W], all, sizeof(int64_t) * DDL_SIG_FIELDS) != 0)
            b = r;
    if (b < 0)
        b = 0;
    ddl_sig_t sa = from_vector(&all[a * W]), sb = from_vector(&all[b * W]);
    int wa = (int)all[a * W + DDL_SIG_FIELDS], wb = (int)all[b * W + DDL_SIG_FIELDS];
    free(all);
    char da[160], db[160];
    ddl_sig_describe(&sa, da, sizeof(da));
    ddl_sig_describe(&sb, db, sizeof(db));
    if (a == b && why == DDL_SIG_BAD_BUFFER)
        return ddl_error(DDL_ERR_INVALID_ARG, "%s: an owner on the node of rank %d (%s) passed buffers it cannot use "
                         "(its message says why)", where, wa, hosts[wa]);
    if (a == b && why == DDL_SIG_REFUSED)
        return ddl_error(DDL_ERR_MISMATCH, "%s: ranks called it differently: rank %d on %s refused its own arguments "
                         "to this call (its message says why); the call fails on every rank, and the next one pairs "
                         "up as usual", where, wa, hosts[wa]);
    if (a == b)
        return ddl_error(DDL_ERR_MISMATCH, "%s: ranks called it differently on the node of rank %d (%s), whose "
                         "messages name them; every rank must pass the same count, type and op, in the same order",
                         where, wa, hosts[wa]);
    return ddl_error(DDL_ERR_MISMATCH, "%s: ranks called it differently: rank %d on %s with %s; rank %d on %s with %s; "
                     "every rank must pass the same count, type and op, in the same order", where, wa, hosts[wa], da,
                     wb, hosts[wb], db);
}

ddl_status_t ddl_sig_finish(ddl_sig_exchange_t *x, const char (*hosts)[DDL_HOST_LEN], const char *where)
{
    if (!agreed(x->key) || x->mine.bad != 0) /* agreed: the key is this rank's */
        return name_mismatch(x, hosts, where);
    return DDL_OK;
}
