/* SPDX-License-Identifier: Apache-2.0 */
/* The owners' rendezvous port for a step (port.h).  Pure. */
#include "config.h"

#include <string.h>

#include "parse.h"
#include "port.h"

int ddl_master_port(uint32_t jobid, uint32_t stepid, const char *resv_ports)
{
    if (resv_ports && *resv_ports) {
        char first[16];
        size_t n = strcspn(resv_ports, "-,");
        long port;
        if (n < sizeof(first)) {
            memcpy(first, resv_ports, n);
            first[n] = '\0';
            if (ddl_parse_long(first, 1024, 65535, &port) == 0)
                return (int)port;
        }
    }
    return DDL_PORT_BASE + (int)(jobid % DDL_PORT_JOBS) * DDL_PORT_STEPS + (int)(stepid % DDL_PORT_STEPS);
}
