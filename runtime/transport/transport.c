/* SPDX-License-Identifier: Apache-2.0 */
/* The table of transports, their states for a communicator, and the choice
 * of one for a call (transport.h). */
#include "config.h"

#include <stdlib.h>

#include "comm.h"
#include "gpu.h"
#include "log.h"
#include "transport.h"

ddl_status_t ddl_transports_init(ddl_comm_t *c, int max_steps)
{
    struct ddl_transports *t = calloc(1, sizeof(*t));
    if (!t)
        return ddl_error(DDL_ERR_NO_MEMORY, "out of memory for the transports");
    c->transports = t;
    t->row[t->n++] = &ddl_transport_host_p2p;
    const ddl_gpu_module_t *m = ddl_gpu_loaded();
    for (size_t i = 0; m && i < m->ntransports && t->n < DDL_TRANSPORT_ROWS_MAX; i++)
        t->row[t->n++] = m->transports[i];
    for (size_t i = 0; i < t->n; i++) {
        ddl_status_t st = t->row[i]->init ? t->row[i]->init(c, max_steps, &t->state[i]) : DDL_OK;
        if (st != DDL_OK)
            return st; /* ddl_transports_fini frees what was made */
    }
    return DDL_OK;
}

void ddl_transports_fini(ddl_comm_t *c)
{
    struct ddl_transports *t = c->transports;
    for (size_t i = 0; t && i < t->n; i++)
        if (t->row[i]->fini && t->state[i])
            t->row[i]->fini(c, t->state[i]);
    free(t);
    c->transports = NULL;
}

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
