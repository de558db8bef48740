/* SPDX-License-Identifier: Apache-2.0 */
/* The table of transports and the choice of one for a call (transport.h). */
#include "config.h"

#include "comm.h"
#include "gpu.h"
#include "transport.h"

/* The host row, then the CUDA module's device rows in its order: the first
 * whose `usable` says yes carries the call. */
const ddl_transport_t *ddl_transport_for(const ddl_comm_t *c, int device, ddl_dtype_t dtype, ddl_redop_t op)
{
    if (ddl_transport_host_p2p.usable(c, device, dtype, op))
        return &ddl_transport_host_p2p;
    const ddl_gpu_module_t *m = ddl_gpu_loaded();
    for (size_t i = 0; m && i < m->ntransports; i++)
        if (m->transports[i]->usable(c, device, dtype, op))
            return m->transports[i];
    return NULL; /* device buffers never get here without the module */
}
