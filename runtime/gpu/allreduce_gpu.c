/* The lane allreduce on device buffers (see gpu.h).  Each rank reduces its slice
 * of the node's G owner buffers with a kernel on its GPU that reads the other
 * owners' buffers through CUDA IPC, moves it between nodes in chunks over the
 * agreed transport, and copies the result into every owner buffer. */
#include "config.h"

#include <sched.h>
#include <string.h>

#include "chunks.h"
#include "gpu_cuda.h"
#include "gpu_kernels.h"
#include "log.h"
#include "reduce.h"
#include "slice.h"

#define CHUNK_ALIGN 256 /* device copies and packed kernel loads stay aligned */

typedef struct {
    const void *in[DDL_MAX_GPUS];
    char *out[DDL_MAX_GPUS];
    int gpus, me; /* me: this rank's GPU */
    size_t esize;
    ddl_dtype_t dtype;
    ddl_redop_t op;
    int divisor;
} gpu_view_t;

static ddl_status_t cuda_ok(cudaError_t rc, const char *what)
{
    return rc == cudaSuccess ? DDL_OK : ddl_cuda_error(rc, what);
}

/* dst = in[0] op ... op in[G-1] over elements [off, off + n), divided by
 * `divisor` for AVG. */
static ddl_status_t reduce_in(struct ddl_gpu *g, const gpu_view_t *v, size_t off, size_t n, void *dst, int divisor)
{
    const void *src[DDL_MAX_GPUS];
    for (int k = 0; k < v->gpus; k++)
        src[k] = (const char *)v->in[k] + off * v->esize;
    return cuda_ok(ddl_gpu_reduce(dst, src, v->gpus, n, v->dtype, v->op, divisor, g->stream), "the reduction kernel");
}

/* Copy n reduced elements from src (device) to [off, off + n) of every owner
 * buffer but skip the one src already is. */
static ddl_status_t write_out(struct ddl_gpu *g, const gpu_view_t *v, size_t off, size_t n, const void *src)
{
    for (int k = 0; k < v->gpus; k++) {
        char *dst = v->out[k] + off * v->esize;
        if (dst == src)
            continue;
        cudaError_t rc = cudaMemcpyAsync(dst, src, n * v->esize, cudaMemcpyDefault, g->stream);
        if (rc != cudaSuccess)
            return ddl_cuda_error(rc, "copying the result to the node's GPUs");
    }
    return DDL_OK;
}

static ddl_status_t single_node(ddl_comm_t *c, struct ddl_gpu *g, const gpu_view_t *v, size_t off, size_t n)
{
    char *mine = v->out[v->me] + off * v->esize;
    ddl_status_t st = reduce_in(g, v, off, n, mine, v->divisor);
    if (st == DDL_OK)
        st = write_out(g, v, off, n, mine);
    return st == DDL_OK ? ddl_gpu_wait(c, "the node's device reduction") : st;
}

/* Staged: each chunk is copied to pinned host memory and goes between nodes on
 * the host lane schedules, two chunks in flight as on the host path. */
static ddl_status_t staged(ddl_comm_t *c, struct ddl_gpu *g, const gpu_view_t *v, size_t off, size_t n)
{
    ddl_chunks_t plan = ddl_chunks_plan(n, v->esize, c->now.chunk, CHUNK_ALIGN);
    ddl_reduce_fn_t fn = ddl_reduce_fn(v->dtype, v->op);
    ddl_status_t st = DDL_OK;
    for (size_t k = 0; k <= plan.count && st == DDL_OK; k++) {
        int i = (int)(k % DDL_NSCHED), prev = (int)((k + DDL_NSCHED - 1) % DDL_NSCHED);
        size_t co, cn;
        if (k < plan.count) {
            ddl_chunk_at(&plan, k, &co, &cn);
            st = reduce_in(g, v, off + co, cn, g->chunk[i], 1);
            if (st == DDL_OK)
                st = cuda_ok(cudaMemcpyAsync(c->scratch[i], g->chunk[i], cn * v->esize, cudaMemcpyDeviceToHost,
                                             g->stream), "copying a chunk to the host");
            if (st == DDL_OK)
                st = ddl_gpu_wait(c, "the device-to-host copy");
            if (st == DDL_OK)
                st = ddl_lane_chunk_start(c, i, cn, v->esize, fn);
            if (st != DDL_OK)
                break;
        }
        if (k > 0) {
            ddl_chunk_at(&plan, k - 1, &co, &cn);
            st = ddl_lane_chunk_finish(c, prev);
            if (st != DDL_OK)
                break;
            ddl_avg_finish(c->scratch[prev], cn, v->dtype, v->divisor);
            st = cuda_ok(cudaMemcpyAsync(g->chunk[prev], c->scratch[prev], cn * v->esize, cudaMemcpyHostToDevice,
                                         g->stream), "copying a chunk back to the device");
            if (st == DDL_OK)
                st = write_out(g, v, off + co, cn, g->chunk[prev]);
            /* The host chunk is reused two chunks on: its copy must be done. */
            if (st == DDL_OK)
                st = ddl_gpu_wait(c, "the host-to-device copy");
        }
    }
    return st;
}

/* Moves one reduced device chunk between nodes, in place. */
typedef ddl_status_t (*move_fn_t)(ddl_comm_t *c, struct ddl_gpu *g, const gpu_view_t *v, void *buf, size_t n);

/* NCCL: queued on the rank's stream after the reduction kernel; the stream
 * orders it with the averaging and the copies out. */
