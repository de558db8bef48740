/* SPDX-License-Identifier: Apache-2.0 */
/* The owners' exchange's messages (sig_msg.h).  Uses core. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "log.h"
#include "mpi_types.h"
#include "poll.h"
#include "sig_msg.h"

size_t ddl_sig_scratch_bytes(void)
{
    /* This rank's message, an inbox (a key's room before a message) and the
     * halves' vector; a multiple of 64: the caller's aligned_alloc asks for
     * that alignment. */
    return (2 * sizeof(ddl_sig_msg_t) + KEY_BYTES + DDL_SIG_HALVES_BYTES + 63) / 64 * 64;
}
_Static_assert((DDL_SIG_HALVES_BYTES + 64) / 2 <= DDL_SIG_MESSAGE_BYTES, "a half fits a message");
_Static_assert(DDL_SIG_EXCHANGE_BYTES <= DDL_SIG_MESSAGE_BYTES, "the exchange's data fits a message");

/* Open MPI's shared-memory transport writes a message of up to this many
 * bytes straight into the receiver's queue (btl_vader_max_inline_send); a
 * longer one takes its slower path.  A call of 256 bytes fits there as
 * MPI_Allreduce's message but not with the key before it (280 bytes: 0.58 us
 * against 0.42 for 232 bytes between 2 virtual nodes, MPI_Allreduce's 256
 * bytes 0.24), so such a message goes as two that each fit: the key alone,
 * marked with DDL_SIG_KEY_MARK, then the data. */
#define SIG_INLINE_BYTES 256

_Static_assert(KEY_BYTES == offsetof(ddl_sig_msg_t, data), "the data follows the key at once");

int ddl_sig_msg_tag(const ddl_sig_peers_t *p, const int64_t *key)
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
    if (l->tag_span <= 0 || !ddl_sig_key_follows(key, l->key))
        return SIG_TAG;
    return REPEAT_TAG + (int)(ddl_sig_key_seq(key) % (uint32_t)l->tag_span);
}

void ddl_sig_remember(const ddl_sig_peers_t *p, const int64_t *key)
{
    if (!p->last)
        return;
    p->last->valid = key && ddl_sig_key_agreed(key);
    if (p->last->valid)
        memcpy(p->last->key, key, sizeof(p->last->key));
}

ddl_sig_msg_t *ddl_sig_arrived(unsigned char *inbox, int their_tag, int my_tag, const int64_t *my_key, int *got)
{
    ddl_sig_msg_t *m = (ddl_sig_msg_t *)(inbox + KEY_BYTES);
    if (their_tag != SIG_TAG) {
        m = (ddl_sig_msg_t *)inbox;
        memcpy(m->key, my_key, KEY_BYTES);
        *got += KEY_BYTES;
    }
    if (their_tag != my_tag)
        ddl_sig_key_disagree(m->key);
    return m;
}

static int key_apart(int len)
{
    return len > SIG_INLINE_BYTES && len - (int)offsetof(ddl_sig_msg_t, data) <= SIG_INLINE_BYTES;
}

/* One swap with a peer: the receives of the pieces (each posted when the one
 * before it came full), or of the key apart and then the rest in one; then
 * the sends. */
typedef struct {
    MPI_Request req[2 * SIG_PIECES];
    MPI_Comm comm;
    int peer;
    int world_peer; /* for a timeout's message */
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
        if (!w->apart && w->tag == SIG_TAG && w->got == KEY_BYTES && (key[0] & DDL_SIG_KEY_MARK)) {
            key[0] &= ~DDL_SIG_KEY_MARK;
            w->apart = 1;
            w->awaited = w->pieces - 1; /* the rest, in the last receive */
        } else if (w->apart || n != w->piece || ++w->awaited == w->pieces) { /* shorter: the last; longer: whole */
            w->awaited = w->pieces;
            break;
        }
        int room = w->awaited < w->pieces - 1 ? w->piece : (int)sizeof(ddl_sig_msg_t) - w->got;
        if (MPI_Irecv(w->recv + w->got, room, MPI_BYTE, w->peer, w->tag, w->comm, &w->req[w->awaited]) != MPI_SUCCESS)
            return DDL_ERR_MPI;
    }
    int done = 0;
    if (MPI_Testall(SIG_PIECES, w->req + SIG_PIECES, &done, ddl_mpi_statuses_ignore()) != MPI_SUCCESS)
        return DDL_ERR_MPI;
    return done;
}

