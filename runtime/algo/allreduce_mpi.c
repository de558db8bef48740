/* SPDX-License-Identifier: Apache-2.0 */
/* The system MPI_Allreduce over the owners: the fast path for small messages
 * (the types and ops MPI is given: core/mpi_types.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "gpu.h"
#include "log.h"
#include "mpi_types.h"
#include "paths.h"
#include "reduce.h"

/* MPI_Allreduce over the owners on host buffers. */
static ddl_status_t mpi_host(const void *sendbuf, void *recvbuf, size_t count, ddl_dtype_t dtype, ddl_redop_t op,
                             ddl_comm_t *c)
{
    MPI_Datatype type = ddl_mpi_type(dtype);
    MPI_Op mop = ddl_mpi_op(dtype, op);
    size_t esize = ddl_dtype_size(dtype);
    /* MPI counts are int: go through in pieces of at most 2^30 elements. */
    for (size_t done = 0; done < count;) {
        size_t n = count - done < (1u << 30) ? count - done : (1u << 30);
        const void *s = sendbuf == recvbuf ? MPI_IN_PLACE : (const char *)sendbuf + done * esize;
        int rc = MPI_Allreduce(s, (char *)recvbuf + done * esize, (int)n, type, mop, c->owners);
        if (rc != MPI_SUCCESS)
            return ddl_comm_fail(c, ddl_error(DDL_ERR_MPI, "MPI_Allreduce of %zu elements failed", n));
        done += n;
    }
    if (op == DDL_REDOP_AVG)
        ddl_avg_finish(recvbuf, count, dtype, c->info.owner_size);
    return DDL_OK;
}

/* Device buffers go through a host copy: the system MPI may not be CUDA-aware,
 * and its user ops (f16, bf16) run on the host. */
ddl_status_t ddl_allreduce_system_mpi(const ddl_call_t *call, ddl_comm_t *c)
{
    const void *sendbuf = call->sendbuf;
    void *recvbuf = call->recvbuf;
    size_t count = (size_t)call->count;
    ddl_dtype_t dtype = call->dtype;
    ddl_redop_t op = call->op;
    if (call->mem != DDL_MEM_DEVICE)
        return mpi_host(sendbuf, recvbuf, count, dtype, op, c);
    size_t bytes = count * ddl_dtype_size(dtype);
    if (c->bounce_bytes < bytes) {
        void *p = realloc(c->bounce, bytes);
        if (!p)
            return ddl_error(DDL_ERR_NO_MEMORY, "out of memory for a %zu-byte host copy of a device buffer", bytes);
        c->bounce = p;
        c->bounce_bytes = bytes;
    }
    ddl_status_t st = ddl_gpu_memcpy(c->bounce, sendbuf, bytes, c->set.timeout);
    if (st == DDL_OK)
        st = mpi_host(c->bounce, c->bounce, count, dtype, op, c);
    if (st == DDL_OK)
        st = ddl_gpu_memcpy(recvbuf, c->bounce, bytes, c->set.timeout);
    return st;
}

