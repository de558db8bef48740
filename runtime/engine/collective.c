/* SPDX-License-Identifier: Apache-2.0 */
/* A collective call (ddl_allreduce, ddl_reduce_scatter, ddl_allgather):
 * argument checks, the optional cross-rank check (DDL_CHECK), the call's
 * number, and the run of the path that route.c chooses, from the table of
 * each collective's paths. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "engine.h"
#include "gpu.h"
#include "log.h"
#include "mpi_watch.h"
#include "paths.h"
#include "route.h"
#include "trace.h"

/* Checked when a call is posted and again when it runs: a request queued
 * behind one that failed fails too, with the first failure's message. */
static ddl_status_t broken_error(const ddl_comm_t *c, int coll)
{
    return ddl_error(DDL_ERR_PEER_FAILED, "%s: an earlier collective on this communicator failed (%s); "
                     "destroy it", ddl_coll_calls[coll], c->broken_why);
}

/* The call's input and output elements on an owner (call.h). */
static void call_counts(const ddl_comm_t *c, int coll, int64_t count, size_t *in, size_t *out)
{
    ddl_call_elems(coll, (size_t)count, ddl_comm_gpus(c), in, out);
}

/* What fails a call on this rank alone, before it has a number: a
 * communicator that is not live or has failed, and a serve-mode helper's
 * call (it takes part through ddl_serve). */
static ddl_status_t check_comm(const ddl_comm_t *c, int coll)
{
    const char *fn = ddl_coll_calls[coll];
    if (!ddl_comm_is_live(c))
        return ddl_error(DDL_ERR_INVALID_ARG, "%s: not a live communicator (destroyed, or never created)", fn);
    if (c->broken)
        return broken_error(c, coll);
    if (c->info.role == DDL_ROLE_HELPER && c->helper_mode == DDL_HELPERS_SERVE)
        return ddl_error(DDL_ERR_INVALID_ARG, "%s: rank %d is a helper in serve mode: it runs ddl_serve, not %s", fn,
                         c->info.rank, fn);
    return DDL_OK;
}

/* The call's own arguments.  A call refused here still takes part in the
 * agreement (ddl_call_refuse). */
static ddl_status_t check_args(int coll, const void *sendbuf, const void *recvbuf, int64_t count, ddl_dtype_t dtype,
                               ddl_redop_t op, ddl_memory_t mem, const ddl_comm_t *c)
{
    const char *fn = ddl_coll_calls[coll];
    if ((unsigned)dtype >= DDL_DTYPE_COUNT)
        return ddl_error(DDL_ERR_INVALID_ARG, "%s: unknown datatype %d", fn, (int)dtype);
    if ((unsigned)op >= DDL_REDOP_COUNT)
        return ddl_error(DDL_ERR_INVALID_ARG, "%s: unknown reduction op %d", fn, (int)op);
    if (count < 0)
        return ddl_error(DDL_ERR_INVALID_ARG, "%s: count %lld is negative", fn, (long long)count);
    /* The larger buffer: a reduce-scatter's input, an allgather's output. */
    size_t blocks = coll == DDL_COLL_ALLREDUCE ? 1 : ddl_comm_gpus(c);
    size_t elems, bytes;
    if (__builtin_mul_overflow((size_t)count, blocks, &elems) ||
        __builtin_mul_overflow(elems, ddl_dtype_size(dtype), &bytes) || bytes > DDL_MAX_BUFFER_BYTES)
        return ddl_error(DDL_ERR_INVALID_ARG, "%s: count %lld of %s is more bytes than a buffer can hold", fn,
                         (long long)count, ddl_dtype_name(dtype));
    if (c->info.role == DDL_ROLE_OWNER && count > 0 && (!recvbuf || !sendbuf))
        return ddl_error(DDL_ERR_INVALID_ARG, "%s: %s is NULL on an owner (rank %d)", fn,
                         recvbuf ? "sendbuf" : "recvbuf", c->info.rank);
    if ((unsigned)mem > DDL_MEM_DEVICE)
        return ddl_error(DDL_ERR_INVALID_ARG, "%s: unknown memory kind %d", fn, (int)mem);
    return DDL_OK;
}

