/* SPDX-License-Identifier: Apache-2.0 */
/* The MPI path's early start between nodes (paths.h): a call that repeats
 * the last call the owners agreed on there starts its MPI_Iallreduce into a
 * private buffer before the owners' exchange of signatures, so that the
 * exchange's round between the nodes overlaps the data's instead of coming
 * before it; the result is copied to recvbuf only once the signatures agree.
 * Only where the owners span more than one host as MPI sees it
 * (ddl_mpi_early_init) and up to DDL_MPI_EARLY_MAX_BYTES: elsewhere MPI_Iallreduce
 * measured slower than the round it saves.
 *
 * Why it is safe: the system MPI must never see owners pass different
 * counts, types or ops (it may reduce without a word, or abort).  Whether a
 * call starts early is decided from agreed history only (the last agreed
 * call, the same on every owner) and the call's own arguments, so every owner
 * that starts early passes MPI the same arguments: those of the last agreed
 * call.  An owner that does not (other arguments, or it could not) says so in
 * its signature, so the owners disagree and every one fails the call with
 * DDL_ERR_MISMATCH; the early operations then may wait on their
 * communicator for partners that never come, so after any failed call, on
 * any path (every owner fails it), no owner starts early again on this
 * communicator, and the buffer of one left in flight is left to it. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "gpu.h"
#include "log.h"
#include "mpi_types.h"
#include "node.h"
#include "paths.h"
#include "reduce.h"

struct ddl_mpi_early {
    MPI_Comm comm; /* the owners', for the early operations alone */
    int64_t count; /* the last agreed call between nodes on the MPI path; 0: none */
    int dtype, op;
    int off;       /* a call failed: an early operation may be in flight unmatched */
    void *out;     /* the private result, the last call's size */
    void *in;      /* device buffers: the host copy MPI reads */
    size_t cap;
    MPI_Request req;
};

ddl_status_t ddl_mpi_early_init(ddl_comm_t *c)
{
    if (ddl_comm_one_host(c) || c->info.nnodes < 2 || c->owners == MPI_COMM_NULL)
        return DDL_OK;
    MPI_Comm comm;
    if (MPI_Comm_dup(c->owners, &comm) != MPI_SUCCESS)
        return ddl_error(DDL_ERR_MPI, "MPI_Comm_dup (owners, early starts) failed");
    ddl_status_t named = ddl_mpi_errors_watch(comm, "owners' early starts", &c->mpi_failure);
    if (named != DDL_OK) {
        MPI_Comm_free(&comm);
        return named;
    }
    if (!(c->mpi_early = calloc(1, sizeof(*c->mpi_early)))) {
        MPI_Comm_free(&comm);
        return ddl_error(DDL_ERR_NO_MEMORY, "out of memory for the MPI path's early starts");
    }
    c->mpi_early->comm = comm;
    return DDL_OK;
}

/* This owner will not start `which` call early, where the others will. */
static void no_memory(const ddl_comm_t *c, size_t bytes, const char *which)
{
    DDL_LOG(DDL_LOG_WARN, DDL_SUBSYS_COLL, "rank %d: no memory for the MPI path's early start (%zu bytes): %s "
            "call fails as a mismatch", c->info.rank, bytes, which);
}

int ddl_mpi_early_start(ddl_comm_t *c, const ddl_call_t *call)
{
    struct ddl_mpi_early *e = c->mpi_early;
    if (!e || e->off || !e->out || call->own_error != DDL_OK || call->count != e->count ||
        (int)call->dtype != e->dtype || (int)call->op != e->op)
        return 0;
    const void *in = call->sendbuf;
    if (call->mem == DDL_MEM_DEVICE) {
        if (!e->in && !(e->in = malloc(e->cap))) { /* the last such call was on the host */
            no_memory(c, e->cap, "this");
            return 0;
        }
        if (ddl_gpu_memcpy(e->in, call->sendbuf, (size_t)call->count * ddl_dtype_size(call->dtype),
                           c->set.timeout) != DDL_OK) {
            DDL_LOG(DDL_LOG_WARN, DDL_SUBSYS_COLL, "rank %d: the MPI path's early start cannot copy the device "
                    "buffer (%s): the call fails as a mismatch", c->info.rank, ddl_last_error());
            return 0;
        }
        in = e->in;
    }
    MPI_Op mop = ddl_mpi_op(call->dtype, call->op);
    if (MPI_Iallreduce(in, e->out, (int)call->count, ddl_mpi_type(call->dtype, call->op), mop, e->comm, &e->req) != MPI_SUCCESS)
        return -1;
    return 1;
}

ddl_status_t ddl_mpi_early_finish(ddl_comm_t *c, ddl_call_t *call, ddl_status_t st)
{
    struct ddl_mpi_early *e = c->mpi_early;
    if (st != DDL_OK) { /* MPI may still use the buffers: never freed (see above) */
        e->off = 1;
        e->out = e->in = NULL;
        return st;
    }
    ddl_mpi_wait_t w = {&e->req, NULL, 1};
    st = ddl_comm_wait(c, ddl_mpi_done, &w, "ddl_allreduce: MPI_Iallreduce started with the signatures", NULL);
    if (st != DDL_OK)
        return ddl_comm_fail(c, st);
    size_t count = (size_t)call->count, bytes = count * ddl_dtype_size(call->dtype);
    if (call->op == DDL_REDOP_AVG)
        ddl_avg_finish(e->out, count, call->dtype, c->info.owner_size);
    if (call->mem == DDL_MEM_DEVICE)
        return ddl_gpu_memcpy(call->recvbuf, e->out, bytes, c->set.timeout);
    memcpy(call->recvbuf, e->out, bytes);
    return DDL_OK;
}

void ddl_mpi_early_stop(ddl_comm_t *c)
{
    if (c->mpi_early)
        c->mpi_early->off = 1;
}

void ddl_mpi_early_learn(ddl_comm_t *c, const ddl_call_t *call)
{
    struct ddl_mpi_early *e = c->mpi_early;
    if (!e)
        return;
    e->count = 0;
    size_t bytes = (size_t)call->count * ddl_dtype_size(call->dtype);
    if (e->off || bytes > DDL_MPI_EARLY_MAX_BYTES)
        return;
    if (e->cap < bytes) {
        free(e->in);
        free(e->out);
        e->in = NULL;
        e->cap = 0;
        if (!(e->out = malloc(bytes)))
            return no_memory(c, bytes, "the next such");
        e->cap = bytes;
    }
    e->count = call->count;
    e->dtype = call->dtype;
    e->op = call->op;
}

void ddl_mpi_early_free(ddl_comm_t *c)
{
    struct ddl_mpi_early *e = c->mpi_early;
    if (!e)
        return;
    MPI_Comm_free(&e->comm);
    free(e->in);
    free(e->out);
    free(e);
    c->mpi_early = NULL;
}
