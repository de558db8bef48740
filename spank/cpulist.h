/* SPDX-License-Identifier: Apache-2.0 */
/* Slurm-style index lists ("0-3,8,10-11"): strict parsing into a sorted set. */
#ifndef DDL_CPULIST_H
#define DDL_CPULIST_H

#include <stddef.h>

/* Parse s into ids (at most max, ascending, no duplicates).  Returns the count,
 * or -1 on a malformed list, a duplicate, or more than max ids. */
int ddl_cpulist_parse(const char *s, int *ids, int max);
/* Write ids back as a list ("0-3,8"); returns buf. */
char *ddl_cpulist_format(const int *ids, int n, char *buf, size_t len);

#endif
