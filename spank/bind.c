/* SPDX-License-Identifier: Apache-2.0 */
/* Binding a task to its planned cores (bind.h), through hwloc. */
#include "config.h"

#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <string.h>

#include "bind.h"

int ddl_bind_cores(const int *cores, int n, char *msg, size_t len)
{
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0) {
        snprintf(msg, len, "hwloc_topology_init failed");
        return -1;
    }
    /* Core ids count the node's cores, allowed to this task or not. */
    hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    if (hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        snprintf(msg, len, "hwloc could not load this machine's topology");
        return -1;
    }
    hwloc_bitmap_t want = hwloc_bitmap_alloc(), set = hwloc_bitmap_alloc();
    int missing = 0, rc = -1;
    for (int i = 0; i < n; i++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, (unsigned)cores[i]);
        if (core)
            hwloc_bitmap_or(want, want, core->cpuset);
        else
            missing++;
    }
    hwloc_bitmap_and(set, want, hwloc_topology_get_allowed_cpuset(t));
    char want_s[256], set_s[256], allowed_s[256];
    hwloc_bitmap_list_snprintf(want_s, sizeof(want_s), want);
    hwloc_bitmap_list_snprintf(set_s, sizeof(set_s), set);
    hwloc_bitmap_list_snprintf(allowed_s, sizeof(allowed_s), hwloc_topology_get_allowed_cpuset(t));
    if (hwloc_bitmap_iszero(set)) {
        snprintf(msg, len, "none of its cores (CPUs %s) exists here and is in its cpuset (CPUs %s)",
                 hwloc_bitmap_iszero(want) ? "-" : want_s, allowed_s);
    } else if (hwloc_set_cpubind(t, set, HWLOC_CPUBIND_PROCESS) != 0) {
        snprintf(msg, len, "binding to CPUs %s failed: %s", set_s, strerror(errno));
    } else if (missing || !hwloc_bitmap_isequal(set, want)) {
        snprintf(msg, len, "bound to CPUs %s only: %d of its %d cores do not exist here, CPUs %s are outside its "
                 "cpuset (CPUs %s)", set_s, missing, n, want_s, allowed_s);
        rc = 1;
    } else {
        snprintf(msg, len, "bound to CPUs %s", set_s);
        rc = 0;
    }
    hwloc_bitmap_free(want);
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(t);
    return rc;
}
