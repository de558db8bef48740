/* SPDX-License-Identifier: Apache-2.0 */
/* The node's checks of the agreement (signature.h): the signatures the
 * node's ranks showed in their mailboxes of the control block, compared.
 * Above the control block (node.c) and the signatures' key (signature.c). */
#include "config.h"

#include <stdio.h>

#include "log.h"
#include "node.h"
#include "signature.h"

/* A rank of this node refused its own arguments to the call: the others
 * fail it with it, as a mismatch. */
static ddl_status_t refused_error(const ddl_node_t *n, int r)
{
    return ddl_error(DDL_ERR_MISMATCH, "ranks called the collective differently on %s (node %d): rank %d (local "
                     "rank %d) refused its own arguments to this call (its message says why); the call fails on "
                     "every rank, and the next one pairs up as usual", n->host, n->node, n->world_of_local[r], r);
}

/* Two of the node's ranks called differently: a and b, as the ranks of world
 * rank ra (who_a: which it is on the node) and rb showed them. */
static ddl_status_t called_differently(const ddl_node_t *n, const ddl_sig_t *a, int ra, const char *who_a,
                                       const ddl_sig_t *b, int rb, const char *who_b)
{
    char da[160], db[160];
    ddl_sig_describe(a, da, sizeof(da));
    ddl_sig_describe(b, db, sizeof(db));
    return ddl_error(DDL_ERR_MISMATCH, "ranks called the collective differently on %s (node %d): rank %d (%s) with "
                     "%s; rank %d (%s) with %s; every rank must call the same collective with the same count, type "
                     "and op, in the same order", n->host, n->node, ra, who_a, da, rb, who_b, db);
}

ddl_status_t ddl_sig_check_node(const ddl_node_t *n, uint32_t seq, ddl_sig_t *node_sig)
{
    const int64_t *first = ddl_node_mailbox(n, 0, seq)->key;
    *node_sig = ddl_sig_from_key(first);
    for (int r = 1; r < n->local_size; r++) {
        const int64_t *other = ddl_node_mailbox(n, r, seq)->key;
        if (ddl_sig_key_same(first, other))
            continue;
        ddl_sig_t a = *node_sig, b = ddl_sig_from_key(other);
        node_sig->bad = DDL_SIG_NODE_DISAGREES;
        if (a.bad == DDL_SIG_REFUSED || b.bad == DDL_SIG_REFUSED)
            return refused_error(n, a.bad == DDL_SIG_REFUSED ? 0 : r);
        char who[32];
        snprintf(who, sizeof(who), "local rank %d", r);
        return called_differently(n, &a, n->world_of_local[0], "local rank 0", &b, n->world_of_local[r], who);
    }
    return DDL_OK;
}

ddl_status_t ddl_sig_check_owners(const ddl_node_t *n, int lanes, int gpus, uint32_t seq)
{
    const int64_t *first = ddl_node_mailbox(n, 0, seq)->key;
    for (int g = 0; g < gpus; g++) {
        const int64_t *other = ddl_node_mailbox(n, g * lanes, seq)->key;
        int versus = ddl_sig_key_versus(first, other);
        if (versus == 0)
            continue;
        if (versus == DDL_SIG_BAD_BUFFER)
            return ddl_fail(DDL_ERR_INVALID_ARG, "ddl_allreduce: the owner of GPU %d on %s (rank %d) passed buffers "
                            "it cannot use (its message says why)", g, n->host, n->world_of_local[g * lanes]);
        if (versus == DDL_SIG_REFUSED)
            return refused_error(n, g * lanes);
        ddl_sig_t a = ddl_sig_from_key(first), b = ddl_sig_from_key(other);
        a.bad = b.bad = 0;
        char who[32];
        snprintf(who, sizeof(who), "GPU %d's owner", g);
        return called_differently(n, &a, n->world_of_local[0], "GPU 0's owner", &b, n->world_of_local[g * lanes],
                                  who);
    }
    return DDL_OK;
}
