/* SPDX-License-Identifier: Apache-2.0 */
/* The smallest messages on one node, through the control block: each owner
 * puts its data beside its call's signature in its slot, the owners meet once,
 * check the signatures, and every owner reduces all the slots itself, in GPU
 * order, so the results are bit-identical.  One meeting in all, where the
 * system MPI_Allreduce plus a separate signature check would take two. */
#include "config.h"

#include <string.h>

#include "algo.h"
#include "comm.h"
#include "exchange.h"
#include "log.h"
#include "paths.h"
#include "reduce.h"
#include "signature.h"

int ddl_inline_fits(const ddl_comm_t *c, const ddl_call_t *call, size_t bytes)
{
    size_t most = c->info.nnodes == 1                      ? DDL_INLINE_BYTES
                  : ddl_mpi_form_data[call->mpi_form] == 1 ? DDL_SIG_EXCHANGE_BYTES /* the form's data in the exchange */
                                                           : DDL_SIG_DATA_BYTES;
    return c->set.algo == DDL_ALGO_AUTO && call->mem == DDL_MEM_HOST && bytes <= most;
}

int ddl_halves_owners(const ddl_comm_t *c)
{
    size_t owners = ddl_comm_gpus(c);
    return c->info.nnodes > 1 && (owners & (owners - 1)) == 0;
}

int ddl_halves_fit(const ddl_comm_t *c, const ddl_call_t *call, size_t bytes)
{
    return ddl_mpi_form_data[call->mpi_form] == DDL_SIG_HALVES && call->mem == DDL_MEM_HOST && ddl_halves_owners(c) &&
           bytes > 0 && bytes <= DDL_SIG_HALVES_BYTES;
}

void ddl_inline_post(ddl_comm_t *c, const void *sendbuf, size_t bytes)
{
    memcpy(ddl_node_mailbox(&c->node, c->info.local_rank, c->seq)->data, sendbuf, bytes);
}

void ddl_inline_reduce(ddl_comm_t *c, void *recvbuf, size_t count, ddl_dtype_t dtype, ddl_redop_t op)
{
    const ddl_comm_info_t *in = &c->info;
    const unsigned char *data[DDL_MAX_GPUS]; /* each owner's data of this call, in its mailbox */
    for (int g = 0; g < in->gpus_per_node; g++)
        data[g] = ddl_node_mailbox(&c->node, g * in->lanes, c->seq)->data;
    size_t bytes = count * ddl_dtype_size(dtype);
    /* The peers' lines are in their writers' caches: ask for all of them at
     * once, rather than one after the other as the reduce reaches them. */
    for (int g = 0; g < in->gpus_per_node; g++)
        for (size_t off = 0; off < bytes; off += 64)
            __builtin_prefetch(data[g] + off);
    /* Into a copy first: recvbuf may be this owner's own input (in place). */
    _Alignas(64) unsigned char acc[DDL_INLINE_BYTES];
    if (in->gpus_per_node == 1) {
        memcpy(acc, data[0], bytes);
    } else {
        ddl_reduce_fn_t fn = ddl_reduce_fn(dtype, op);
        fn(acc, data[0], data[1], count);
        for (int g = 2; g < in->gpus_per_node; g++)
            fn(acc, acc, data[g], count);
    }
    if (op == DDL_REDOP_AVG)
        ddl_avg_finish(acc, count, dtype, in->gpus_per_node);
    memcpy(recvbuf, acc, bytes);
}
