/* SPDX-License-Identifier: Apache-2.0 */
/* The device rows of the transport table (transport/transport.h).  The
 * chunk buffer is device memory on the rank's stream (gpu_cuda.h); each row
 * returns it holding the lane's result, in stream order. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "comm.h"
#include "gpu_cuda.h"
#include "gpu_nccl.h"
#include "log.h"
#include "mpi_types.h"
#include "transport.h"

/* staged: through the slot's pinned host buffer and the host-p2p row. */
static ddl_status_t staged_start(ddl_comm_t *c, const ddl_call_plan_t *plan, ddl_steps_fn build, int slot, void *buf,
                                 size_t n, ddl_dtype_t dtype, ddl_redop_t op, int early)
{
    (void)early; /* never early: no abandon */
    cudaError_t rc = cudaMemcpyAsync(c->scratch[slot], buf, n * ddl_dtype_size(dtype), cudaMemcpyDeviceToHost,
                                     c->gpu->stream);
    if (rc != cudaSuccess)
        return ddl_cuda_error(rc, "copying a chunk to the host");
    ddl_status_t st = ddl_gpu_wait(c, "the device-to-host copy");
    return st == DDL_OK ? ddl_transport_host_p2p.start(c, plan, build, slot, c->scratch[slot], n, dtype, op, 0) : st;
}

static ddl_status_t staged_finish(ddl_comm_t *c, int slot, void *buf, size_t n, ddl_dtype_t dtype)
{
    ddl_status_t st = ddl_transport_host_p2p.finish(c, slot, c->scratch[slot], n, dtype);
    if (st != DDL_OK)
        return st;
    cudaError_t rc = cudaMemcpyAsync(buf, c->scratch[slot], n * ddl_dtype_size(dtype), cudaMemcpyHostToDevice,
                                     c->gpu->stream);
    if (rc != cudaSuccess)
        return ddl_cuda_error(rc, "copying a chunk back to the device");
    /* The host buffer takes another chunk DDL_INFLIGHT chunks on: the copy must be done. */
    return ddl_gpu_wait(c, "the host-to-device copy");
}

/* cuda-mpi: MPI_Iallreduce on the device chunk once the reduction kernel is
 * done.  Its state: each pipeline slot's request. */
static ddl_status_t mpi_init(ddl_comm_t *c, int max_steps, void **state)
{
    (void)max_steps;
    if (c->info.nnodes == 1)
        return DDL_OK;
    MPI_Request *req = malloc(sizeof(MPI_Request) * DDL_NSCHED);
    if (!req)
        return ddl_error(DDL_ERR_NO_MEMORY, "out of memory for the cuda-mpi transport");
    for (int i = 0; i < DDL_NSCHED; i++)
        req[i] = MPI_REQUEST_NULL;
    *state = req;
    return DDL_OK;
}

static void mpi_fini(ddl_comm_t *c, void *state)
{
    (void)c;
    free(state);
}

static ddl_status_t mpi_start(ddl_comm_t *c, const ddl_call_plan_t *plan, ddl_steps_fn build, int slot, void *buf,
                              size_t n, ddl_dtype_t dtype, ddl_redop_t op, int early)
{
    (void)plan, (void)build; /* the MPI library chooses its own algorithm */
    (void)early;             /* never early: no abandon */
    MPI_Datatype type;
    MPI_Op mop;
    ddl_mpi_native(dtype, op, &type, &mop); /* ddl_transport_for checked that MPI has them */
    ddl_status_t st = ddl_gpu_wait(c, "the reduction kernel");
    if (st != DDL_OK)
        return st;
    MPI_Request *req = ddl_transport_state(c, &ddl_transport_cuda_mpi);
    if (MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, type, mop, c->lane_comm, &req[slot]) != MPI_SUCCESS)
        return ddl_comm_mpi_error(c, "MPI_Iallreduce on device memory");
    return DDL_OK;
}

static ddl_status_t mpi_finish(ddl_comm_t *c, int slot, void *buf, size_t n, ddl_dtype_t dtype)
{
    (void)buf, (void)n, (void)dtype;
    MPI_Request *req = ddl_transport_state(c, &ddl_transport_cuda_mpi);
    ddl_mpi_wait_t w = {&req[slot], NULL, 1};
    return ddl_comm_wait(c, ddl_mpi_done, &w, "lane MPI_Iallreduce on device memory", NULL);
}

/* nccl: queued on the rank's stream after the reduction kernel; the stream
 * orders it with the averaging and the copies out (ddl_gpu_wait at the end
 * watches NCCL's error state). */
static ddl_status_t nccl_start(ddl_comm_t *c, const ddl_call_plan_t *plan, ddl_steps_fn build, int slot, void *buf,
                               size_t n, ddl_dtype_t dtype, ddl_redop_t op, int early)
{
    (void)plan, (void)build, (void)slot; /* NCCL chooses its own algorithm; the stream orders the slots */
    (void)early;                         /* never early: no abandon */
    struct ddl_gpu *g = c->gpu;
    ddl_status_t st = DDL_OK;
    if (!g->nccl && (st = ddl_nccl_create(c->lane_comm, c->set.timeout, &g->nccl)) != DDL_OK)
        return st;
    return ddl_nccl_allreduce(g->nccl, buf, n, dtype, op, g->stream);
}

static ddl_status_t nccl_finish(ddl_comm_t *c, int slot, void *buf, size_t n, ddl_dtype_t dtype)
{
    (void)c, (void)slot, (void)buf, (void)n, (void)dtype;
    return DDL_OK;
}

/* Which device transport a call takes: the one DDL_GPU_TRANSPORT agreed at
 * creation, cuda-mpi only where MPI has the type and op natively, else staged. */
static int staged_usable(const ddl_comm_t *c, int device, ddl_dtype_t dtype, ddl_redop_t op)
{
    (void)c, (void)dtype, (void)op;
    return device;
}

static int mpi_usable(const ddl_comm_t *c, int device, ddl_dtype_t dtype, ddl_redop_t op)
{
    MPI_Datatype type;
    MPI_Op mop;
    return device && c->set.gpu_transport == DDL_GPU_MPI && ddl_mpi_native(dtype, op, &type, &mop);
}

static int nccl_usable(const ddl_comm_t *c, int device, ddl_dtype_t dtype, ddl_redop_t op)
{
    (void)dtype, (void)op;
    return device && c->set.gpu_transport == DDL_GPU_NCCL;
}

const ddl_transport_t ddl_transport_staged = {
    .name = "staged", .usable = staged_usable, .start = staged_start, .finish = staged_finish};
const ddl_transport_t ddl_transport_cuda_mpi = {.name = "cuda-mpi",
                                                .init = mpi_init,
                                                .fini = mpi_fini,
                                                .usable = mpi_usable,
                                                .start = mpi_start,
                                                .finish = mpi_finish};
const ddl_transport_t ddl_transport_nccl = {
    .name = "nccl", .usable = nccl_usable, .start = nccl_start, .finish = nccl_finish};
