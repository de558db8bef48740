/* SPDX-License-Identifier: Apache-2.0 */
/* The MPI path, the fast path for small messages: the owners' signatures
 * (the always-on check), then the system MPI_Allreduce over the owners (the
 * types and ops MPI is given: core/mpi_types.h), or the data inside the
 * signatures' meeting (allreduce_inline.c); for the reduce-scatter and the
 * allgather, their own MPI collective (mpi_blocks.c). */
#include "config.h"

#include <string.h>

#include "comm.h"
#include "exchange.h"
#include "gpu.h"
#include "log.h"
#include "mpi_types.h"
#include "mpi_watch.h"
#include "node.h"
#include "paths.h"
#include "reduce.h"
#include "signature.h"

/* MPI_Allreduce over the owners on host buffers. */
static ddl_status_t mpi_host(const void *sendbuf, void *recvbuf, size_t count, ddl_dtype_t dtype, ddl_redop_t op,
                             ddl_comm_t *c)
{
    MPI_Datatype type = ddl_mpi_type(dtype, op);
    MPI_Op mop = ddl_mpi_op(dtype, op);
    size_t esize = ddl_dtype_size(dtype);
    /* MPI counts are int: go through in pieces of at most 2^30 elements. */
    for (size_t done = 0; done < count;) {
        size_t n = count - done < (1u << 30) ? count - done : (1u << 30);
        const void *s = sendbuf == recvbuf ? MPI_IN_PLACE : (const char *)sendbuf + done * esize;
        ddl_mpi_watch_enter(c, "MPI_Allreduce");
        int rc = MPI_Allreduce(s, (char *)recvbuf + done * esize, (int)n, type, mop, c->owners);
        ddl_mpi_watch_leave(c);
        if (rc != MPI_SUCCESS)
            return ddl_comm_fail(c, ddl_comm_mpi_error(c, "MPI_Allreduce"));
        done += n;
    }
    if (op == DDL_REDOP_AVG)
        ddl_avg_finish(recvbuf, count, dtype, c->info.owner_size);
    return DDL_OK;
}

/* Device buffers go through a host copy: the system MPI may not be CUDA-aware,
 * and its user ops (f16, bf16) run on the host. */
static ddl_status_t system_mpi(const ddl_call_t *call, ddl_comm_t *c)
{
    const void *sendbuf = call->sendbuf;
    void *recvbuf = call->recvbuf;
    size_t count = (size_t)call->count;
    ddl_dtype_t dtype = call->dtype;
    ddl_redop_t op = call->op;
    if (call->coll != DDL_COLL_ALLREDUCE)
        return ddl_mpi_blocks(c, call); /* device buffers through its own host copy */
    if (call->mem != DDL_MEM_DEVICE)
        return mpi_host(sendbuf, recvbuf, count, dtype, op, c);
    size_t bytes = count * ddl_dtype_size(dtype);
    ddl_status_t st = ddl_comm_bounce(c, bytes);
    if (st == DDL_OK)
        st = ddl_gpu_memcpy(c->bounce, sendbuf, bytes, c->set.timeout);
    if (st == DDL_OK)
        st = mpi_host(c->bounce, c->bounce, count, dtype, op, c);
    if (st == DDL_OK)
        st = ddl_gpu_memcpy(recvbuf, c->bounce, bytes, c->set.timeout);
    return st;
}

/* This rank's signature of an MPI-path call: an owner that cannot run it
 * (its refusal, or its buffers) marks it, and it never matches. */
static ddl_sig_t mpi_sig(const ddl_call_t *call, int data_form, int early, const ddl_comm_t *c)
{
    int32_t bad = call->refusal ? DDL_SIG_REFUSED : call->own_error != DDL_OK ? DDL_SIG_BAD_BUFFER : 0;
    return (ddl_sig_t){call->count, call->dtype, call->op, DDL_ALGO_MPI, data_form, (uint64_t)early, c->seq, bad,
                       call->coll};
}

/* The MPI path's share of the always-on check: the owners compare their
 * signatures before the system MPI sees buffers of different sizes or types
 * (which it may reduce without a word, or abort on).  On one node they meet in
 * the control block, which costs little: the MPI call after it finds every
 * owner there.  Between nodes the owners' exchange of signatures carries them
 * (ddl_owners_agree), and with them the data of messages up to
 * DDL_SIG_DATA_BYTES, or DDL_SIG_EXCHANGE_BYTES when online selection chose
 * mpi/exchange (data_form 1), or up to DDL_SIG_HALVES_BYTES in halves with
 * mpi/halves (data_form DDL_SIG_HALVES): then that exchange is the whole call,
 * its result in recvbuf.  An owner of a lane call meets the MPI path's owners in the
 * same places (ddl_lane_path), so ranks that chose different paths find
 * that out here too. */
