/* SPDX-License-Identifier: Apache-2.0 */
/* The communicator's entry to the owners' exchange of signatures
 * (exchange.h): where it runs, its state across calls, and a helper's wait
 * for its owner's verdict.  Uses core and the exchange. */
#include "config.h"

#include <stdlib.h>

#include "comm.h"
#include "exchange.h"
#include "log.h"
#include "node.h"

struct ddl_owners_exchange {
    void *scratch;       /* ddl_sig_scratch_bytes, 64-byte aligned */
    ddl_sig_last_t last; /* what the last exchange agreed on: a repeat sends no key */
};

void ddl_owners_exchange_free(struct ddl_owners_exchange *o)
{
    if (o)
        free(o->scratch);
    free(o);
}

ddl_status_t ddl_owners_agree(ddl_comm_t *c, const ddl_sig_t *sig, const void *data, void *result, int node_agreed)
{
    struct ddl_owners_exchange *o = c->owners_x;
    if (!o) {
        if (!(o = calloc(1, sizeof(*o))) || !(o->scratch = aligned_alloc(64, ddl_sig_scratch_bytes()))) {
            free(o);
            return ddl_error(DDL_ERR_NO_MEMORY, "out of memory for the owners' signature exchange");
        }
        c->owners_x = o;
    }
    ddl_sig_exchange_t x;
    ddl_sig_peers_t p = {c->owners_sig, c->info.owner_rank, c->info.owner_size, c->info.rank, c->world_of_owner,
                         c->shm_host, c->set.timeout, ddl_node_abort_flag(&c->node), &o->last};
    ddl_status_t st;
    if (sig->algo == DDL_ALGO_MPI && sig->lane_algo == DDL_SIG_HALVES)
        st = ddl_sig_exchange_halves(&x, &p, sig, data, result, o->scratch);
    else /* the owners' ranks are node-major (make_layout): a node's are one group */
        st = ddl_sig_exchange_data(&x, &p, sig, data, result, o->scratch, node_agreed ? c->info.gpus_per_node : 1);
    if (st == DDL_OK)
        return ddl_sig_finish(&x, (const char (*)[DDL_HOST_LEN])c->hosts, ddl_coll_calls[sig->coll]);
    return ddl_comm_wait_ended(c, st, "ddl_allreduce: the owners' exchange of signatures");
}

ddl_status_t ddl_owners_finish_signature(ddl_comm_t *c, ddl_call_t *call)
{
    if (!call->sig_pending)
        return DDL_OK;
    call->sig_pending = 0;
    if (c->info.role == DDL_ROLE_OWNER) {
        ddl_status_t st = ddl_owners_agree(c, &call->node_sig, NULL, NULL, 1);
        if (c->info.lanes > 1)
            ddl_node_tell_verdict(&c->node, call->seq, st);
        return st;
    }
    int owner = c->info.gpu * c->info.lanes;
    ddl_status_t verdict, st = ddl_node_wait_verdict(&c->node, owner, call->seq, &verdict);
    if (st != DDL_OK || verdict == DDL_OK)
        return st;
    if (verdict == DDL_ERR_MISMATCH || verdict == DDL_ERR_INVALID_ARG)
        return ddl_error(verdict, "ddl_allreduce: %s, as the owners' exchange of signatures found; this helper's owner, "
                         "rank %d, names them", verdict == DDL_ERR_MISMATCH ? "ranks on another node called it "
                         "differently" : "an owner on another node passed buffers it cannot use",
                         c->world_of_local[owner]);
    return ddl_error(verdict, "ddl_allreduce: the owners' exchange of signatures failed on this helper's owner, "
                     "rank %d, whose message says why", c->world_of_local[owner]);
}
