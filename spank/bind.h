/* SPDX-License-Identifier: Apache-2.0 */
/* Binding the calling process to its planned cores, through hwloc, within the
 * CPUs its cgroup allows (task/cgroup's cpuset). */
#ifndef DDL_SPANK_BIND_H
#define DDL_SPANK_BIND_H

#include <stddef.h>

/* cores: Slurm core ids (hwloc logical core indices of the whole node).
 * Returns 0 when bound to all of them, 1 when bound to those that exist here
 * and are allowed (what was left out is in msg), -1 when not bound (msg says
 * why); msg also names the CPUs bound to. */
int ddl_bind_cores(const int *cores, int n, char *msg, size_t len);

#endif