static ddl_status_t move_nccl(ddl_comm_t *c, struct ddl_gpu *g, const gpu_view_t *v, void *buf, size_t n)
{
    ddl_status_t st = DDL_OK;
    if (!g->nccl && (st = ddl_nccl_create(c->lane_comm, c->set.timeout, &g->nccl)) != DDL_OK)
        return st;
    return ddl_nccl_allreduce(g->nccl, buf, n, v->dtype, v->op, g->stream);
}

/* CUDA-aware MPI: MPI_Iallreduce on the device chunk once the kernel is done. */
static ddl_status_t move_mpi(ddl_comm_t *c, struct ddl_gpu *g, const gpu_view_t *v, void *buf, size_t n)
{
    (void)g;
    MPI_Datatype type;
    MPI_Op mop;
    ddl_mpi_native(v->dtype, v->op, &type, &mop); /* the caller checked that MPI has them */
    ddl_status_t st = ddl_gpu_wait(c, "the reduction kernel");
    if (st != DDL_OK)
        return st;
    MPI_Request req;
    if (MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, type, mop, c->lane_comm, &req) != MPI_SUCCESS)
        return ddl_error(DDL_ERR_MPI, "MPI_Iallreduce on device memory failed");
    double deadline = ddl_now() + c->set.timeout;
    for (int done = 0; !done;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (!done && ddl_now() > deadline)
            return ddl_error(DDL_ERR_TIMED_OUT, "lane MPI_Iallreduce on device memory timed out after %.1f s "
                             "(DDL_TIMEOUT)", c->set.timeout);
        if (!done)
            sched_yield();
    }
    return DDL_OK;
}

/* The device-resident transports: per chunk, the reduction kernel, the move
 * between nodes, the averaging and the copies out, in stream order. */
static ddl_status_t device_chunks(ddl_comm_t *c, struct ddl_gpu *g, const gpu_view_t *v, size_t off, size_t n,
                                  move_fn_t move)
{
    ddl_chunks_t plan = ddl_chunks_plan(n, v->esize, c->now.chunk, CHUNK_ALIGN);
    ddl_status_t st = DDL_OK;
    for (size_t k = 0; k < plan.count && st == DDL_OK; k++) {
        size_t co, cn;
        ddl_chunk_at(&plan, k, &co, &cn);
        void *buf = g->chunk[k % DDL_NSCHED];
        st = reduce_in(g, v, off + co, cn, buf, 1);
        if (st == DDL_OK)
            st = move(c, g, v, buf, cn);
        if (st == DDL_OK && v->divisor > 1)
            st = cuda_ok(ddl_gpu_reduce(buf, (const void *const *)&buf, 1, cn, v->dtype, v->op, v->divisor, g->stream),
                         "the averaging kernel");
        if (st == DDL_OK)
            st = write_out(g, v, off + co, cn, buf);
    }
    return st == DDL_OK ? ddl_gpu_wait(c, "the device lane allreduce") : st;
}

static ddl_status_t map_buffers(ddl_comm_t *c, struct ddl_gpu *g, const void *own_send, void *own_recv, gpu_view_t *v)
{
    const ddl_comm_info_t *in = &c->info;
    for (int k = 0; k < v->gpus; k++) {
        int owner = k * in->lanes;
        const ddl_node_req_t *rq = &c->node.ctrl->slots[owner].req;
        if (owner == in->local_rank) {
            v->in[k] = own_send;
            v->out[k] = own_recv;
            continue;
        }
        void *p;
        ddl_status_t st = ddl_ipc_cache_map(&g->ipc, owner, &rq->in_ref, &p);
        if (st != DDL_OK)
            return st;
        v->in[k] = p;
        if ((st = ddl_ipc_cache_map(&g->ipc, owner, &rq->out_ref, &p)) != DDL_OK)
            return st;
        v->out[k] = p;
    }
    return DDL_OK;
}

ddl_status_t ddl_allreduce_gpu(ddl_comm_t *c, const void *own_send, void *own_recv, size_t count, ddl_dtype_t dtype,
                               ddl_redop_t op)
{
    const ddl_comm_info_t *in = &c->info;
    gpu_view_t v = {.gpus = in->gpus_per_node, .me = in->gpu, .esize = ddl_dtype_size(dtype), .dtype = dtype,
                    .op = op, .divisor = op == DDL_REDOP_AVG ? in->gpus_per_node * in->nnodes : 1};
    int prev_dev = -1;
    (void)cudaGetDevice(&prev_dev); /* the caller's device is restored on return */
    struct ddl_gpu *g;
    const ddl_node_req_t *mine = &c->node.ctrl->slots[in->gpu * in->lanes].req;
    ddl_status_t st = ddl_gpu_state(c, mine->pci_bus_id, &g);
    if (st == DDL_OK)
        st = map_buffers(c, g, own_send, own_recv, &v);
    size_t off, len;
    ddl_slice(count, (size_t)in->local_size, (size_t)in->local_rank, &off, &len);
    if (st == DDL_OK && len > 0) {
        MPI_Datatype type;
        MPI_Op mop;
        if (in->nnodes == 1)
            st = single_node(c, g, &v, off, len);
        else if (c->set.gpu_transport == DDL_GPU_NCCL)
            st = device_chunks(c, g, &v, off, len, move_nccl);
        else if (c->set.gpu_transport == DDL_GPU_MPI && ddl_mpi_native(dtype, op, &type, &mop))
            st = device_chunks(c, g, &v, off, len, move_mpi);
        else
            st = staged(c, g, &v, off, len);
    }
    if (prev_dev >= 0)
        (void)cudaSetDevice(prev_dev);
    return st;
}
