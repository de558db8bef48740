/* SPDX-License-Identifier: Apache-2.0 */
/* The lane path.  A node's G owner buffers are cut into G*L slices.  Each
 * rank reduces its slice across the G buffers through shared memory, allreduces
 * it with the ranks of the same local index on the other nodes (its lane), and
 * writes the result into every owner buffer of its node.  Between nodes the
 * slice moves in chunks with DDL_INFLIGHT (default 2) in flight, so that the reduction of one chunk,
 * the transfer of the next and the write-back overlap.  The reduce-scatter
 * and the allgather run the same call, with slices of the node's region of
 * G blocks and the ring's one half between nodes (lane_blocks.c). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "algo.h"
#include "chunks.h"
#include "comm.h"
#include "copy.h"
#include "exchange.h"
#include "gpu.h"
#include "lane_view.h"
#include "log.h"
#include "model.h"
#include "paths.h"
#include "pipeline.h"
#include "reduce.h"
#include "slice.h"
#include "trace.h"
#include "transport.h"

/* One node: the G buffers are reduced through a block that stays in L1, and
 * the block is copied to every output.  Small blocks keep the 2G streams that
 * the memory sees finely interleaved: 1 KiB blocks took about half the time
 * of 16 KiB ones at 16 MiB, in place and out (bench/JOURNAL.md, "Out-of-place
 * at the memory floor"). */
#define BLOCK_BYTES 1024
/* A rank whose share of the results (G outputs x its slice) is larger than
 * this writes out-of-place outputs with streaming stores (core/copy.h): they
 * would leave its cache before their owners, on other cores, read them.  At
 * 8 MiB and below the two stores measured the same. */
#define STREAM_MIN_BYTES ((size_t)8 << 20)

/* dst = in[0] op in[1] op ... op in[G-1] over elements [off, off + n), always in
 * GPU order, so the result does not depend on which rank computes it. */
static void reduce_in(const lane_view_t *v, size_t off, size_t n, void *dst)
{
    size_t b = off * v->esize;
    if (v->gpus == 1) {
        if (dst != v->in[0] + b)
            memcpy(dst, v->in[0] + b, n * v->esize);
        return;
    }
    v->fn(dst, v->in[0] + b, v->in[1] + b, n);
    for (int g = 2; g < v->gpus; g++)
        v->fn(dst, dst, v->in[g] + b, n);
}

static void write_out(const lane_view_t *v, size_t off, size_t n, const void *src)
{
    ddl_avg_finish((void *)src, n, v->dtype, v->divisor);
    for (int g = 0; g < v->gpus; g++) {
        char *dst = v->out[g] + off * v->esize;
        if (dst == src)
            continue;
        if (v->stream && v->out[g] != v->in[g])
            ddl_copy_stream(dst, src, n * v->esize);
        else
            memcpy(dst, src, n * v->esize); /* in place: the line was just read */
    }
}

static void single_node(const lane_view_t *v, size_t off, size_t n)
{
    if (v->coll == DDL_COLL_ALLGATHER) { /* nothing to reduce: no block between */
        ddl_lane_blocks_gather_node(v, off, n);
        return;
    }
    _Alignas(64) char block[BLOCK_BYTES];
    size_t per = BLOCK_BYTES / v->esize;
    int blocks = v->coll != DDL_COLL_ALLREDUCE;
    for (size_t o = 0; o < n; o += per) {
        size_t k = n - o < per ? n - o : per;
        if (blocks) {
            ddl_lane_blocks_fill(v, off + o, k, block);
            ddl_lane_blocks_drain(v, off + o, k, block);
        } else {
            reduce_in(v, off + o, k, block);
            write_out(v, off + o, k, block);
        }
    }
}

struct host_pipe {
    ddl_comm_t *c;
    const lane_view_t *v;
};

static ddl_status_t host_fill(void *ctx, int slot, size_t off, size_t n, void **buf)
{
    const struct host_pipe *p = ctx;
    *buf = p->c->scratch[slot];
    if (p->v->coll != DDL_COLL_ALLREDUCE)
        ddl_lane_blocks_fill(p->v, off, n, *buf);
    else
        reduce_in(p->v, off, n, *buf);
    return DDL_OK;
}