/* Where strdup found no memory for a refusal's message. */
static char refused_without_message[] = "this rank refused its arguments to the call (no memory for the reason)";

/* The refused call takes part in this form: count 0, no buffers, the
 * message kept for the runner.  Every rank numbers its calls, and a call
 * that went unnumbered here paired the others' call with this rank's next
 * one, and both gave success with the wrong data. */
void ddl_call_refuse(ddl_call_t *call, ddl_status_t st)
{
    char *why = strdup(ddl_last_error());
    *call = (ddl_call_t){.coll = call->coll, .dtype = DDL_DTYPE_F32, .op = DDL_REDOP_SUM,
                         .mem = DDL_MEM_HOST, .own_error = st, .refusal = why ? why : refused_without_message};
}

void ddl_call_free(ddl_call_t *call)
{
    if (call->refusal != refused_without_message)
        free(call->refusal);
    call->refusal = NULL;
}

/* DDL_CHECK=1: every rank that calls (all ranks in collective mode, the owners in
 * serve mode) compares count, type and op with the others. */
static ddl_status_t check_same_args(int coll, int64_t count, ddl_dtype_t dtype, ddl_redop_t op, ddl_comm_t *c)
{
    MPI_Comm comm = c->helper_mode == DDL_HELPERS_SERVE ? c->owners : c->world;
    int size, rank;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    int64_t mine[4] = {count, dtype, op, coll}, *all = malloc(sizeof(mine) * (size_t)size);
    if (!all)
        return ddl_error(DDL_ERR_NO_MEMORY, "DDL_CHECK: out of memory");
    ddl_mpi_watch_enter(c, "MPI_Allgather of DDL_CHECK");
    MPI_Allgather(mine, 4, MPI_INT64_T, all, 4, MPI_INT64_T, comm);
    ddl_mpi_watch_leave(c);
    ddl_status_t st = DDL_OK;
    for (int r = 1; r < size && st == DDL_OK; r++) {
        const int64_t *a = &all[0], *b = &all[4 * r];
        if (memcmp(a, b, sizeof(mine)) != 0)
            st = ddl_error(DDL_ERR_MISMATCH, "DDL_CHECK: ranks called differently: rank %d %s with count %lld, %s, "
                           "%s; rank %d %s with count %lld, %s, %s", 0, ddl_coll_calls[a[3]], (long long)a[0],
                           ddl_dtype_name((ddl_dtype_t)a[1]), ddl_redop_name((ddl_redop_t)a[2]), r,
                           ddl_coll_calls[b[3]], (long long)b[0], ddl_dtype_name((ddl_dtype_t)b[1]),
                           ddl_redop_name((ddl_redop_t)b[2]));
    }
    (void)rank;
    free(all);
    return st;
}

/* A buffer from ddl_malloc must hold the whole count: past its end lies the
 * next allocation. */
static ddl_status_t check_heap_room(ddl_comm_t *c, const ddl_call_t *call, size_t in_bytes, size_t out_bytes)
{
    const void *bufs[2] = {call->sendbuf, call->recvbuf};
    size_t bytes[2] = {in_bytes, out_bytes};
    for (int i = 0; i < 2; i++) {
        size_t off;
        if (!ddl_comm_heap_offset(c, bufs[i], &off))
            continue; /* not from ddl_malloc */
        size_t room = ddl_comm_heap_room(c, off);
        if (bytes[i] > room)
            return ddl_error(DDL_ERR_INVALID_ARG, "%s on rank %d: %s holds %zu bytes from that address "
                             "(its ddl_malloc allocation) but the call needs %zu; pass the count of the buffer",
                             ddl_coll_calls[call->coll], c->info.rank, i ? "recvbuf" : "sendbuf", room, bytes[i]);
    }
    return DDL_OK;
}

