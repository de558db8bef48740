/* SPDX-License-Identifier: Apache-2.0 */
/* The owners' exchange's messages (exchange.c, halves.c): what travels, on
 * which tags, in how many pieces, and one swap with a peer within the
 * deadline.  Internal to agree/. */
#ifndef DDL_SIG_MSG_H
#define DDL_SIG_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "exchange.h"

/* The owners' exchange: what travels. */
typedef struct {
    int64_t key[DDL_SIG_KEY_WORDS];
    _Alignas(8) unsigned char data[DDL_SIG_MESSAGE_BYTES]; /* right after the key: see exchange.c's combine_msg */
} ddl_sig_msg_t;

#define KEY_BYTES ((int)sizeof(int64_t[DDL_SIG_KEY_WORDS]))

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
_Static_assert(SIG_PIECE_BYTES > offsetof(ddl_sig_msg_t, data), "the first piece holds the signatures");
_Static_assert(SIG_PIECES * SIG_PIECE_BYTES >= offsetof(ddl_sig_msg_t, data) + DDL_SIG_DATA_BYTES,
               "the data that always rides with the signatures goes in pieces of at most SIG_PIECE_BYTES");

_Static_assert(KEY_BYTES == offsetof(ddl_sig_msg_t, data), "the data follows the key at once");

/* The tag of this rank's next message, whose key is `key`: REPEAT_TAG and
 * the call number where it repeats p->last, else SIG_TAG. */
int ddl_sig_msg_tag(const ddl_sig_peers_t *p, const int64_t *key);
/* After an exchange: what the next call may repeat (key: the verdict every
 * rank reached, NULL when this rank's exchange failed or its signature is
 * marked bad). */
void ddl_sig_remember(const ddl_sig_peers_t *p, const int64_t *key);
/* A peer's message as it came to an inbox (KEY_BYTES of room, then where
 * the message lands): with its key, as sent; a repeat's data lands right
 * after the room, which then gets this rank's key, so either reads as a
 * ddl_sig_msg_t.  Messages of the two kinds, or repeats of different calls,
 * disagree (their key marked so): both ends see the same two tags.
 * *got: the message's bytes, its key included. */
ddl_sig_msg_t *ddl_sig_arrived(unsigned char *inbox, int their_tag, int my_tag, const int64_t *my_key, int *got);
/* Whether MPI reaches `peer` through shared memory (unknown: not). */
int ddl_sig_shares_host(const ddl_sig_peers_t *p, int peer);
/* Send `send` (send_len bytes, its key included) with `tag` to and/or
 * receive into `inbox` from `peer` (either may be NULL), within the
 * deadline (ddl_wait_until; a timeout names the peer); *got: the bytes received,
 * *their_tag: their tag.  data: where the message's data is, when not in
 * send after the key (it then goes apart from the key, uncopied).  With a
 * repeat's tag the data goes alone. */
ddl_status_t ddl_sig_swap(const ddl_sig_peers_t *p, int peer, const ddl_sig_msg_t *send, const void *data,
                          int send_len, int tag, unsigned char *inbox, int *got, int *their_tag);
/* This rank's message for a swap, whose key mine->key holds: its length and
 * where its data goes from (*apart; NULL: in mine after the key); see
 * sig_msg.c. */
int ddl_sig_message(ddl_sig_msg_t *mine, int tag, const unsigned char **src, size_t bytes, const void **apart);
/* Wait for the two requests of a plain swap with `peer` (the halves'
 * allgather) within the deadline; a timeout names the peer, as
 * ddl_sig_swap's. */
ddl_status_t ddl_sig_wait_pair(const ddl_sig_peers_t *p, int peer, MPI_Request *req);

#endif
