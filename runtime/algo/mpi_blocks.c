/* SPDX-License-Identifier: Apache-2.0 */
/* The MPI path's reduce-scatter and allgather: the system
 * MPI_Reduce_scatter_block and MPI_Allgather over the owners, after the
 * owners' signatures (mpi_path.c).  MPI counts are int and MPI has no
 * in-place form that matches NCCL's (this rank's block of the other
 * buffer): larger blocks, and buffers that overlap, go through a packed
 * host copy (ddl_comm_bounce), piece by piece.  So do device buffers, as
 * the allreduce's do: the system MPI may not be CUDA-aware, and its user
 * ops (f16, bf16) run on the host. */
#include "config.h"

#include <string.h>

#include "comm.h"
#include "gpu.h"
#include "log.h"
#include "mpi_types.h"
#include "mpi_watch.h"
#include "paths.h"
#include "reduce.h"

/* The most elements of one block MPI gets in one call (its counts are int). */
#define PIECE_MAX ((size_t)1 << 30)

static int overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
    const char *x = a, *y = b;
    return x < y + b_bytes && y < x + a_bytes;
}

ddl_status_t ddl_blocks_copy(const ddl_comm_t *c, const ddl_call_t *call, void *dst, const void *src, size_t bytes)
{
    if (call->mem == DDL_MEM_DEVICE)
        return ddl_gpu_memcpy(dst, src, bytes, c->set.timeout);
    memcpy(dst, src, bytes);
    return DDL_OK;
}

/* One MPI_Reduce_scatter_block of n elements per block (at most PIECE_MAX)
 * from host memory, AVG finished. */
static ddl_status_t scatter_blocks(ddl_comm_t *c, const ddl_call_t *call, const void *send, void *recv, size_t n)
{
    ddl_mpi_watch_enter(c, "MPI_Reduce_scatter_block");
    int rc = MPI_Reduce_scatter_block(send, recv, (int)n, ddl_mpi_type(call->dtype, call->op),
                                      ddl_mpi_op(call->dtype, call->op), c->owners);
    ddl_mpi_watch_leave(c);
    if (rc != MPI_SUCCESS)
        return ddl_comm_fail(c, ddl_comm_mpi_error(c, "MPI_Reduce_scatter_block"));
    if (call->op == DDL_REDOP_AVG)
        ddl_avg_finish(recv, n, call->dtype, c->info.owner_size);
    return DDL_OK;
}

/* One MPI_Allgather of n elements per block (send MPI_IN_PLACE: this rank's
 * block of recv) in host memory. */
static ddl_status_t gather_blocks(ddl_comm_t *c, const ddl_call_t *call, const void *send, void *recv, size_t n)
{
    MPI_Datatype type = ddl_mpi_type(call->dtype, DDL_REDOP_SUM);
    ddl_mpi_watch_enter(c, "MPI_Allgather");
    int rc = MPI_Allgather(send, (int)n, type, recv, (int)n, type, c->owners);
    ddl_mpi_watch_leave(c);
    return rc == MPI_SUCCESS ? DDL_OK : ddl_comm_fail(c, ddl_comm_mpi_error(c, "MPI_Allgather"));
}

static ddl_status_t reduce_scatter(ddl_comm_t *c, const ddl_call_t *call)
{
    size_t count = (size_t)call->count, p = (size_t)c->info.owner_size, esize = ddl_dtype_size(call->dtype);
    const char *send = call->sendbuf;
    char *recv = call->recvbuf;
    if (call->mem == DDL_MEM_HOST && count <= PIECE_MAX && !overlap(send, p * count * esize, recv, count * esize))
        return scatter_blocks(c, call, send, recv, count);
    size_t piece = count < PIECE_MAX ? count : PIECE_MAX;
    ddl_status_t st = ddl_comm_bounce(c, (p + 1) * piece * esize);
    if (st != DDL_OK)
        return st;
    char *packed = c->bounce, *result = packed + p * piece * esize;
    for (size_t d = 0; d < count && st == DDL_OK; d += piece) {
        size_t n = count - d < piece ? count - d : piece;
        for (size_t b = 0; b < p && st == DDL_OK; b++)
            st = ddl_blocks_copy(c, call, packed + b * n * esize, send + (b * count + d) * esize, n * esize);
        if (st == DDL_OK && (st = scatter_blocks(c, call, packed, result, n)) == DDL_OK)
            st = ddl_blocks_copy(c, call, recv + d * esize, result, n * esize);
    }
    return st;
}

static ddl_status_t allgather(ddl_comm_t *c, const ddl_call_t *call)
{
    size_t count = (size_t)call->count, p = (size_t)c->info.owner_size, esize = ddl_dtype_size(call->dtype);
    const char *send = call->sendbuf;
    char *recv = call->recvbuf, *mine = recv + (size_t)c->info.owner_rank * count * esize;
    if (call->mem == DDL_MEM_HOST && count <= PIECE_MAX &&
        (send == mine || !overlap(send, count * esize, recv, p * count * esize)))
        return gather_blocks(c, call, send == mine ? MPI_IN_PLACE : send, recv, count);
    size_t piece = count < PIECE_MAX ? count : PIECE_MAX;
    ddl_status_t st = ddl_comm_bounce(c, (p + 1) * piece * esize);
    if (st != DDL_OK)
        return st;
    char *own = c->bounce, *packed = own + piece * esize;
    for (size_t d = 0; d < count && st == DDL_OK; d += piece) {
        size_t n = count - d < piece ? count - d : piece;
        /* before any block of recv is written */
        if ((st = ddl_blocks_copy(c, call, own, send + d * esize, n * esize)) == DDL_OK)
            st = gather_blocks(c, call, own, packed, n);
        for (size_t b = 0; b < p && st == DDL_OK; b++)
            st = ddl_blocks_copy(c, call, recv + (b * count + d) * esize, packed + b * n * esize, n * esize);
    }
    return st;
}

ddl_status_t ddl_mpi_blocks(ddl_comm_t *c, const ddl_call_t *call)
{
    return call->coll == DDL_COLL_REDUCE_SCATTER ? reduce_scatter(c, call) : allgather(c, call);
}
