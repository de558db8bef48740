/* SPDX-License-Identifier: Apache-2.0 */
/* The owners' exchange on the MPI path between nodes (ddl_sig_exchange_data):
 * the call's signature on a hypercube of point-to-point messages, and the data
 * in the same messages.  Small data travels whole at each step (recursive
 * doubling: fewest steps); larger data in halves, quarters, ... (a
 * reduce-scatter by recursive halving, then an allgather by recursive
 * doubling), so a rank sends about twice its data in all instead of its data
 * once per step.  The first, largest step goes to rank ^ 1, which is on the
 * same node when a node has several owners: the owners' ranks are node-major. */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "algo.h"
#include "log.h"
#include "node.h"
#include "reduce.h"
#include "signature.h"

/* What travels: the signature's extremes so far, then data.  A message
 * longer than PIECE bytes goes as its first PIECE bytes (this header and the
 * start of the data) and the rest in further messages of at most PIECE bytes,
 * sent back to back: Open MPI's TCP transport sends up to 64 KiB, its header
 * included, at once, and a longer message waits a round trip for the
 * receiver's answer (measured on the emulated 2 x 2 x 2 cluster: the exchange
 * of 32 KiB took 108 us, of 64 KiB and its header 555 us). */
typedef struct {
    int64_t ext[2 * DDL_SIG_FIELDS]; /* each field's maximum and the maximum of its negation */
    int64_t rest;                    /* data bytes that follow in further messages */
    _Alignas(64) unsigned char data[DDL_SIG_EXCHANGE_BYTES];
} sig_msg_t;

#define HEADER ((int)offsetof(sig_msg_t, data))
#define PIECE (65536 - 512) /* room for the transport's own header */
#define MAX_PIECES (DDL_SIG_EXCHANGE_BYTES / PIECE + 2)

/* mine (what goes out), theirs (what comes in), and the halving's working
 * copy of the data. */
size_t ddl_sig_scratch_bytes(void)
{
    return 2 * sizeof(sig_msg_t) + DDL_SIG_EXCHANGE_BYTES;
}

#define SIG_TAG 0x5d1  /* point-to-point on the owners' communicator: nothing else goes there */
#define REST_TAG 0x5d2 /* the further pieces of a message */

typedef struct {
    MPI_Comm comm;
    double timeout;
    const _Atomic int32_t *abort;
    ddl_reduce_fn_t fn; /* NULL: no data */
    size_t esize;
} exchange_t;

static ddl_status_t wait_for(const exchange_t *e, int peer, MPI_Request *req, MPI_Status *status, int n)
{
    ddl_mpi_wait_t w = {req, status, n};
    ddl_status_t st = ddl_poll(ddl_mpi_done, &w, e->timeout, e->abort);
    if (st == DDL_ERR_TIMED_OUT)
        return ddl_error(st, "ddl_allreduce: the owner of rank %d in the owners' communicator did not take part in "
                         "this call within %.1f s (DDL_TIMEOUT): it may have stopped calling, or called with a "
                         "count that takes another path", peer, e->timeout);
    if (st == DDL_ERR_PEER_FAILED) /* the caller names the rank that failed */
        return st;
    if (st != DDL_OK)
        return ddl_error(st, "ddl_allreduce: the owners' signature exchange failed in MPI");
    return DDL_OK;
}

/* Send `send` with `bytes` of data to and/or receive into `recv` from `peer`
 * (either may be NULL), within the deadline; *got: the data bytes received.
 * The first pieces go both ways first, then the rest: a receiver learns from
 * the first how much follows, so it takes exactly what was sent, and neither
 * side waits for a piece the other has not yet asked for.  Each of the two
 * waits has the whole timeout. */
