/* SPDX-License-Identifier: Apache-2.0 */
/* The owners' exchange of signatures (exchange.h): recursive doubling with
 * the call's data, and naming a difference.  Uses core and the exchange's
 * messages (sig_msg.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "reduce.h"
#include "sig_msg.h"

/* theirs into mine (this rank's signature s): the key stays while both
 * stand for one and the same signature; the data is reduced only then, and
 * when that signature carries data, the lower rank's first: this rank's
 * (from src) and theirs into out.  1 when it was. */
static int combine_msg(ddl_sig_msg_t *mine, const ddl_sig_msg_t *theirs, int their_len, int me_first, const ddl_sig_t *s,
                       const void *src, void *out)
{
    int same = ddl_sig_key_agreed(mine->key) && ddl_sig_key_same(mine->key, theirs->key);
    if (!same) {
        ddl_sig_key_disagree(mine->key);
        return 0;
    }
    /* Still this rank's own key, from s, whose checks passed: the type, op
     * and count are valid.  The length is checked all the same. */
    if (s->algo != DDL_ALGO_MPI || s->lane_algo != 1 || s->bad != 0 ||
        (size_t)their_len < offsetof(ddl_sig_msg_t, data) + (size_t)s->count * ddl_dtype_size((ddl_dtype_t)s->dtype))
        return 0;
    ddl_reduce_fn_t fn = ddl_reduce_fn((ddl_dtype_t)s->dtype, (ddl_redop_t)s->op);
    fn(out, me_first ? src : theirs->data, me_first ? theirs->data : src, (size_t)s->count);
    return 1;
}

ddl_status_t ddl_sig_exchange_data(ddl_sig_exchange_t *x, const ddl_sig_peers_t *p, const ddl_sig_t *s,
                                   const void *data, void *result, void *scratch, int group)
{
    x->world_rank = p->world_rank;
    x->comm = p->comm;
    x->mine = *s;
    ddl_sig_msg_t *mine = scratch, *theirs;
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
        tag = ddl_sig_msg_tag(p, mine->key);
        len = ddl_sig_message(mine, tag, &src, bytes, &apart);
        st = ddl_sig_swap(p, rank - core, mine, apart, len, tag, NULL, &got, &their_tag);
        if (st == DDL_OK && (st = ddl_sig_swap(p, rank - core, NULL, NULL, 0, 0, inbox, &got, &their_tag)) == DDL_OK) {
            theirs = ddl_sig_arrived(inbox, their_tag, tag, mine->key, &got);
            memcpy(mine->key, theirs->key, KEY_BYTES);
            if (ddl_sig_key_agreed(mine->key) && (size_t)got >= offsetof(ddl_sig_msg_t, data) + bytes)
                src = theirs->data;
        }
    } else {
        if (rank + core < size &&
            (st = ddl_sig_swap(p, rank + core, NULL, NULL, 0, 0, inbox, &got, &their_tag)) == DDL_OK) {
            theirs = ddl_sig_arrived(inbox, their_tag, ddl_sig_msg_tag(p, mine->key), mine->key, &got);
            if (combine_msg(mine, theirs, got, 1, s, src, mine->data)) /* the rounds follow (group is 1) */
                src = mine->data;
        }
        for (int mask = group; mask < core && st == DDL_OK; mask <<= 1) { /* below group: agreed */
            int peer = rank ^ mask;
            tag = ddl_sig_msg_tag(p, mine->key);
            len = ddl_sig_message(mine, tag, &src, bytes, &apart);
            if ((st = ddl_sig_swap(p, peer, mine, apart, len, tag, inbox, &got, &their_tag)) != DDL_OK)
                break;
            theirs = ddl_sig_arrived(inbox, their_tag, tag, mine->key, &got);
            unsigned char *to = mask * 2 == core ? out : mine->data; /* the last round: every key met */
            if (combine_msg(mine, theirs, got, rank < peer, s, src, to))
                src = to;
        }
        if (st == DDL_OK && rank + core < size) {
            tag = ddl_sig_msg_tag(p, mine->key);
            len = ddl_sig_message(mine, tag, &src, bytes, &apart);
            st = ddl_sig_swap(p, rank + core, mine, apart, len, tag, NULL, &got, &their_tag);
        }
    }
    ddl_sig_remember(p, st == DDL_OK && s->bad == 0 ? mine->key : NULL);
    if (st == DDL_OK) {
        memcpy(x->key, mine->key, sizeof(x->key));
        /* Only when every signature agreed: a mismatch writes nothing. */
        if (result && bytes && ddl_sig_key_agreed(mine->key) && s->bad == 0 && src != result) /* agreed: the key is s's */
            memcpy(result, src, bytes);
    }
    return st;
}

/* Which two ranks differ, and how: every rank of comm knows there is a
 * difference, so all of them gather the signatures with their world ranks. */
static ddl_status_t name_mismatch(ddl_sig_exchange_t *x, const char (*hosts)[DDL_HOST_LEN], const char *where)
{
    enum { W = DDL_SIG_KEY_WORDS + 1 }; /* each rank's own key, and its world rank */
    int size;
    MPI_Comm_size(x->comm, &size);
    int64_t mine[W], *all = malloc(sizeof(mine) * (size_t)size);
    if (!all)
        return ddl_error(DDL_ERR_MISMATCH, "%s: ranks called it with different arguments (out of memory "
                         "naming them)", where);
    ddl_sig_key(&x->mine, mine);
    mine[DDL_SIG_KEY_WORDS] = x->world_rank;
    MPI_Allgather(mine, W, MPI_INT64_T, all, W, MPI_INT64_T, x->comm);
    int a = 0, b = -1;
    int why = 0;
    for (int r = 0; r < size && b < 0; r++)
        if ((why = ddl_sig_from_key(&all[r * W]).bad) != 0) /* it said so itself, and its message says more */
            a = b = r;
    for (int r = 1; r < size && b < 0; r++)
        if (!ddl_sig_key_same(&all[r * W], all))
            b = r;
    if (b < 0)
        b = 0;
    ddl_sig_t sa = ddl_sig_from_key(&all[a * W]), sb = ddl_sig_from_key(&all[b * W]);
    int wa = (int)all[a * W + DDL_SIG_KEY_WORDS], wb = (int)all[b * W + DDL_SIG_KEY_WORDS];
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
                         "messages name them; every rank must call the same collective with the same count, type and "
                         "op, in the same order", where, wa, hosts[wa]);
    return ddl_error(DDL_ERR_MISMATCH, "%s: ranks called it differently: rank %d on %s with %s; rank %d on %s with %s; "
                     "every rank must call the same collective with the same count, type and op, in the same order",
                     where, wa, hosts[wa], da, wb, hosts[wb], db);
}

ddl_status_t ddl_sig_finish(ddl_sig_exchange_t *x, const char (*hosts)[DDL_HOST_LEN], const char *where)
{
    if (!ddl_sig_key_agreed(x->key) || x->mine.bad != 0) /* agreed: the key is this rank's */
        return name_mismatch(x, hosts, where);
    return DDL_OK;
}