static ddl_status_t host_drain(void *ctx, int slot, size_t off, size_t n, void *buf)
{
    (void)slot;
    const lane_view_t *v = ((const struct host_pipe *)ctx)->v;
    if (v->coll != DDL_COLL_ALLREDUCE)
        ddl_lane_blocks_drain(v, off, n, buf);
    else
        write_out(v, off, n, buf);
    return DDL_OK;
}

/* Between nodes: the slice in chunks through the pipeline and the host-p2p
 * transport.  A reduce-scatter's or allgather's chunk carries one piece per
 * node (lane_view.h), each a chunk's share. */
static ddl_status_t multi_node(ddl_comm_t *c, ddl_call_t *call, const lane_view_t *v, size_t off, size_t n)
{
    ddl_chunks_t plan = ddl_chunks_plan(n, v->esize, call->plan.chunk / ddl_call_pieces(v->coll, v->nnodes), 1);
    struct host_pipe p = {c, v};
    ddl_pipeline_ops_t ops = {host_fill, host_drain, &p};
    return ddl_pipeline_run(c, call, ddl_transport_for(c, 0, v->dtype, v->op), &plan, off, &ops);
}

/* Where an owner's buffer is: in its ddl_malloc heap (shared, no copy) or not
 * (staged through the owner's stage area). */
static ddl_loc_kind_t locate(const ddl_comm_t *c, const void *buf, size_t bytes, uint64_t *off)
{
    size_t o;
    /* bytes against the room left, not buf + bytes: that may lie past the end of the address space. */
    if (ddl_comm_heap_offset(c, buf, &o) && bytes <= c->segs[c->info.gpu].size - o) {
        *off = o;
        return DDL_LOC_HEAP;
    }
    *off = 0;
    return DDL_LOC_STAGE;
}

static const char *loc_ptr(const ddl_comm_t *c, int g, int kind, uint64_t off, size_t round_off)
{
    const char *base = c->segs[g].base;
    return kind == DDL_LOC_HEAP ? base + off + round_off : base;
}

/* A round of a reduce-scatter or allgather is a window of each GPU's block:
 * elements [r0, r0 + n) of every block.  A staged input or output holds the
 * window's blocks packed, the output after the input (stage_in: the input's
 * elements there). */
static size_t stage_in(const ddl_call_t *call, size_t gpus, size_t n)
{
    return call->coll == DDL_COLL_REDUCE_SCATTER ? gpus * n : n;
}

/* An owner's staged input for the round at r0 of n elements, into its stage
 * area (from device memory too: ddl_blocks_copy). */
static ddl_status_t copy_in(const ddl_comm_t *c, const ddl_call_t *call, size_t r0, size_t n, size_t esize,
                            char *stage)
{
    const char *send = call->sendbuf;
    size_t count = (size_t)call->count, blocks = call->coll == DDL_COLL_REDUCE_SCATTER ? ddl_comm_gpus(c) : 1;
    ddl_status_t st = DDL_OK;
    for (size_t b = 0; b < blocks && st == DDL_OK; b++)
        st = ddl_blocks_copy(c, call, stage + b * n * esize, send + (b * count + r0) * esize, n * esize);
    return st;
}

/* Its staged output for the round, out of the stage area. */
static ddl_status_t copy_out(const ddl_comm_t *c, const ddl_call_t *call, size_t r0, size_t n, size_t esize,
                             const char *stage)
{
    char *recv = call->recvbuf;
    size_t gpus = ddl_comm_gpus(c), count = (size_t)call->count, blocks = call->coll == DDL_COLL_ALLGATHER ? gpus : 1;
    if (call->coll != DDL_COLL_ALLREDUCE)
        stage += stage_in(call, gpus, n) * esize;
    ddl_status_t st = DDL_OK;
    for (size_t b = 0; b < blocks && st == DDL_OK; b++)
        st = ddl_blocks_copy(c, call, recv + (b * count + r0) * esize, stage + b * n * esize, n * esize);
    return st;
}