/* A buffer from ddl_malloc is host memory; any other is asked of CUDA, whose
 * answer costs a driver call (where CUDA is built in) on every call. */
static int is_device(const ddl_comm_t *c, const void *buf)
{
    size_t off;
    return !ddl_comm_heap_offset(c, buf, &off) && ddl_gpu_is_device(buf);
}

/* Owners: where the buffers are.  HOST or DEVICE, or AUTO when one is host
 * memory and the other device memory (the call fails on every rank). */
static ddl_memory_t locate_memory(const ddl_comm_t *c, const void *sendbuf, const void *recvbuf, ddl_memory_t stated)
{
    if (stated != DDL_MEM_AUTO)
        return stated;
    int s = is_device(c, sendbuf), r = sendbuf == recvbuf ? s : is_device(c, recvbuf);
    return s != r ? DDL_MEM_AUTO : s ? DDL_MEM_DEVICE : DDL_MEM_HOST;
}

/* DDL_IN_PLACE's input: the allreduce's recvbuf, the allgather's own block
 * of it (on owners: helpers pass no buffers).  The reduce-scatter has none:
 * in place is recvbuf = sendbuf + rank x recvcount, as NCCL's. */
static ddl_status_t resolve_in_place(int coll, const void **sendbuf, void *recvbuf, int64_t count, ddl_dtype_t dtype,
                                     const ddl_comm_t *c)
{
    if (*sendbuf != DDL_IN_PLACE)
        return DDL_OK;
    if (coll == DDL_COLL_REDUCE_SCATTER)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_reduce_scatter: DDL_IN_PLACE is no input: for a reduce-scatter in "
                         "place pass recvbuf = sendbuf + rank x recvcount (the rank in ddl_comm_owners), as NCCL does");
    *sendbuf = recvbuf;
    if (coll == DDL_COLL_ALLGATHER && recvbuf && (unsigned)dtype < DDL_DTYPE_COUNT && count > 0 &&
        c->info.role == DDL_ROLE_OWNER)
        *sendbuf = (const char *)recvbuf + (size_t)c->info.owner_rank * (size_t)count * ddl_dtype_size(dtype);
    return DDL_OK;
}

ddl_status_t ddl_call_post_check(int coll, const void *sendbuf, void *recvbuf, int64_t count, ddl_dtype_t dtype,
                                 ddl_redop_t op, ddl_memory_t mem, void *stream, ddl_comm_t *c, ddl_call_t *call)
{
    ddl_status_t st = check_comm(c, coll);
    if (st != DDL_OK)
        return st;
    call->coll = coll; /* a refusal keeps it */
    if ((st = resolve_in_place(coll, &sendbuf, recvbuf, count, dtype, c)) != DDL_OK ||
        (st = check_args(coll, sendbuf, recvbuf, count, dtype, op, mem, c)) != DDL_OK) {
        ddl_call_refuse(call, st);
        return DDL_OK;
    }
    *call = (ddl_call_t){.coll = coll, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
                         .dtype = dtype, .op = op, .mem = DDL_MEM_HOST, .stream = stream};
    /* Where the buffers are is asked now, on the caller's thread (its CUDA
     * context); the runner may be the progress thread. */
    if (c->info.role == DDL_ROLE_OWNER && count > 0)
        call->mem = locate_memory(c, sendbuf, recvbuf, mem);
    return DDL_OK;
}

static ddl_status_t lane_path(ddl_comm_t *c, ddl_call_t *call)
{
    return ddl_route_lane(c, call, 0);
}

static ddl_status_t multiring_path(ddl_comm_t *c, ddl_call_t *call)
{
    return ddl_route_lane(c, call, 1);
}

/* Each collective's row (collectives.def): its paths, one per id that
 * selection returns (never DDL_ALGO_AUTO).  The allreduce's smallest
 * messages (allreduce_inline.c) are its MPI path's, and device buffers its
 * lane paths' (allreduce_gpu.c): each is decided where that path's ranks
 * meet, when every owner's size and memory are known. */
