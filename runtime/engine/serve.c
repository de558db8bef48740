/* SPDX-License-Identifier: Apache-2.0 */
/* Serve mode: a helper does its part of every collective its owner starts. */
#include "config.h"

#include "comm.h"
#include "log.h"
#include "route.h"

ddl_status_t ddl_serve(ddl_comm_t *c)
{
    if (!ddl_comm_is_live(c))
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_serve: not a live communicator");
    if (c->info.role != DDL_ROLE_HELPER || c->helper_mode != DDL_HELPERS_SERVE)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_serve: rank %d is %s in %s mode; only helpers in serve mode "
                         "serve (DDL_HELPERS=serve)", c->info.rank, c->info.role == DDL_ROLE_OWNER ? "an owner" : "a helper",
                         c->helper_mode == DDL_HELPERS_SERVE ? "serve" : "collective");
    int owner = c->info.gpu * c->info.lanes;
    for (;;) {
        if (c->broken)
            return ddl_error(DDL_ERR_PEER_FAILED, "ddl_serve: an earlier collective failed");
        uint32_t bell;
        ddl_status_t st = ddl_node_wait_doorbell(&c->node, owner, c->doorbell_seen, &bell);
        if (st != DDL_OK)
            return ddl_comm_fail(c, st);
        c->doorbell_seen = bell;
        const ddl_node_req_t *rq = ddl_node_request(&c->node, owner);
        if (rq->shutdown)
            return DDL_OK;
        const ddl_sig_t *sig = &rq->sig;
        DDL_TRACE(DDL_SUBSYS_COLL, "serving %s of %lld %s (%s)", ddl_coll_names[sig->coll], (long long)sig->count,
                  ddl_dtype_name((ddl_dtype_t)sig->dtype), ddl_redop_name((ddl_redop_t)sig->op));
        ddl_call_t call = {.coll = sig->coll, .count = sig->count, .dtype = (ddl_dtype_t)sig->dtype,
                           .op = (ddl_redop_t)sig->op, .mem = DDL_MEM_HOST};
        st = ddl_route_lane(c, &call, 0); /* its plan is the owner's */
        /* A mismatch or an owner's bad buffers fail that call only: serve on. */
        if (st != DDL_OK && c->broken)
            return st;
    }
}