/* Owner g's buffers in the view for the round at r0 of n elements. */
static void view_owner(const ddl_comm_t *c, const ddl_call_t *call, const ddl_node_req_t *rq, int g, size_t r0,
                       size_t n, lane_view_t *v)
{
    size_t es = v->esize, count = (size_t)call->count;
    v->in[g] = loc_ptr(c, g, rq->in_kind, rq->in_off, r0 * es);
    v->out[g] = (char *)loc_ptr(c, g, rq->out_kind, rq->out_off, r0 * es);
    if (call->coll == DDL_COLL_ALLREDUCE)
        return; /* a staged allreduce is in place in the stage area */
    v->in_stride[g] = rq->in_kind == DDL_LOC_STAGE ? n : count;
    v->out_stride[g] = rq->out_kind == DDL_LOC_STAGE ? n : count;
    if (rq->out_kind == DDL_LOC_STAGE)
        v->out[g] += stage_in(call, ddl_comm_gpus(c), n) * es;
}

static ddl_status_t post_request(ddl_comm_t *c, ddl_call_t *call, const ddl_sig_t *sig)
{
    size_t esize = ddl_dtype_size((ddl_dtype_t)sig->dtype), in_elems, out_elems;
    ddl_call_elems(sig->coll, (size_t)sig->count, ddl_comm_gpus(c), &in_elems, &out_elems);
    ddl_node_req_t *rq = ddl_node_request(&c->node, c->info.local_rank);
    /* Serve-mode helpers read this slot after the doorbell, and publish their
     * call right after: the last request must have been taken before it is
     * rewritten.  A call that ended at the meeting (a peer on another path)
     * left no barrier behind that the helpers passed, and a slow helper then
     * read the next request under the old doorbell and served that call
     * twice (seen once under ASan: the helper alone in a results barrier, the
     * owners waiting for it at the next call's meeting). */
    if (c->helper_mode == DDL_HELPERS_SERVE && c->info.lanes > 1) {
        ddl_status_t st = ddl_node_wait_published(&c->node, c->info.local_rank + 1, c->info.lanes - 1, rq->sig.seq);
        if (st != DDL_OK)
            return ddl_comm_fail(c, st);
    }
    rq->shutdown = 0;
    const void *sendbuf = call->sendbuf;
    void *recvbuf = call->recvbuf;
    rq->plan = call->plan;
    rq->sig = *sig;
    if (call->own_error == DDL_OK && call->mem == DDL_MEM_HOST) {
        rq->in_kind = locate(c, sendbuf, in_elems * esize, &rq->in_off);
        rq->out_kind = locate(c, recvbuf, out_elems * esize, &rq->out_off);
    } else if (call->own_error == DDL_OK && call->coll != DDL_COLL_ALLREDUCE) {
        /* A reduce-scatter's or allgather's device buffers are staged
         * through host memory (copy_in, copy_out), where the lanes reduce
         * and send; the allreduce's device kernels (allreduce_gpu.c) have
         * no counterpart for them yet. */
        rq->in_kind = rq->out_kind = DDL_LOC_STAGE;
        rq->in_off = rq->out_off = 0;
    } else {
        /* Device buffers are opened by the node's other ranks; an owner whose
         * buffers cannot be used has said why, and every rank fails the call. */
        if (call->own_error == DDL_OK &&
            (call->own_error = ddl_gpu_export(sendbuf, &rq->in_ref, rq->pci_bus_id, sizeof(rq->pci_bus_id))) == DDL_OK)
            call->own_error = ddl_gpu_export(recvbuf, &rq->out_ref, rq->pci_bus_id, sizeof(rq->pci_bus_id));
        rq->in_kind = rq->out_kind = call->own_error == DDL_OK ? DDL_LOC_DEVICE : DDL_LOC_INVALID;
    }
    if (c->helper_mode == DDL_HELPERS_SERVE)
        ddl_node_ring(&c->node);
    return DDL_OK;
}

/* After the node has met: DDL_LOC_DEVICE when every owner of the node posted
 * device buffers, DDL_LOC_INVALID when any owner's buffers cannot be used or
 * owners mix host and device memory (*why says which), else DDL_LOC_HEAP for
 * host memory of either kind. */
static ddl_loc_kind_t node_memory(const ddl_comm_t *c, int *why)
{
    int device = 0;
    for (int g = 0; g < c->info.gpus_per_node; g++) {
        int kind = ddl_node_request(&c->node, g * c->info.lanes)->in_kind;
        if (kind == DDL_LOC_INVALID) {
            *why = g;
            return DDL_LOC_INVALID;
        }
        device += kind == DDL_LOC_DEVICE;
    }
    *why = -1;
    return device == 0 ? DDL_LOC_HEAP : device == c->info.gpus_per_node ? DDL_LOC_DEVICE : DDL_LOC_INVALID;
}

