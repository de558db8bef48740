/* SPDX-License-Identifier: Apache-2.0 */
/* First-fit allocator over an owner's shared-memory heap: offsets only, so the
 * same numbers name the same bytes in every rank's mapping. */
#ifndef DDL_HEAP_H
#define DDL_HEAP_H

#include <stddef.h>
#include "ddl.h"

#define DDL_HEAP_ALIGN 4096

typedef struct {
    size_t off, len;
} ddl_range_t;

typedef struct {
    size_t base, size;     /* the heap is [base, base + size) of the segment */
    ddl_range_t *free_list; /* sorted by offset, coalesced */
    size_t nfree, cap_free;
    ddl_range_t *used;
    size_t nused, cap_used;
} ddl_heap_t;

void ddl_heap_init(ddl_heap_t *h, size_t base, size_t size);
void ddl_heap_fini(ddl_heap_t *h);
/* len is rounded up to DDL_HEAP_ALIGN.  DDL_ERR_NO_MEMORY when nothing fits. */
ddl_status_t ddl_heap_alloc(ddl_heap_t *h, size_t len, size_t *off, size_t *rounded);
/* DDL_ERR_INVALID_ARG when off is not an allocation of this heap. */
ddl_status_t ddl_heap_free(ddl_heap_t *h, size_t off, size_t *len);
/* The length of the allocation that starts at off; 0 when none does. */
size_t ddl_heap_length(const ddl_heap_t *h, size_t off);
/* Bytes from off to the end of the allocation that holds it; 0 when none does. */
size_t ddl_heap_room(const ddl_heap_t *h, size_t off);

#endif
