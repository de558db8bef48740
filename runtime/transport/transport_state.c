/* SPDX-License-Identifier: Apache-2.0 */
/* A transport's state for a communicator (transport.h): apart from the
 * table (transport.c), so that a row can find its state without using the
 * file that lists it. */
#include "config.h"

#include "comm.h"
#include "transport.h"

void *ddl_transport_state(const ddl_comm_t *c, const ddl_transport_t *row)
{
    const struct ddl_transports *t = c->transports;
    for (size_t i = 0; t && i < t->n; i++)
        if (t->row[i] == row)
            return t->state[i];
    return NULL;
}