/* A mismatch is found before anyone writes to a caller's buffer: the node's
 * ranks meet once more (so that no rank signs its next call while a peer still
 * reads this one's signatures) and the communicator stays usable. */
static ddl_status_t meet_after_mismatch(ddl_comm_t *c, ddl_status_t st)
{
    ddl_status_t met = ddl_node_barrier(&c->node, "lane allreduce: meeting after a mismatch");
    return met == DDL_OK ? st : ddl_comm_fail(c, met);
}

/* A node that disagrees (inside, or on the path) still tells the other
 * nodes: its owners take part in the owners' exchange with sig, marked as
 * disagreeing (node_agreed: every owner of the node sends this same sig), and
 * keep their own message, which names the local ranks; its helpers know
 * without their word.  DDL_OK, or the failure that broke the communicator. */
static ddl_status_t tell_other_nodes(ddl_comm_t *c, const ddl_sig_t *sig, int node_agreed)
{
    if (c->info.role != DDL_ROLE_OWNER || c->info.nnodes == 1)
        return DDL_OK;
    char mine[512];
    snprintf(mine, sizeof(mine), "%s", ddl_last_error());
    ddl_sig_t told = *sig;
    told.bad = DDL_SIG_NODE_DISAGREES;
    ddl_status_t st = ddl_owners_agree(c, &told, NULL, NULL, node_agreed);
    if (st != DDL_OK && st != DDL_ERR_MISMATCH && st != DDL_ERR_INVALID_ARG)
        return ddl_comm_fail(c, st);
    ddl_log_keep_error(mine);
    return DDL_OK;
}

/* After the first meeting: the node's signatures; between nodes the owners
 * then carry the node's signature into the owners' exchange, after the first
 * chunk has been reduced and before it leaves (ddl_owners_finish_signature). */
static ddl_status_t check_signatures(ddl_comm_t *c, ddl_call_t *call, uint32_t seq)
{
    ddl_sig_t node_sig;
    ddl_status_t local = ddl_sig_check_node(&c->node, seq, &node_sig);
    if (local != DDL_OK) {
        ddl_status_t st = tell_other_nodes(c, &node_sig, 1);
        return st != DDL_OK ? st : meet_after_mismatch(c, local);
    }
    if (c->info.nnodes > 1) {
        call->seq = seq;
        call->node_sig = node_sig;
        call->sig_pending = 1;
    }
    return DDL_OK;
}

/* The node cannot meet on the lanes for call seq: local rank `other` took
 * the MPI path for it (it was called with a size that goes there), or went on
 * to a later call.  No rank of the node has entered a node barrier for this
 * call, so every rank leaves it with DDL_ERR_MISMATCH and the communicator
 * stays usable.  Between nodes the owners still take part in the owners'
 * exchange, where the MPI path's owners (here and elsewhere) and the other
 * nodes' lanes wait, marked as disagreeing, so that every node learns it. */
static ddl_status_t split_paths(ddl_comm_t *c, uint32_t seq, const ddl_sig_t *sig, int other)
{
    const ddl_comm_info_t *in = &c->info;
    const ddl_mailbox_t *b = ddl_node_mailbox(&c->node, other, seq);
    ddl_sig_t theirs = ddl_sig_from_key(b->key);
    uint32_t their_seq = atomic_load_explicit(&b->seq, memory_order_acquire);
    char da[160], db[160];
    ddl_sig_describe(sig, da, sizeof(da));
    ddl_sig_describe(&theirs, db, sizeof(db));
    ddl_status_t st;
    if (their_seq == seq && theirs.bad == DDL_SIG_REFUSED)
        st = ddl_error(DDL_ERR_MISMATCH, "ranks called the collective differently on %s (node %d): rank %d (local "
                       "rank %d) refused its own arguments to this call (its message says why); the call fails on "
                       "every rank, and the next one pairs up as usual", c->node.host, in->node,
                       c->world_of_local[other], other);
    else if (their_seq != seq)
        st = ddl_error(DDL_ERR_MISMATCH, "ranks called the collective differently on %s (node %d): rank %d (local "
                       "rank %d) with %s; rank %d (local rank %d) has gone on to call %u without it; every rank must "
                       "pass the same count, type and op, in the same order", c->node.host, in->node, in->rank,
                       in->local_rank, da, c->world_of_local[other], other, (unsigned)their_seq);
    else
        st = ddl_error(DDL_ERR_MISMATCH, "ranks called the collective differently on %s (node %d): rank %d (local "
                       "rank %d) with %s; rank %d (local rank %d) with %s, which goes another way; every rank must "
                       "pass the same count, type and op, in the same order", c->node.host, in->node, in->rank,
                       in->local_rank, da, c->world_of_local[other], other, db);
    ddl_status_t told = tell_other_nodes(c, sig, 0); /* the MPI path's owners here send their own */
    return told != DDL_OK ? told : st;
}