int ddl_sig_shares_host(const ddl_sig_peers_t *p, int peer)
{
    return p->world_of && p->shm_host && p->shm_host[p->world_of[p->rank]] == p->shm_host[p->world_of[peer]];
}

/* After a timeout: whom the exchange waited for, and what the reader may
 * suspect. */
#define OWNER_HINT "it, or a rank of its node, may have stopped, or stopped calling ddl_allreduce"
static void name_owner(int world_peer, char *buf, size_t len)
{
    snprintf(buf, len, "rank %d (an owner)", world_peer);
}

static void waiting_for_owner(void *arg, char *buf, size_t len)
{
    name_owner(((const swap_t *)arg)->world_peer, buf, len);
}

struct pair_wait {
    ddl_mpi_wait_t requests;
    int world_peer;
};

static int pair_done(void *arg)
{
    return ddl_mpi_done(&((struct pair_wait *)arg)->requests);
}

static void waiting_for_pair(void *arg, char *buf, size_t len)
{
    name_owner(((const struct pair_wait *)arg)->world_peer, buf, len);
}

ddl_status_t ddl_sig_wait_pair(const ddl_sig_peers_t *p, int peer, MPI_Request *req)
{
    struct pair_wait w = {{req, NULL, 2}, p->world_of ? p->world_of[peer] : peer};
    ddl_wait_how_t how = {"ddl_allreduce: the owners' allgather of the halves", p->timeout, p->abort, waiting_for_pair,
                      OWNER_HINT};
    ddl_status_t st = ddl_wait_until(&how, pair_done, &w);
    return st == DDL_ERR_MPI ? ddl_error(st, "ddl_allreduce: the owners' allgather of the halves failed in MPI") : st;
}

ddl_status_t ddl_sig_swap(const ddl_sig_peers_t *p, int peer, const ddl_sig_msg_t *send, const void *data,
                          int send_len, int tag, unsigned char *inbox, int *got, int *their_tag)
{
    MPI_Comm comm = p->comm;
    int shared = ddl_sig_shares_host(p, peer);
    swap_t w = {.comm = comm,
                .peer = peer,
                .world_peer = p->world_of ? p->world_of[peer] : peer,
                .recv = inbox ? inbox + KEY_BYTES : NULL,
                .tag = -1,
                .pieces = shared ? SIG_PIECES : 1,
                .piece = shared ? SIG_PIECE_BYTES : (int)sizeof(ddl_sig_msg_t)};
    w.awaited = inbox ? 0 : w.pieces;
    for (int i = 0; i < 2 * SIG_PIECES; i++)
        w.req[i] = MPI_REQUEST_NULL;
    /* The first receive has room for a whole message (SIG_WHOLE_BYTES). */
    if (inbox && MPI_Irecv(w.recv, (int)sizeof(ddl_sig_msg_t), MPI_BYTE, peer, MPI_ANY_TAG, comm, &w.req[0]) !=
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
        head[0] |= DDL_SIG_KEY_MARK;
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
    ddl_wait_how_t how = {"ddl_allreduce: the owners' exchange of signatures", p->timeout, p->abort, waiting_for_owner,
                      OWNER_HINT};
    ddl_status_t st = ddl_wait_until(&how, swap_step, &w);
    if (st == DDL_ERR_MPI)
        return ddl_error(st, "ddl_allreduce: the owners' signature exchange failed in MPI");
    if (st == DDL_OK) {
        *got = w.got;
        *their_tag = w.tag;
    }
    return st;
}

/* This rank's message for a swap, whose key mine->key holds: its length and
 * where its data goes from (*apart; NULL: in mine after the key).  The data
 * (bytes, at *src) goes only while every key met so far agreed; with a key
 * it follows the key at once, copied there (a small call's 24 bytes of key
 * and 8 of data then fit one cache line with Open MPI's headers: measured
 * between 2 virtual nodes, 8 bytes took 0.04-0.1 us less than 56 over the
 * same exchange), and *src then points there; a repeat's goes alone, from
 * where it is. */
int ddl_sig_message(ddl_sig_msg_t *mine, int tag, const unsigned char **src, size_t bytes, const void **apart)
{
    *apart = NULL;
    if (!bytes || !ddl_sig_key_agreed(mine->key))
        return KEY_BYTES;
    if (tag != SIG_TAG)
        *apart = *src;
    else if (*src != mine->data) {
        memcpy(mine->data, *src, bytes);
        *src = mine->data;
    }
    return KEY_BYTES + (int)bytes;
}
