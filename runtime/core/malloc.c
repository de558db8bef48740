/* SPDX-License-Identifier: Apache-2.0 */
/* ddl_malloc / ddl_free: owners allocate from their shared heap, which the
 * node's other ranks have mapped; helpers' buffers are never read by others and
 * are ordinary memory. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "comm.h"
#include "log.h"

static ddl_status_t private_alloc(ddl_comm_t *c, size_t size, void **ptr)
{
    if (c->npriv == c->cap_priv) {
        size_t nc = c->cap_priv ? 2 * c->cap_priv : 8;
        ddl_private_alloc_t *p = realloc(c->priv, nc * sizeof(*p));
        if (!p)
            return ddl_error(DDL_ERR_NO_MEMORY, "ddl_malloc: out of memory");
        c->priv = p;
        c->cap_priv = nc;
    }
    void *p = NULL;
    if (posix_memalign(&p, DDL_HEAP_ALIGN, size ? size : 1) != 0)
        return ddl_error(DDL_ERR_NO_MEMORY, "ddl_malloc: cannot allocate %zu bytes", size);
    c->priv[c->npriv].ptr = p;
    c->priv[c->npriv].len = size;
    c->npriv++;
    *ptr = p;
    return DDL_OK;
}

ddl_status_t ddl_malloc(ddl_comm_t *c, size_t size, void **ptr)
{
    if (!ddl_comm_is_live(c) || !ptr)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_malloc: not a live communicator, or ptr is NULL");
    *ptr = NULL;
    if (c->info.role != DDL_ROLE_OWNER)
        return private_alloc(c, size, ptr);
    size_t off, len;
    if (ddl_heap_alloc(&c->heap, size, &off, &len) != DDL_OK)
        return ddl_error(DDL_ERR_NO_MEMORY, "ddl_malloc: %zu bytes do not fit in the shared heap of %zu bytes; "
                         "raise DDL_HEAP_SIZE", size, c->heap.size);
    ddl_shm_t *seg = &c->segs[c->info.gpu];
    ddl_status_t st = ddl_shm_reserve(seg, off, len);
    if (st != DDL_OK) {
        ddl_heap_free(&c->heap, off, &len);
        return st;
    }
    *ptr = (char *)seg->base + off;
    return DDL_OK;
}

ddl_status_t ddl_free(ddl_comm_t *c, void *ptr)
{
    if (!ptr)
        return DDL_OK;
    if (!ddl_comm_is_live(c))
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_free: not a live communicator (buffers go with it)");
    for (size_t i = 0; i < c->npriv; i++) {
        if (c->priv[i].ptr == ptr) {
            free(ptr);
            c->priv[i] = c->priv[--c->npriv];
            return DDL_OK;
        }
    }
    ddl_shm_t *seg = &c->segs[c->info.gpu];
    size_t len;
    if (c->info.role != DDL_ROLE_OWNER || (char *)ptr < (char *)seg->base ||
        ddl_heap_free(&c->heap, (size_t)((char *)ptr - (char *)seg->base), &len) != DDL_OK)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_free: %p was not returned by ddl_malloc on this communicator", ptr);
    ddl_shm_release(seg, (size_t)((char *)ptr - (char *)seg->base), len);
    return DDL_OK;
}

int ddl_comm_heap_offset(const ddl_comm_t *c, const void *buf, size_t *off)
{
    const ddl_shm_t *seg = &c->segs[c->info.gpu];
    uintptr_t base = (uintptr_t)seg->base, p = (uintptr_t)buf; /* integers: no pointer past its object */
    if (p < base + c->set.stage_size || p - base >= seg->size)
        return 0;
    *off = (size_t)(p - base);
    return 1;
}