/* The rest of a call on device buffers, or of one that fails for bad buffers:
 * every rank of the node meets again at the end, so that no owner posts its
 * next request while a peer still reads this one. */
static ddl_status_t device_or_invalid(ddl_comm_t *c, ddl_call_t *call, ddl_loc_kind_t kind, int why,
                                      const void *sendbuf, void *recvbuf)
{
    const ddl_comm_info_t *in = &c->info;
    /* Buffers that cannot be used are this node's secret until its owners
     * say so in the exchange: the other nodes would otherwise agree, send
     * their chunks and wait for this node's until DDL_TIMEOUT. */
    if (kind == DDL_LOC_INVALID)
        call->node_sig.bad = DDL_SIG_BAD_BUFFER;
    int mine_bad = why >= 0 && why * in->lanes == in->local_rank;
    char own[512] = "";
    if (mine_bad) /* its own reason, not the exchange's echo of it */
        snprintf(own, sizeof(own), "%s", ddl_last_error());
    ddl_status_t st = ddl_owners_finish_signature(c, call);
    if (st == DDL_ERR_MISMATCH || (st == DDL_ERR_INVALID_ARG && kind != DDL_LOC_INVALID))
        return meet_after_mismatch(c, st); /* another node's, found in the exchange */
    if (mine_bad && (st == DDL_OK || st == DDL_ERR_INVALID_ARG)) {
        st = call->own_error;
        ddl_log_keep_error(own);
    } else if (st == DDL_OK && kind == DDL_LOC_DEVICE) {
        st = ddl_gpu_allreduce(c, call, sendbuf, recvbuf); /* through the CUDA module */
    } else if (st == DDL_OK)
        st = why >= 0 ? ddl_error(DDL_ERR_INVALID_ARG, "%s: the owner of GPU %d on node %d (rank %d) passed buffers "
                                  "it cannot share (its message says why)", ddl_coll_calls[call->coll], why, in->node,
                                  c->world_of_local[why * in->lanes])
                      : ddl_error(DDL_ERR_INVALID_ARG, "%s: the owners of node %d passed host and device buffers; all "
                                  "owners pass the same kind of memory", ddl_coll_calls[call->coll], in->node);
    ddl_status_t met = ddl_node_barrier(&c->node, "lane allreduce: the node's results");
    if (kind == DDL_LOC_INVALID && met == DDL_OK)
        return st; /* a usage error: the communicator stays usable */
    st = st == DDL_OK ? met : st;
    return st == DDL_OK ? DDL_OK : ddl_comm_fail(c, st);
}

/* Where a call's time goes, phase by phase (core/phases.h): always counted
 * (ddl_comm_phases; a few clock reads against a call of tens of microseconds
 * at least), logged at DDL_DEBUG=TRACE and traced with DDL_TRACE. */
enum { CALL_PHASES = DDL_PH_COPY_OUT + 1 }; /* the call's own; the pipeline counts the rest (pipeline.c) */

static void lap(ddl_comm_t *c, int phase, double *last)
{
    double now = ddl_now();
    c->phase_seconds[phase] += now - *last;
    if (now > *last)
        ddl_trace_event(ddl_phase_names[phase], *last, now, NULL);
    *last = now;
}

/* The call's first meeting on the node, after ddl_node_publish: every local
 * rank there, then the node's signatures.  *ended: the call ends with the
 * status returned, as it is (a node that met on a mismatch, or one split
 * between paths); otherwise a failure ends it as a broken communicator. */