static ddl_status_t (*const paths[DDL_COLL_COUNT][DDL_ALGO_COUNT])(ddl_comm_t *, ddl_call_t *) = {
    [DDL_COLL_ALLREDUCE] = {[DDL_ALGO_MPI] = ddl_mpi_path,
                            [DDL_ALGO_LANE] = lane_path,
                            [DDL_ALGO_MULTIRING] = multiring_path},
    [DDL_COLL_REDUCE_SCATTER] = {[DDL_ALGO_MPI] = ddl_mpi_path, [DDL_ALGO_LANE] = lane_path},
    [DDL_COLL_ALLGATHER] = {[DDL_ALGO_MPI] = ddl_mpi_path, [DDL_ALGO_LANE] = lane_path},
};

/* An owner's own buffers of in_bytes and out_bytes, once it runs the call:
 * call->own_error says why they cannot be used (every rank that waits for
 * them fails the call). */
static void check_own_buffers(ddl_comm_t *c, ddl_call_t *call, size_t in_bytes, size_t out_bytes)
{
    const void *sendbuf = call->sendbuf;
    void *recvbuf = call->recvbuf;
    const char *fn = ddl_coll_calls[call->coll];
    if (call->mem == DDL_MEM_AUTO)
        call->own_error = ddl_error(DDL_ERR_INVALID_ARG, "%s on rank %d: sendbuf is %s memory but recvbuf "
                                    "is %s memory: pass both on the host or both on the device", fn, c->info.rank,
                                    ddl_gpu_is_device(sendbuf) ? "device" : "host",
                                    ddl_gpu_is_device(recvbuf) ? "device" : "host");
    /* Other processes read the buffers: the work that fills them must be done. */
    else if (call->mem == DDL_MEM_DEVICE)
        call->own_error = call->ready ? ddl_gpu_wait_recorded(call->ready, c->set.timeout)
                                      : ddl_gpu_wait_queued(call->stream, c->set.timeout);
    else
        call->own_error = check_heap_room(c, call, in_bytes, out_bytes);
}

/* A collective-mode helper's online selection learns what its owner's
 * learnt, call for call, so that both choose alike: where its own lane call
 * succeeded the node met on one signature, and it records that call as the
 * owner does; otherwise (the MPI path, where its arguments are not compared,
 * or a call that failed) it records the call its owner recorded, if any,
 * from the owner's record (ddl_node_outcome).  A helper that failed a call
 * the owner ran would otherwise record nothing where the owner recorded
 * one, and from then on the two chose differently (every later call failed
 * as a mismatch). */
static ddl_status_t helper_record(ddl_comm_t *c, ddl_call_t *call, ddl_algo_id_t algo, size_t bytes,
                                  double seconds, ddl_status_t st)
{
    if (st == DDL_OK && algo != DDL_ALGO_MPI)
        return ddl_select_record(c, call, bytes, seconds, st);
    if (c->broken)
        return st; /* nothing is chosen on it again */
    int owner = c->info.gpu * c->info.lanes;
    char mine[512];
    snprintf(mine, sizeof(mine), "%s", ddl_last_error());
    ddl_status_t got = DDL_OK, ended;
    if (call->owner_class == DDL_OWNER_CLASS_UNREAD) { /* a failed lane call: the owner's record may come later */
        got = ddl_node_wait_count(&c->node, owner, c->doorbell_seen);
        if (got == DDL_OK)
            got = ddl_node_outcome(&c->node, owner, c->doorbell_seen, &ended, &call->owner_class);
    }
    if (got == DDL_OK)
        got = ddl_select_replay(c, call->owner_class);
    if (got != DDL_OK)
        return ddl_comm_fail(c, got);
    if (st != DDL_OK)
        ddl_log_keep_error(mine);
    return st;
}

