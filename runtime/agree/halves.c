/* SPDX-License-Identifier: Apache-2.0 */
/* The owners' exchange in halves (exchange.h): a reduce-scatter by
 * recursive halving whose messages carry the signatures, then an allgather
 * by recursive doubling.  Uses core and the exchange's messages
 * (sig_msg.h). */
#include "config.h"

#include <string.h>

#include "log.h"
#include "reduce.h"
#include "sig_msg.h"

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
    ddl_sig_msg_t *mine = scratch, *theirs;
    unsigned char *inbox = (unsigned char *)(mine + 1);
    unsigned char *vec = inbox + KEY_BYTES + sizeof(ddl_sig_msg_t); /* the ranges reduced so far, by element index */
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
        top_whole = mask == size >> 1 && (hi - lo) * esize <= HALVES_WHOLE_BYTES && !ddl_sig_shares_host(p, peer);
        size_t mid = lo + (hi - lo) / 2;
        size_t keep_lo = top_whole || !upper ? lo : mid, keep_hi = top_whole || upper ? hi : mid;
        size_t send_lo = top_whole || upper ? lo : mid, send_hi = top_whole || !upper ? hi : mid;
        /* The data goes only while every key met so far is this one; a
         * long range apart from the key, uncopied (SIG_WHOLE_BYTES), else as
         * the exchange's (message()). */
        int with_data = data && ddl_sig_key_agreed(mine->key), tag = ddl_sig_msg_tag(p, mine->key), their_tag = SIG_TAG;
        size_t sent = with_data ? (send_hi - send_lo) * esize : 0, want = (keep_hi - keep_lo) * esize;
        const unsigned char *from = src + send_lo * esize;
        const void *apart = from;
        int len = KEY_BYTES + (int)sent;
        if (sent <= SIG_WHOLE_BYTES)
            len = ddl_sig_message(mine, tag, &from, sent, &apart);
        st = ddl_sig_swap(p, peer, mine, apart, len, tag, inbox, &got, &their_tag);
        if (st != DDL_OK)
            break;
        theirs = ddl_sig_arrived(inbox, their_tag, tag, mine->key, &got);
        if (!ddl_sig_key_agreed(mine->key) || !ddl_sig_key_same(mine->key, theirs->key) ||
            (with_data && (size_t)got != offsetof(ddl_sig_msg_t, data) + want)) {
            ddl_sig_key_disagree(mine->key);
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
    ddl_sig_remember(p, st == DDL_OK && s->bad == 0 ? mine->key : NULL);
    /* Only when every signature agreed: a mismatch writes nothing. */
    if (st != DDL_OK || !data || !ddl_sig_key_agreed(mine->key) || s->bad != 0) /* agreed: the key is still s's */
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
        if ((st = ddl_sig_wait_pair(p, peer, req)) != DDL_OK)
            return st;
        lo = whole_lo;
        hi = whole_hi;
    }
    return DDL_OK;
}