static ddl_status_t meet_node(ddl_comm_t *c, ddl_call_t *call, const ddl_sig_t *sig, double *last, int *ended)
{
    uint32_t seq = sig->seq;
    int split;
    *ended = 0;
    ddl_status_t st = ddl_node_meet(&c->node, seq, &split);
    if (st != DDL_OK)
        return st;
    *ended = 1;
    if (split >= 0)
        return split_paths(c, seq, sig, split);
    lap(c, DDL_PH_BARRIER_IN, last);
    if ((st = check_signatures(c, call, seq)) != DDL_OK)
        return st;
    *ended = 0;
    lap(c, DDL_PH_SIGNATURES, last);
    return DDL_OK;
}

/* Local rank 0 of a call that starts early between nodes (the node's
 * decision is its own, ddl_lane_early_choose) reduces and sends its first
 * chunk before the helpers reach the call: that chunk needs only the
 * owners' buffers, and on a host with fewer cores than processes the last
 * rank of the node to be scheduled took most of a request's start (the node
 * barrier, 88-181 us on the emulated rails, bench/JOURNAL.md).  It waits
 * for the owners alone, and goes ahead when every one has shown this call on
 * the lanes with buffers in its ddl_malloc heap (no stage rounds, no device
 * memory); otherwise (an owner on another path, or past this call) the node
 * meets as for any call.  The rest of the meeting then
 * runs where the owners' exchange does, after the first chunk has left and
 * before any chunk is finished (the pipeline's ready), so a mismatch in the
 * node abandons the chunk as one between nodes does. */
static int owners_shown(const ddl_comm_t *c, uint32_t seq)
{
    for (int g = 0; g < c->info.gpus_per_node; g++) {
        const ddl_mailbox_t *b = ddl_node_mailbox(&c->node, g * c->info.lanes, seq);
        const ddl_node_req_t *rq = ddl_node_request(&c->node, g * c->info.lanes);
        if (atomic_load_explicit(&b->seq, memory_order_acquire) != seq ||
            ddl_sig_from_key(b->key).algo == DDL_ALGO_MPI || rq->in_kind != DDL_LOC_HEAP ||
            rq->out_kind != DDL_LOC_HEAP)
            return 0;
    }
    return 1;
}

/* A call's first meeting, run where the call is or (meet_behind) after its
 * first chunk has left: what meet_node needs, and how it ended. */
struct meeting {
    ddl_comm_t *c;
    ddl_call_t *call;
    const ddl_sig_t *sig;
    int ended;
};

static ddl_status_t meet_behind(void *ctx)
{
    struct meeting *m = ctx;
    m->call->meet_rest = NULL;
    /* Its phases from its own start: it runs inside the pipeline, whose
     * time (reduce and exchange) goes on counting around it. */
    double since = ddl_now();
    return meet_node(m->c, m->call, m->sig, &since, &m->ended);
}

size_t ddl_lane_chunk(const ddl_comm_t *c, size_t bytes, int multiring)
{
    const ddl_band_t *band = ddl_tuning_find(&c->set.tuning, bytes);
    size_t chunk = band && band->chunk ? band->chunk : c->set.chunk_size;
    if (chunk)
        return chunk < c->scratch_bytes ? chunk : c->scratch_bytes;
    return ddl_model_chunk(&c->set.tuning.model, multiring ? &c->set.grid : NULL, c->info.nnodes, c->info.gpus_per_node,
                           bytes / (size_t)c->info.local_size, c->scratch_bytes);
}