static ddl_status_t swap(const exchange_t *e, int peer, sig_msg_t *send, size_t bytes, sig_msg_t *recv, size_t *got)
{
    MPI_Request req[2 * MAX_PIECES];
    MPI_Status status[2];
    int n = 2, first = 0;
    req[0] = req[1] = MPI_REQUEST_NULL;
    size_t head = bytes < (size_t)(PIECE - HEADER) ? bytes : (size_t)(PIECE - HEADER);
    int ok = 1;
    if (recv)
        ok = MPI_Irecv(recv, PIECE, MPI_BYTE, peer, SIG_TAG, e->comm, &req[0]) == MPI_SUCCESS;
    if (send && ok) {
        send->rest = (int64_t)(bytes - head);
        ok = MPI_Isend(send, HEADER + (int)head, MPI_BYTE, peer, SIG_TAG, e->comm, &req[1]) == MPI_SUCCESS;
    }
    if (!ok)
        return ddl_error(DDL_ERR_MPI, "ddl_allreduce: the owners' signature exchange failed in MPI");
    ddl_status_t st = wait_for(e, peer, req, status, 2);
    if (st != DDL_OK)
        return st;
    *got = 0;
    if (recv) {
        MPI_Get_count(&status[0], MPI_BYTE, &first);
        *got = first >= HEADER ? (size_t)(first - HEADER) : 0;
        if (first < HEADER || recv->rest < 0 || (size_t)recv->rest > sizeof(recv->data) - *got)
            return ddl_error(DDL_ERR_MPI, "ddl_allreduce: the owners' signature exchange received a message of %d "
                             "bytes announcing %lld more from rank %d: not a message of this library", first,
                             (long long)recv->rest, peer);
    }
    for (size_t off = head; send && off < bytes && ok; off += PIECE) {
        size_t len = bytes - off < (size_t)PIECE ? bytes - off : (size_t)PIECE;
        ok = MPI_Isend(send->data + off, (int)len, MPI_BYTE, peer, REST_TAG, e->comm, &req[n++]) == MPI_SUCCESS;
    }
    size_t total = recv ? *got + (size_t)recv->rest : 0;
    for (size_t off = *got; recv && off < total && ok; off += PIECE) {
        size_t len = total - off < (size_t)PIECE ? total - off : (size_t)PIECE;
        ok = MPI_Irecv(recv->data + off, (int)len, MPI_BYTE, peer, REST_TAG, e->comm, &req[n++]) == MPI_SUCCESS;
    }
    if (!ok)
        return ddl_error(DDL_ERR_MPI, "ddl_allreduce: the owners' signature exchange failed in MPI");
    if (n > 2 && (st = wait_for(e, peer, req + 2, MPI_STATUSES_IGNORE, n - 2)) != DDL_OK)
        return st;
    *got = total;
    return DDL_OK;
}

/* The data may be combined: both hold one and the same signature, which
 * carries data, and theirs brought the `expect` bytes this rank expects.  Equal
 * to this rank's own signature, which its checks passed: the type, op and
 * count are valid. */
static int agrees(const sig_msg_t *mine, const sig_msg_t *theirs, size_t got, size_t expect)
{
    const int64_t *h = mine->ext;
    return h[DDL_SIG_F_INLINE] == 1 && h[DDL_SIG_F_BAD] == 0 && ddl_sig_one(h) &&
           memcmp(mine->ext, theirs->ext, sizeof(mine->ext)) == 0 && got == expect;
}

/* Fieldwise maxima: after the last step every rank holds every rank's. */
static void merge_ext(sig_msg_t *mine, const sig_msg_t *theirs)
{
    for (int i = 0; i < 2 * DDL_SIG_FIELDS; i++)
        mine->ext[i] = theirs->ext[i] > mine->ext[i] ? theirs->ext[i] : mine->ext[i];
}

/* w[0, n) = w op theirs->data when they agree, the lower rank's operand first
 * (every rank then computes the same bits); the extremes merged either way. */
static void fold(const exchange_t *e, sig_msg_t *mine, unsigned char *w, const sig_msg_t *theirs, size_t got, size_t n,
                 int me_first)
{
    if (e->fn && agrees(mine, theirs, got, n * e->esize)) {
        if (me_first)
            e->fn(w, w, theirs->data, n);
        else
            e->fn(w, theirs->data, w, n);
    }
    merge_ext(mine, theirs);
}

/* The whole of w (n elements) with the partner at each step. */
static ddl_status_t doubling(const exchange_t *e, int rank, int core, sig_msg_t *mine, sig_msg_t *theirs, size_t n)
{
    ddl_status_t st = DDL_OK;
    size_t got;
    for (int mask = 1; mask < core && st == DDL_OK; mask <<= 1) {
        int peer = rank ^ mask;
        if ((st = swap(e, peer, mine, n * e->esize, theirs, &got)) == DDL_OK)
            fold(e, mine, mine->data, theirs, got, n, rank < peer);
    }
    return st;
}

/* Send w[from, to) with the extremes so far, receive the partner's part. */
static ddl_status_t send_part(const exchange_t *e, int peer, sig_msg_t *mine, const unsigned char *w, size_t from,
                              size_t to, sig_msg_t *theirs, size_t *got)
{
    memcpy(mine->data, w + from * e->esize, (to - from) * e->esize);
    return swap(e, peer, mine, (to - from) * e->esize, theirs, got);
}