static ddl_status_t check_owner_signatures(const ddl_call_t *call, int data_form, int early, ddl_comm_t *c)
{
    /* An owner that cannot use its buffers still takes part, so that the
     * others fail the call with it instead of waiting for it. */
    size_t count = (size_t)call->count;
    ddl_dtype_t dtype = call->dtype;
    ddl_redop_t op = call->op;
    void *recvbuf = call->recvbuf;
    ddl_sig_t sig = mpi_sig(call, data_form, early, c);
    char mine[512]; /* not zeroed: this runs on every small call, and 512 bytes cost there */
    if (call->own_error != DDL_OK) /* its reason, kept across the exchange */
        snprintf(mine, sizeof(mine), "%s", ddl_last_error());
    ddl_status_t st;
    if (c->info.nnodes == 1) {
        st = ddl_node_owners_meet(&c->node, c->info.lanes, c->info.gpus_per_node, &sig, c->seq);
        if (st != DDL_OK)
            return ddl_comm_fail(c, st);
        st = ddl_sig_check_owners(&c->node, c->info.lanes, c->info.gpus_per_node, c->seq);
        if (st == DDL_ERR_INVALID_ARG && call->own_error == DDL_OK)
            st = ddl_error(st, "%s", ddl_last_error());
    } else {
        if (c->info.local_size > 1) /* for the node's ranks of a lane call, if any */
            ddl_node_publish(&c->node, &sig, c->seq, 0);
        st = ddl_owners_agree(c, &sig, data_form ? call->sendbuf : NULL, data_form ? recvbuf : NULL, 0);
        if (st == DDL_OK && data_form && op == DDL_REDOP_AVG)
            ddl_avg_finish(recvbuf, count, dtype, c->info.owner_size);
    }
    if (call->own_error != DDL_OK) {
        ddl_log_keep_error(mine); /* its own reason, not the echo of it */
        return call->own_error;
    }
    return st == DDL_OK || st == DDL_ERR_MISMATCH || st == DDL_ERR_INVALID_ARG ? st : ddl_comm_fail(c, st);
}

/* The system MPI on the owners (the smallest messages through the control
 * block on one node, inside the signature exchange between nodes:
 * allreduce_inline.c; count 0 only the signatures).  In collective mode each
 * owner counts every call on its doorbell when it ends (ddl_call_run),
 * without waking anyone, and on this path its helpers sleep until it has: a
 * helper that returned at once would run ahead into the application's next
 * call and spin there, taking the CPU from the owners on a node with fewer
 * cores than ranks, and one woken on every call does the same (measured: 85 us
 * against 2.9 us for an 8-byte call on 2 cores, bench/JOURNAL.md).  Counting
 * the calls, not waiting for a change, keeps a helper that slept through
 * several in step; it wakes at the node's next event or sleep slice. */
ddl_status_t ddl_mpi_path(ddl_comm_t *c, ddl_call_t *call)
{
    const void *sendbuf = call->sendbuf;
    void *recvbuf = call->recvbuf;
    size_t count = (size_t)call->count;
    ddl_dtype_t dtype = call->dtype;
    ddl_redop_t op = call->op;
    if (c->info.role == DDL_ROLE_OWNER) {
        size_t bytes = count * ddl_dtype_size(dtype);
        /* The data's own forms are the allreduce's. */
        int forms = call->own_error == DDL_OK && call->coll == DDL_COLL_ALLREDUCE;
        int inline_data = forms && ddl_inline_fits(c, call, bytes);
        int halves = !inline_data && forms && ddl_halves_fit(c, call, bytes);
        int one_node = c->info.nnodes == 1;
        if (inline_data && one_node)
            ddl_inline_post(c, sendbuf, bytes);
        /* Between nodes, where MPI_Allreduce follows the signatures. */
        int after = !one_node && !inline_data && !halves && count > 0 && c->info.owner_size > 1;
        int early = after && forms && ddl_mpi_form_early[call->mpi_form] ? ddl_mpi_early_start(c, call) : 0;
        if (early < 0)
            return ddl_comm_fail(c, ddl_comm_mpi_error(c, "MPI_Iallreduce"));
        ddl_status_t st = call->own_error;
        if (c->info.owner_size > 1) {
            st = check_owner_signatures(call, halves ? DDL_SIG_HALVES : inline_data, early, c);
        } else if (c->info.local_size > 1) { /* its helpers wait for it to show the call */
            ddl_sig_t sig = mpi_sig(call, 0, 0, c);
            ddl_node_publish(&c->node, &sig, c->seq, 0);
        }
        if (early)
            return ddl_mpi_early_finish(c, call, st);
        if (st == DDL_OK && inline_data && one_node)
            ddl_inline_reduce(c, recvbuf, count, dtype, op);
        else if (st == DDL_OK && !inline_data && !halves && count > 0)
            st = system_mpi(call, c);
        if (after && forms && st == DDL_OK)
            ddl_mpi_early_learn(c, call);
        return st;
    }
    /* A helper shows its node which call it is in, for a lane call's ranks
     * there (its owner may be one: then its doorbell says how that ended). */
    ddl_sig_t sig = mpi_sig(call, 0, 0, c);
    ddl_node_publish(&c->node, &sig, c->seq, 0);
    int owner = c->info.gpu * c->info.lanes;
    ddl_status_t st = ddl_node_wait_count(&c->node, owner, c->doorbell_seen), ended;
    if (st == DDL_OK)
        st = ddl_node_outcome(&c->node, owner, c->doorbell_seen, &ended, &call->owner_class);
    if (st != DDL_OK)
        return ddl_comm_fail(c, st);
    if (call->refusal) /* its own reason, whatever the owner's call did */
        return call->own_error;
    /* The owner's outcome (a mismatch, unusable buffers) is its helpers' too. */
    if (ended != DDL_OK)
        return ddl_error(ended, "%s: %s on this helper's owner, rank %d, whose message says more",
                         ddl_coll_calls[call->coll],
                         ended == DDL_ERR_MISMATCH ? "the owners called it differently" : "the call failed",
                         c->world_of_local[owner]);
    return DDL_OK;
}
