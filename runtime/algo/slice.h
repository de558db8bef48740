/* SPDX-License-Identifier: Apache-2.0 */
/* Balanced partition of n elements into `parts` slices: slice i has n / parts
 * elements, the first n % parts slices one more.  Every element is in exactly one
 * slice, slices are in order, and slices may be empty when n < parts. */
#ifndef DDL_SLICE_H
#define DDL_SLICE_H

#include <stddef.h>

static inline void ddl_slice(size_t n, size_t parts, size_t idx, size_t *off, size_t *len)
{
    size_t base = n / parts, rem = n % parts;
    *off = idx * base + (idx < rem ? idx : rem);
    *len = base + (idx < rem ? 1 : 0);
}

#endif
