/* SPDX-License-Identifier: Apache-2.0 */
/* The table of transports and the choice of one for a call (transport.h). */
#include "config.h"

#include "comm.h"
#include "transport.h"

/* The transports, in the order they are tried: the first whose `usable`
 * says yes carries the call. */
static const ddl_transport_t *const transports[] = {
    &ddl_transport_host_p2p,
#ifdef DDL_HAVE_CUDA
    &ddl_transport_nccl, &ddl_transport_cuda_mpi, &ddl_transport_staged,
#endif
};

const ddl_transport_t *ddl_transport_for(const ddl_comm_t *c, int device, ddl_dtype_t dtype, ddl_redop_t op)
{
    for (size_t i = 0; i < sizeof(transports) / sizeof(transports[0]); i++)
        if (transports[i]->usable(c, device, dtype, op))
            return transports[i];
    return NULL; /* device buffers never get here without CUDA */
}
