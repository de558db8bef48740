/* SPDX-License-Identifier: Apache-2.0 */
/* The first-fit allocator over an owner's shared heap (heap.h).  Uses nothing. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "heap.h"

static int push(ddl_range_t **arr, size_t *n, size_t *cap, size_t at, ddl_range_t r)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        ddl_range_t *p = realloc(*arr, nc * sizeof(*p));
        if (!p)
            return -1;
        *arr = p;
        *cap = nc;
    }
    memmove(*arr + at + 1, *arr + at, (*n - at) * sizeof(**arr));
    (*arr)[at] = r;
    (*n)++;
    return 0;
}

static void erase(ddl_range_t *arr, size_t *n, size_t at)
{
    memmove(arr + at, arr + at + 1, (*n - at - 1) * sizeof(*arr));
    (*n)--;
}

void ddl_heap_init(ddl_heap_t *h, size_t base, size_t size)
{
    memset(h, 0, sizeof(*h));
    h->base = base;
    h->size = size;
    ddl_range_t all = {base, size};
    push(&h->free_list, &h->nfree, &h->cap_free, 0, all);
}

void ddl_heap_fini(ddl_heap_t *h)
{
    free(h->free_list);
    free(h->used);
    memset(h, 0, sizeof(*h));
}

ddl_status_t ddl_heap_alloc(ddl_heap_t *h, size_t len, size_t *off, size_t *rounded)
{
    if (len == 0)
        len = 1;
    if (len > h->size)
        return DDL_ERR_NO_MEMORY;
    len = (len + DDL_HEAP_ALIGN - 1) & ~(size_t)(DDL_HEAP_ALIGN - 1);
    for (size_t i = 0; i < h->nfree; i++) {
        ddl_range_t *f = &h->free_list[i];
        if (f->len < len)
            continue;
        ddl_range_t a = {f->off, len};
        /* Keep the used list sorted too, for lookups on free. */
        size_t at = 0;
        while (at < h->nused && h->used[at].off < a.off)
            at++;
        if (push(&h->used, &h->nused, &h->cap_used, at, a) != 0)
            return DDL_ERR_NO_MEMORY;
        f->off += len;
        f->len -= len;
        if (f->len == 0)
            erase(h->free_list, &h->nfree, i);
        *off = a.off;
        *rounded = len;
        return DDL_OK;
    }
    return DDL_ERR_NO_MEMORY;
}

ddl_status_t ddl_heap_free(ddl_heap_t *h, size_t off, size_t *len)
{
    size_t u = 0;
    while (u < h->nused && h->used[u].off != off)
        u++;
    if (u == h->nused)
        return DDL_ERR_INVALID_ARG;
    ddl_range_t r = h->used[u];
    erase(h->used, &h->nused, u);
    *len = r.len;
    size_t at = 0;
    while (at < h->nfree && h->free_list[at].off < r.off)
        at++;
    /* Coalesce with the neighbours. */
    if (at > 0 && h->free_list[at - 1].off + h->free_list[at - 1].len == r.off) {
        h->free_list[at - 1].len += r.len;
        if (at < h->nfree && r.off + r.len == h->free_list[at].off) {
            h->free_list[at - 1].len += h->free_list[at].len;
            erase(h->free_list, &h->nfree, at);
        }
        return DDL_OK;
    }
    if (at < h->nfree && r.off + r.len == h->free_list[at].off) {
        h->free_list[at].off = r.off;
        h->free_list[at].len += r.len;
        return DDL_OK;
    }
    if (push(&h->free_list, &h->nfree, &h->cap_free, at, r) != 0)
        return DDL_ERR_NO_MEMORY; /* the range is lost to the heap, not to the process */
    return DDL_OK;
}

/* The index in h->used of the last allocation starting at or below off, + 1; 0: none. */
static size_t last_at_or_below(const ddl_heap_t *h, size_t off)
{
    size_t lo = 0, hi = h->nused; /* the last allocation starting at or below off */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->used[mid].off <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t ddl_heap_length(const ddl_heap_t *h, size_t off)
{
    size_t i = last_at_or_below(h, off);
    return i > 0 && h->used[i - 1].off == off ? h->used[i - 1].len : 0;
}

size_t ddl_heap_room(const ddl_heap_t *h, size_t off)
{
    size_t i = last_at_or_below(h, off);
    if (i == 0)
        return 0;
    const ddl_range_t *r = &h->used[i - 1];
    return off - r->off < r->len ? r->len - (off - r->off) : 0;
}
