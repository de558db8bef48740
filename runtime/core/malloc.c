/* SPDX-License-Identifier: Apache-2.0 */
/* ddl_malloc / ddl_free: owners allocate from their shared heap, which the
 * node's other ranks have mapped; helpers' buffers are never read by others and
 * are ordinary memory.  Any application thread may call them while requests
 * run on the progress thread: the bookkeeping is under the communicator's
 * heap_lock. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "comm.h"
#include "log.h"

/* The bookkeeping is under heap_lock; the system calls that give memory to
 * an allocation or take it back are not, so that a request's look-up on the
 * progress thread never waits for them.  A range is reserved after it leaves
 * the free list and released before it returns there: no other allocation
 * holds it meanwhile. */
static ddl_status_t private_alloc(ddl_comm_t *c, size_t size, void **ptr)
{
    void *p = NULL;
    if (posix_memalign(&p, DDL_HEAP_ALIGN, size ? size : 1) != 0)
        return ddl_error(DDL_ERR_NO_MEMORY, "ddl_malloc: cannot allocate %zu bytes", size);
    pthread_mutex_lock(&c->heap_lock);
    if (c->npriv == c->cap_priv) {
        size_t nc = c->cap_priv ? 2 * c->cap_priv : 8;
        ddl_private_alloc_t *grown = realloc(c->priv, nc * sizeof(*grown));
        if (!grown) {
            pthread_mutex_unlock(&c->heap_lock);
            free(p);
            return ddl_error(DDL_ERR_NO_MEMORY, "ddl_malloc: out of memory");
        }
        c->priv = grown;
        c->cap_priv = nc;
    }
    c->priv[c->npriv++] = (ddl_private_alloc_t){p, size};
    pthread_mutex_unlock(&c->heap_lock);
    *ptr = p;
    return DDL_OK;
}

static ddl_status_t heap_alloc(ddl_comm_t *c, size_t size, void **ptr)
{
    size_t off, len;
    pthread_mutex_lock(&c->heap_lock);
    ddl_status_t st = ddl_heap_alloc(&c->heap, size, &off, &len);
    atomic_fetch_add_explicit(&c->heap_changes, 1, memory_order_release);
    pthread_mutex_unlock(&c->heap_lock);
    if (st != DDL_OK)
        return ddl_error(DDL_ERR_NO_MEMORY, "ddl_malloc: %zu bytes do not fit in the shared heap of %zu bytes; "
                         "raise DDL_HEAP_SIZE", size, c->heap.size);
    ddl_shm_t *seg = &c->segs[c->info.gpu];
    if ((st = ddl_shm_reserve(seg, off, len)) != DDL_OK) {
        pthread_mutex_lock(&c->heap_lock);
        ddl_heap_free(&c->heap, off, &len);
        atomic_fetch_add_explicit(&c->heap_changes, 1, memory_order_release);
        pthread_mutex_unlock(&c->heap_lock);
        return st;
    }
    *ptr = (char *)seg->base + off;
    return DDL_OK;
}

ddl_status_t ddl_malloc(ddl_comm_t *c, size_t size, void **ptr)
{
    if (!ddl_comm_is_live(c) || !ptr)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_malloc: not a live communicator, or ptr is NULL");
    *ptr = NULL;
    return c->info.role == DDL_ROLE_OWNER ? heap_alloc(c, size, ptr) : private_alloc(c, size, ptr);
}

/* A helper's buffer: 1 when ptr was one (now freed). */
static int free_private(ddl_comm_t *c, void *ptr)
{
    int found = 0;
    pthread_mutex_lock(&c->heap_lock);
    for (size_t i = 0; i < c->npriv && !found; i++) {
        if (c->priv[i].ptr == ptr) {
            c->priv[i] = c->priv[--c->npriv];
            found = 1;
        }
    }
    pthread_mutex_unlock(&c->heap_lock);
    if (found)
        free(ptr);
    return found;
}

ddl_status_t ddl_free(ddl_comm_t *c, void *ptr)
{
    if (!ptr)
        return DDL_OK;
    if (!ddl_comm_is_live(c))
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_free: not a live communicator (buffers go with it)");
    if (free_private(c, ptr))
        return DDL_OK;
    ddl_shm_t *seg = &c->segs[c->info.gpu];
    size_t off = (size_t)((char *)ptr - (char *)seg->base), len = 0;
    if (c->info.role == DDL_ROLE_OWNER && (char *)ptr >= (char *)seg->base) {
        pthread_mutex_lock(&c->heap_lock);
        len = ddl_heap_length(&c->heap, off);
        pthread_mutex_unlock(&c->heap_lock);
    }
    if (len == 0)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_free: %p was not returned by ddl_malloc on this communicator", ptr);
    ddl_shm_release(seg, off, len);
    pthread_mutex_lock(&c->heap_lock);
    ddl_status_t st = ddl_heap_free(&c->heap, off, &len);
    atomic_fetch_add_explicit(&c->heap_changes, 1, memory_order_release);
    pthread_mutex_unlock(&c->heap_lock);
    return st == DDL_OK ? DDL_OK : ddl_error(DDL_ERR_INVALID_ARG, "ddl_free: %p was freed twice at once", ptr);
}

/* The memo is the runner's alone (one runner at a time, handed over through
 * the engine's atomics), so it needs no lock; an allocation that comes or
 * goes after the count is read is one that the locked look-up would have
 * missed as well. */
size_t ddl_comm_heap_room(ddl_comm_t *c, size_t off)
{
    uint64_t now = atomic_load_explicit(&c->heap_changes, memory_order_acquire);
    for (int i = 0; i < 2; i++)
        if (c->heap_memo[i].room && c->heap_memo[i].changes == now && c->heap_memo[i].off == off)
            return c->heap_memo[i].room;
    pthread_mutex_lock(&c->heap_lock);
    now = atomic_load_explicit(&c->heap_changes, memory_order_relaxed);
    size_t room = ddl_heap_room(&c->heap, off);
    pthread_mutex_unlock(&c->heap_lock);
    /* The older entry goes: a call's two buffers keep both. */
    int slot = c->heap_memo[0].changes == now && c->heap_memo[0].room ? 1 : 0;
    c->heap_memo[slot].changes = now;
    c->heap_memo[slot].off = off;
    c->heap_memo[slot].room = room;
    return room;
}
