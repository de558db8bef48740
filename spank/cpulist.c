/* SPDX-License-Identifier: Apache-2.0 */
/* Slurm-style index lists (cpulist.h).  Pure. */
#include "config.h"

#include <hwloc.h>
#include <stdio.h>
#include <string.h>

#include "cpulist.h"
#include "ddl_limits.h"

/* hwloc reads lists leniently (signs, spaces, "3-" as "3 to infinity", repeats
 * merged): each item must be N or N-M, digits only, short enough that hwloc
 * never sizes a bitmap far beyond DDL_MAX_CPU_ID. */
static int item_ok(const char *item)
{
    size_t len = strlen(item), dash = strcspn(item, "-");
    if (len == 0 || strspn(item, "0123456789-") != len)
        return 0;
    if (dash == len)
        return len <= 7;
    return dash > 0 && dash <= 7 && len - dash - 1 >= 1 && len - dash - 1 <= 7 && !strchr(item + dash + 1, '-');
}

int ddl_cpulist_parse(const char *s, int *ids, int max)
{
    if (!s || !*s)
        return -1;
    hwloc_bitmap_t all = hwloc_bitmap_alloc(), one = hwloc_bitmap_alloc();
    int n = -1;
    if (!all || !one)
        goto out;
    for (const char *p = s;;) {
        size_t len = strcspn(p, ",");
        char item[16];
        if (len >= sizeof(item))
            goto out;
        memcpy(item, p, len);
        item[len] = '\0';
        if (!item_ok(item))
            goto out;
        /* An item parses to a finite, non-empty set within the id limit that
         * no earlier item holds (a repeat is an error, not merged). */
        if (hwloc_bitmap_list_sscanf(one, item) != 0 || hwloc_bitmap_weight(one) <= 0 ||
            hwloc_bitmap_last(one) > DDL_MAX_CPU_ID || hwloc_bitmap_intersects(all, one))
            goto out;
        hwloc_bitmap_or(all, all, one);
        if (p[len] == '\0')
            break;
        p += len + 1;
        if (*p == '\0')
            goto out; /* trailing comma */
    }
    if (hwloc_bitmap_weight(all) > max)
        goto out;
    n = 0;
    for (int id = hwloc_bitmap_first(all); id >= 0; id = hwloc_bitmap_next(all, id))
        ids[n++] = id;
out:
    hwloc_bitmap_free(all);
    hwloc_bitmap_free(one);
    return n;
}

char *ddl_cpulist_format(const int *ids, int n, char *buf, size_t len)
{
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    buf[0] = '\0';
    if (!b)
        return buf;
    for (int i = 0; i < n; i++)
        hwloc_bitmap_set(b, (unsigned)ids[i]);
    if (n > 0)
        hwloc_bitmap_list_snprintf(buf, len, b);
    hwloc_bitmap_free(b);
    return buf;
}
