/* SPDX-License-Identifier: Apache-2.0 */
/* The lanes' early first chunk between nodes (paths.h): a lane call whose
 * node signature is one the nodes agreed on before sends its first chunk
 * before the owners' exchange of signatures, so that the exchange's round
 * between the nodes overlaps the data's instead of coming before it, and a
 * request's first bytes leave without waiting for the other nodes to reach
 * the call.  The chunk goes into the lanes' private slots only; a node
 * writes nothing to a caller's buffer until the signatures agree (the
 * pipeline waits for them before it finishes any chunk).
 *
 * Why it is safe: every rank of a node takes local rank 0's decision (the
 * node's mailbox), and local rank 0 decides from agreed history only (the
 * keys of the last agreed lane calls, the same on every owner, as the owners'
 * outcomes are) and the call's own signature.  So where the nodes called
 * alike they all start early under the same key, or none does.  The key
 * names the chunk's messages (a tag of its own, host_p2p.c): ranks that
 * called differently never match each other's early messages, so a
 * receive gets the length it posted or nothing.  Their calls then fail with
 * DDL_ERR_MISMATCH on every rank, each abandons its early chunk (the
 * messages may wait unmatched for ever), and after any failed call on an
 * owner no call starts early again on this communicator, so no later call
 * can match them. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "log.h"
#include "paths.h"
#include "signature.h"

/* The agreed lane calls remembered: more than the distinct bucket sizes of a
 * training step usually are, and few enough to compare in a loop. */
#define EARLY_KEYS 8

struct ddl_lane_early {
    int64_t key[EARLY_KEYS][DDL_SIG_KEY_WORDS];
    int known; /* keys filled */
    int next;  /* the one a new key replaces once all are filled */
    int off;   /* a call failed: nothing starts early again */
};

ddl_status_t ddl_lane_early_init(ddl_comm_t *c)
{
    if (c->info.nnodes < 2 || c->info.role != DDL_ROLE_OWNER)
        return DDL_OK;
    if (!(c->lane_early = calloc(1, sizeof(*c->lane_early))))
        return ddl_error(DDL_ERR_NO_MEMORY, "out of memory for the lanes' early starts");
    return DDL_OK;
}

/* The key of a signature apart from its call number (and its marks, which a
 * call that starts early never carries). */
static void call_key(const ddl_sig_t *sig, int64_t *key)
{
    ddl_sig_t s = *sig;
    s.seq = 0;
    s.bad = 0;
    ddl_sig_key(&s, key);
}

static int find(const struct ddl_lane_early *e, const int64_t *key)
{
    for (int i = 0; i < e->known; i++)
        if (!memcmp(e->key[i], key, sizeof(e->key[i])))
            return i;
    return -1;
}

int ddl_lane_early_choose(const ddl_comm_t *c, const ddl_sig_t *sig)
{
    const struct ddl_lane_early *e = c->lane_early;
    if (!e || e->off)
        return 0;
    int64_t key[DDL_SIG_KEY_WORDS];
    call_key(sig, key);
    return find(e, key) + 1;
}

void ddl_lane_early_learn(ddl_comm_t *c, const ddl_sig_t *node_sig)
{
    struct ddl_lane_early *e = c->lane_early;
    if (!e || e->off)
        return;
    int64_t key[DDL_SIG_KEY_WORDS];
    call_key(node_sig, key);
    if (find(e, key) >= 0)
        return;
    int i = e->known < EARLY_KEYS ? e->known++ : e->next;
    e->next = (i + 1) % EARLY_KEYS;
    memcpy(e->key[i], key, sizeof(key));
}

void ddl_lane_early_stop(ddl_comm_t *c)
{
    if (c->lane_early)
        c->lane_early->off = 1;
}

void ddl_lane_early_free(ddl_comm_t *c)
{
    free(c->lane_early);
    c->lane_early = NULL;
}