static ddl_status_t run(ddl_call_t *call, ddl_comm_t *c)
{
    int64_t count = call->count;
    ddl_dtype_t dtype = call->dtype;
    ddl_redop_t op = call->op;
    ddl_status_t st;
    if (c->broken)
        return broken_error(c, call->coll);
    if (call->refusal)
        ddl_log_keep_error(call->refusal); /* this thread's message from here on (the runner may be another) */
    if (c->set.check && (st = check_same_args(call->coll, count, dtype, op, c)) != DDL_OK)
        return call->refusal ? call->own_error : st;
    /* Every call, count 0 and refused ones included, takes part in the
     * agreement under its own number: a rank that passes 0 where the others
     * pass 1000, or an argument it refuses, gets DDL_ERR_MISMATCH with them,
     * instead of pairing its next call with their current one. */
    c->seq++;
    /* Collective mode: each call of the owner ends with a count on its
     * doorbell (below), which its helpers take as theirs whatever path any
     * of them took (ddl_mpi_path). */
    int counted = c->info.lanes > 1 && c->helper_mode == DDL_HELPERS_COLLECTIVE;
    int helper = c->info.role == DDL_ROLE_HELPER;
    if (counted && helper)
        c->doorbell_seen++;
    /* What selection sizes a call by: its larger buffer (check_args refused
     * what overflows). */
    size_t in, out, esize = ddl_dtype_size(dtype);
    call_counts(c, call->coll, count, &in, &out);
    size_t bytes = (in > out ? in : out) * esize;
    /* An owner's unusable buffers fail the call on every rank that waits for
     * it (call->own_error), not only on the owner. */
    if (!helper && !call->refusal)
        check_own_buffers(c, call, in * esize, out * esize);
    call->owner_class = DDL_OWNER_CLASS_UNREAD;
    ddl_algo_id_t algo = ddl_select_algo(c, call, bytes);
    int timed = ddl_select_wants_time(c, call, bytes);
    double start = timed ? ddl_now() : 0;
    st = paths[call->coll][algo](c, call);
    /* A failed MPI call whose code no one checked (mpi_errors.h) fails the
     * call here, not the next one, and breaks the communicator. */
    if (st == DDL_OK && ddl_mpi_failure_check(&c->mpi_failure, ddl_coll_calls[call->coll]) != DDL_OK)
        st = ddl_comm_fail(c, DDL_ERR_MPI);
    double seconds = timed ? ddl_now() - start : -1;
    if (call->refusal)
        st = call->own_error; /* whatever the others made of it */
    if (counted && !helper) {
        /* what the record below teaches */
        int cls = call->cand && st == DDL_OK ? ddl_select_owner_class(call->coll, bytes) : -1;
        ddl_status_t rung = ddl_node_ring_outcome(&c->node, st, cls, c->info.lanes - 1);
        if (rung != DDL_OK)
            return ddl_comm_fail(c, rung);
    }
    if (st != DDL_OK && !helper && c->info.nnodes > 1) {
        ddl_mpi_early_stop(c);
        ddl_lane_early_stop(c);
    }
    if (counted && helper)
        return helper_record(c, call, algo, bytes, seconds, st);
    return ddl_select_record(c, call, bytes, seconds, st);
}

ddl_status_t ddl_call_run(ddl_call_t *call, ddl_comm_t *c)
{
    double start = ddl_trace_on ? ddl_now() : 0;
    ddl_status_t st = run(call, c);
    if (call->refusal) {
        ddl_log_keep_error(call->refusal);
        ddl_call_free(call);
    }
    if (ddl_trace_on) {
        char args[160];
        snprintf(args, sizeof(args), "\"count\": %lld, \"type\": \"%s\", \"op\": \"%s\", \"seq\": %u, \"status\": \"%s\"",
                 (long long)call->count, ddl_dtype_name(call->dtype), ddl_redop_name(call->op), (unsigned)c->seq,
                 ddl_status_string(st));
        ddl_trace_event(ddl_coll_names[call->coll], start, ddl_now(), args);
    }
    return st;
}
