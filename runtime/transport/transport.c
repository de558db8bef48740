/* SPDX-License-Identifier: Apache-2.0 */
/* The transport table's one choice (transport.h). */
#include "config.h"

#include "comm.h"
#include "gpu.h"
#include "transport.h"

const ddl_transport_t *ddl_transport_for(const ddl_comm_t *c, int device, ddl_dtype_t dtype, ddl_redop_t op)
{
    (void)c, (void)dtype, (void)op;
    if (!device)
        return &ddl_transport_host_mpi;
#ifdef DDL_HAVE_CUDA
    MPI_Datatype type;
    MPI_Op mop;
    if (c->set.gpu_transport == DDL_GPU_NCCL)
        return &ddl_transport_nccl;
    if (c->set.gpu_transport == DDL_GPU_MPI && ddl_mpi_native(dtype, op, &type, &mop))
        return &ddl_transport_cuda_mpi;
    return &ddl_transport_staged;
#else
    return NULL; /* device buffers never get here without CUDA */
#endif
}