/* Rabenseifner's allreduce of w (n elements) among the core ranks: at the
 * step with partner rank ^ mask, a rank keeps the lower half of its window
 * when its bit is clear, the upper half when set, and reduces the partner's
 * copy of it into its own; then the windows come back in the reverse order. */
static ddl_status_t halving(const exchange_t *e, int rank, int core, sig_msg_t *mine, sig_msg_t *theirs,
                            unsigned char *w, size_t n)
{
    size_t lo = 0, hi = n, parent_lo[32], parent_hi[32];
    int steps = 0;
    size_t got;
    ddl_status_t st = DDL_OK;
    for (int mask = 1; mask < core && st == DDL_OK; mask <<= 1, steps++) {
        int peer = rank ^ mask, upper = (rank & mask) != 0;
        size_t mid = lo + (hi - lo) / 2;
        parent_lo[steps] = lo;
        parent_hi[steps] = hi;
        if ((st = send_part(e, peer, mine, w, upper ? lo : mid, upper ? mid : hi, theirs, &got)) != DDL_OK)
            break;
        if (upper)
            lo = mid;
        else
            hi = mid;
        fold(e, mine, w + lo * e->esize, theirs, got, hi - lo, rank < peer);
    }
    /* Every rank now holds every signature's extremes: on a difference all
     * stop here, after as many steps as the whole-message exchange takes, so
     * ranks that called differently leave no message unmatched. */
    if (st != DDL_OK || !ddl_sig_one(mine->ext))
        return st;
    for (int step = steps - 1; step >= 0 && st == DDL_OK; step--) {
        int peer = rank ^ (1 << step), upper = (rank & (1 << step)) != 0;
        size_t from = upper ? parent_lo[step] : hi, to = upper ? lo : parent_hi[step]; /* the partner's window */
        if ((st = send_part(e, peer, mine, w, lo, hi, theirs, &got)) != DDL_OK)
            break;
        if (e->fn && agrees(mine, theirs, got, (to - from) * e->esize))
            memcpy(w + from * e->esize, theirs->data, (to - from) * e->esize);
        merge_ext(mine, theirs);
        lo = parent_lo[step];
        hi = parent_hi[step];
    }
    return st;
}

ddl_status_t ddl_sig_exchange_data(ddl_sig_exchange_t *x, MPI_Comm comm, int world_rank, const ddl_sig_t *s,
                                   const void *data, void *result, void *scratch, double timeout,
                                   const _Atomic int32_t *abort)
{
    x->world_rank = world_rank;
    x->comm = comm;
    x->active = 0;
    sig_msg_t *mine = scratch, *theirs = mine + 1;
    ddl_sig_to_extremes(s, x->mine, mine->ext);
    size_t n = data ? (size_t)s->count : 0;
    exchange_t e = {comm, timeout, abort, data ? ddl_reduce_fn((ddl_dtype_t)s->dtype, (ddl_redop_t)s->op) : NULL,
                    data ? ddl_dtype_size((ddl_dtype_t)s->dtype) : 0};
    size_t got = 0;
    int size, rank;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    int core = 1;
    while (core * 2 <= size)
        core *= 2;
    size_t bytes = n * e.esize;
    int halve = bytes > DDL_SIG_DOUBLING_BYTES && rank < core; /* an extra rank sends and receives it whole */
    unsigned char *w = halve ? (unsigned char *)(theirs + 1) : mine->data;
    if (bytes)
        memcpy(w, data, bytes);
    ddl_status_t st = DDL_OK;
    if (rank >= core) { /* an extra rank: in through its partner, and the result back */
        st = swap(&e, rank - core, mine, bytes, NULL, &got);
        if (st == DDL_OK)
            st = swap(&e, rank - core, NULL, 0, mine, &got);
    } else {
        if (rank + core < size && (st = swap(&e, rank + core, NULL, 0, theirs, &got)) == DDL_OK)
            fold(&e, mine, w, theirs, got, n, 1);
        if (st == DDL_OK)
            st = halve ? halving(&e, rank, core, mine, theirs, w, n) : doubling(&e, rank, core, mine, theirs, n);
        if (st == DDL_OK && rank + core < size) {
            if (halve)
                memcpy(mine->data, w, bytes);
            st = swap(&e, rank + core, mine, bytes, NULL, &got);
        }
    }
    if (st == DDL_OK) {
        memcpy(x->ext, mine->ext, sizeof(x->ext));
        /* Only when every signature agreed: a mismatch writes nothing. */
        if (result && bytes && ddl_sig_one(mine->ext) && mine->ext[DDL_SIG_F_BAD] == 0)
            memcpy(result, w, bytes);
        x->req = MPI_REQUEST_NULL;
        x->active = 1;
    }
    return st;
}
