/* SPDX-License-Identifier: Apache-2.0 */
/* The lane allreduce on device buffers (comm.h: ddl_allreduce_gpu), built with
 * CUDA.  Each rank reduces its slice
 * of the node's G owner buffers with a kernel on its GPU that reads the other
 * owners' buffers through CUDA IPC, moves it between nodes in chunks over the
 * agreed transport, and copies the result into every owner buffer. */
#include "config.h"

#include <string.h>

#include "chunks.h"
#include "comm.h"
#include "gpu_cuda.h"
#include "gpu_kernels.h"
#include "log.h"
#include "paths.h"
#include "pipeline.h"
#include "slice.h"
#include "transport.h"

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

struct gpu_pipe {
    ddl_comm_t *c;
    struct ddl_gpu *g;
    const gpu_view_t *v;
};

static ddl_status_t gpu_fill(void *ctx, int slot, size_t off, size_t n, void **buf)
{
    const struct gpu_pipe *p = ctx;
    *buf = p->g->chunk[slot];
    return reduce_in(p->g, p->v, off, n, *buf, 1);
}

/* The averaging (on the device, whatever the transport) and the copies out, queued on the stream. */
static ddl_status_t gpu_drain(void *ctx, int slot, size_t off, size_t n, void *buf)
{
    (void)slot;
    const struct gpu_pipe *p = ctx;
    const gpu_view_t *v = p->v;
    ddl_status_t st = DDL_OK;
    if (v->divisor > 1)
        st = cuda_ok(ddl_gpu_reduce(buf, (const void *const *)&buf, 1, n, v->dtype, v->op, v->divisor, p->g->stream),
                     "the averaging kernel");
    return st == DDL_OK ? write_out(p->g, v, off, n, buf) : st;
}

/* Between nodes: the slice in chunks through the pipeline and the agreed
 * device transport (transport.h), then the stream drained. */
static ddl_status_t multi_node(ddl_comm_t *c, ddl_call_t *call, struct ddl_gpu *g, const gpu_view_t *v, size_t off,
                               size_t n)
{
    ddl_chunks_t plan = ddl_chunks_plan(n, v->esize, call->plan.chunk, CHUNK_ALIGN);
    struct gpu_pipe p = {c, g, v};
    ddl_pipeline_ops_t ops = {gpu_fill, gpu_drain, &p};
    ddl_status_t st = ddl_pipeline_run(c, call, ddl_transport_for(c, 1, v->dtype, v->op), &plan, off, &ops);
    return st == DDL_OK ? ddl_gpu_wait(c, "the device lane allreduce") : st;
}

static ddl_status_t map_buffers(ddl_comm_t *c, struct ddl_gpu *g, const void *own_send, void *own_recv, gpu_view_t *v)
{
    const ddl_comm_info_t *in = &c->info;
    for (int k = 0; k < v->gpus; k++) {
        int owner = k * in->lanes;
        const ddl_node_req_t *rq = ddl_node_request(&c->node, owner);
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

ddl_status_t ddl_allreduce_gpu(ddl_comm_t *c, ddl_call_t *call, const void *own_send, void *own_recv)
{
    const ddl_comm_info_t *in = &c->info;
    size_t count = (size_t)call->count;
    ddl_dtype_t dtype = call->dtype;
    ddl_redop_t op = call->op;
    gpu_view_t v = {.gpus = in->gpus_per_node, .me = in->gpu, .esize = ddl_dtype_size(dtype), .dtype = dtype,
                    .op = op, .divisor = op == DDL_REDOP_AVG ? in->gpus_per_node * in->nnodes : 1};
    int prev_dev = -1;
    (void)cudaGetDevice(&prev_dev); /* the caller's device is restored on return */
    struct ddl_gpu *g;
    const ddl_node_req_t *mine = ddl_node_request(&c->node, in->gpu * in->lanes);
    ddl_status_t st = ddl_gpu_state(c, mine->pci_bus_id, &g);
    if (st == DDL_OK)
        st = map_buffers(c, g, own_send, own_recv, &v);
    size_t off, len;
    ddl_slice(count, (size_t)in->local_size, (size_t)in->local_rank, &off, &len);
    if (st == DDL_OK && len > 0)
        st = in->nnodes == 1 ? single_node(c, g, &v, off, len) : multi_node(c, call, g, &v, off, len);
    if (prev_dev >= 0)
        (void)cudaSetDevice(prev_dev);
    return st;
}
