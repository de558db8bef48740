/* SPDX-License-Identifier: Apache-2.0 */
/* A rank's slice cut into pipeline chunks of whole elements.  Every chunk but
 * the last has `per` elements; `per` is a multiple of the alignment (in
 * elements) so that device copies of every chunk start on an aligned address
 * when the slice does.  Elements never straddle chunks, whatever the type size. */
#ifndef DDL_CHUNKS_H
#define DDL_CHUNKS_H

#include <stddef.h>

typedef struct {
    size_t n;     /* elements in the slice */
    size_t per;   /* elements per chunk (at least 1) */
    size_t count; /* chunks; 0 for an empty slice */
} ddl_chunks_t;

/* chunk_bytes: the wanted chunk size; align_bytes: 1, or a power of two that
 * chunks should be a multiple of (rounded up to whole elements). */
static inline ddl_chunks_t ddl_chunks_plan(size_t n, size_t esize, size_t chunk_bytes, size_t align_bytes)
{
    size_t unit = align_bytes > esize ? (align_bytes + esize - 1) / esize : 1; /* elements */
    size_t per = chunk_bytes / esize / unit * unit;
    if (per == 0)
        per = unit;
    ddl_chunks_t p = {n, per, (n + per - 1) / per};
    return p;
}

/* Chunk k (k < count): its first element within the slice and its length. */
static inline void ddl_chunk_at(const ddl_chunks_t *p, size_t k, size_t *off, size_t *len)
{
    *off = k * p->per;
    *len = p->n - *off < p->per ? p->n - *off : p->per;
}

#endif