ddl_status_t ddl_lane_path(ddl_comm_t *c, ddl_call_t *call, int multiring)
{
    const ddl_comm_info_t *in = &c->info;
    int owner = in->role == DDL_ROLE_OWNER;
    const void *sendbuf = owner ? call->sendbuf : NULL; /* a helper's are not used */
    void *recvbuf = owner ? call->recvbuf : NULL;
    size_t count = (size_t)call->count;
    ddl_dtype_t dtype = call->dtype;
    ddl_redop_t op = call->op;
    lane_view_t v = {.gpus = in->gpus_per_node, .esize = ddl_dtype_size(dtype), .dtype = dtype, .op = op,
                     .divisor = op == DDL_REDOP_AVG ? in->gpus_per_node * in->nnodes : 1,
                     .fn = ddl_reduce_fn(dtype, op), .coll = call->coll, .node = in->node, .nnodes = in->nnodes};
    size_t gpus = ddl_comm_gpus(c);
    /* In serve mode the helpers take the owner's choices (and signature) from
     * its request; everyone else signs what it was called with. */
    ddl_sig_t sig;
    if (owner || c->helper_mode == DDL_HELPERS_COLLECTIVE) {
        sig = (ddl_sig_t){(int64_t)count, dtype, op, multiring ? DDL_ALGO_MULTIRING : DDL_ALGO_LANE,
                          call->plan.lane_algo, call->plan.chunk, c->seq, 0, call->coll};
    } else {
        const ddl_node_req_t *orq = ddl_node_request(&c->node, in->gpu * in->lanes);
        call->plan = orq->plan;
        sig = orq->sig;
    }
    uint32_t seq = sig.seq;
    call->sig_pending = 0;
    if (owner) {
        ddl_status_t posted = post_request(c, call, &sig);
        if (posted != DDL_OK)
            return posted;
    }
    const ddl_node_req_t *mine = ddl_node_request(&c->node, in->local_rank);
    /* Staged buffers go through in rounds as large as the stage area; when every
     * owner's buffers are shared, one round takes the whole message.  A staged
     * owner fills its first round before the first barrier; everyone learns
     * after it whether any owner stages, so all ranks cut the same rounds.  A
     * reduce-scatter's or allgather's round is a window of every block: the
     * stage holds its input and output blocks (copy_in). */
    size_t stage_elems = c->set.stage_size / v.esize;
    size_t round = call->coll == DDL_COLL_ALLREDUCE ? stage_elems : stage_elems / (gpus + 1);
    if (round == 0) /* only where the stage area is smaller than a few elements per GPU of the job */
        return ddl_comm_fail(c, ddl_error(DDL_ERR_INVALID_ARG, "%s: the stage area (DDL_STAGE_SIZE=%zu) holds less "
                                          "than one element per GPU of the job; pass buffers from ddl_malloc or "
                                          "raise DDL_STAGE_SIZE", ddl_coll_names[call->coll], c->set.stage_size));
    ddl_status_t st = DDL_OK;
    double before[CALL_PHASES], last = ddl_now();
    memcpy(before, c->phase_seconds, sizeof(before));
    struct meeting meeting = {c, call, &sig, 0};
    call->meet_rest = NULL;
    call->meet_ctx = &meeting;
    c->lane_calls++;
    call->lane_at = last;
    call->started = 0;
    if (call->posted_at > 0) /* the trace's "queued" event is the engine's */
        c->phase_seconds[DDL_PH_QUEUED] += last - call->posted_at;
    for (size_t r0 = 0; r0 < count && st == DDL_OK; r0 += round) {
        size_t n = count - r0 < round ? count - r0 : round;
        char *stage = c->segs[in->gpu].base;
        if (owner && mine->in_kind == DDL_LOC_STAGE && (st = copy_in(c, call, r0, n, v.esize, stage)) != DDL_OK) {
            if (r0 > 0)
                break; /* a failed device copy in the middle of a call breaks the communicator */
            /* Before the first meeting: the node learns that this owner's
             * buffers cannot be used, and every rank fails the call. */
            call->own_error = st;
            ddl_node_request(&c->node, in->local_rank)->in_kind = DDL_LOC_INVALID;
            st = DDL_OK;
        }
        lap(c, DDL_PH_COPY_IN, &last);
        call->early = 0;
        if (r0 == 0) {
            /* The first meeting is the call's: every rank shows which call it
             * is in and how it was called, whatever path it chose. */
            int early = 0, ahead = 0;
            if (in->local_rank == 0 && in->nnodes > 1) /* the node's decision, seen by all once it meets */
                ddl_node_publish_early(&c->node, seq, early = ddl_lane_early_choose(c, &sig));
            ddl_node_publish(&c->node, &sig, seq, 1);
            if (early > 0) {
                if ((st = ddl_node_wait_owners(&c->node, in->lanes, in->gpus_per_node, seq,
                                               "lane allreduce: the node's owners")) != DDL_OK)
                    break;
                lap(c, DDL_PH_BARRIER_IN, &last);
                ahead = owners_shown(c, seq);
            }
            if (ahead) {
                call->early = early;
                call->meet_rest = meet_behind; /* gone ahead: run by the pipeline, or below */
            } else {
                st = meet_node(c, call, &sig, &last, &meeting.ended);
                if (meeting.ended)
                    return st;
                if (st != DDL_OK)
                    break;
                call->early = call->sig_pending ? ddl_node_early(&c->node, seq) : 0;
            }
        } else if ((st = ddl_node_barrier(&c->node, "lane allreduce: the node's buffers")) != DDL_OK) {
            break;
        } else {
            lap(c, DDL_PH_BARRIER_IN, &last);
        }
        int why;
        ddl_loc_kind_t kind = r0 == 0 ? node_memory(c, &why) : DDL_LOC_HEAP;
        if (kind != DDL_LOC_HEAP)
            return device_or_invalid(c, call, kind, why, sendbuf, recvbuf);
        int staged = 0;
        for (int g = 0; g < v.gpus; g++) {
            const ddl_node_req_t *rq = ddl_node_request(&c->node, g * in->lanes);
            staged |= rq->in_kind == DDL_LOC_STAGE || rq->out_kind == DDL_LOC_STAGE;
        }
        if (r0 == 0 && !staged) {
            round = count;
            n = count;
        }
        for (int g = 0; g < v.gpus; g++)
            view_owner(c, call, ddl_node_request(&c->node, g * in->lanes), g, r0, n, &v);
        /* The allreduce's slice is of the message, the others' of the node's region. */
        v.block = n;
        size_t off, len, region = call->coll == DDL_COLL_ALLREDUCE ? n : (size_t)v.gpus * n;
        ddl_slice(region, (size_t)in->local_size, (size_t)in->local_rank, &off, &len);
        v.stream = (size_t)v.gpus * len * v.esize > STREAM_MIN_BYTES;
        if (in->nnodes == 1) {
            ddl_lane_started(c, call);
            single_node(&v, off, len);
        } else {
            st = multi_node(c, call, &v, off, len);
            if (call->meet_rest && st == DDL_OK) /* an empty slice: the pipeline did not get to it */
                st = meet_behind(&meeting);
            call->meet_rest = NULL;
            if (meeting.ended)
                return st;
            if (st == DDL_OK)
                st = ddl_owners_finish_signature(c, call); /* a rank with an empty slice has not waited for it */
        }
        /* The exchange found a difference, or an owner on another node
         * whose buffers cannot be used: a usage error, before anything was
         * written, and the communicator stays usable. */
        if (st == DDL_ERR_MISMATCH || st == DDL_ERR_INVALID_ARG)
            return meet_after_mismatch(c, st);
        if (st != DDL_OK)
            break;
        if (v.stream)
            ddl_copy_stream_fence(); /* the results are in memory before the barrier says so */
        lap(c, DDL_PH_NODES, &last);
        if ((st = ddl_node_barrier(&c->node, "lane allreduce: the node's results")) != DDL_OK)
            break;
        lap(c, DDL_PH_BARRIER_OUT, &last);
        if (owner && mine->out_kind == DDL_LOC_STAGE && (st = copy_out(c, call, r0, n, v.esize, stage)) != DDL_OK)
            break;
        lap(c, DDL_PH_COPY_OUT, &last);
    }
    if (st == DDL_OK && in->nnodes > 1)
        ddl_lane_early_learn(c, &call->node_sig); /* agreed by every node */
    double ph[CALL_PHASES];
    for (int i = 0; i < CALL_PHASES; i++)
        ph[i] = c->phase_seconds[i] - before[i];
    DDL_TRACE(DDL_SUBSYS_COLL, "lane allreduce of %zu %s: copy in %.2f ms, node barrier %.2f ms, signatures %.2f ms, "
              "between nodes %.2f ms, results barrier %.2f ms, copy out %.2f ms", count, ddl_dtype_name(dtype),
              ph[DDL_PH_COPY_IN] * 1e3, ph[DDL_PH_BARRIER_IN] * 1e3, ph[DDL_PH_SIGNATURES] * 1e3, ph[DDL_PH_NODES] * 1e3,
              ph[DDL_PH_BARRIER_OUT] * 1e3, ph[DDL_PH_COPY_OUT] * 1e3);
    return st == DDL_OK ? DDL_OK : ddl_comm_fail(c, st);
}
