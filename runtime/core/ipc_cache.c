/* SPDX-License-Identifier: Apache-2.0 */
/* The cache of CUDA IPC mappings of the node's owners' buffers (ipc_cache.h).
 * Uses the log; the CUDA calls come in through function pointers. */
#include "config.h"

#include <string.h>

#include "ipc_cache.h"
#include "log.h"

void ddl_ipc_cache_init(ddl_ipc_cache_t *c, const ddl_ipc_ops_t *ops)
{
    memset(c, 0, sizeof(*c));
    c->ops = *ops;
}

static void drop(ddl_ipc_cache_t *c, int i)
{
    c->ops.close(c->ops.ctx, c->e[i].mapped);
    c->closes++;
    c->e[i] = c->e[--c->n];
}

static int overlaps(const ddl_ipc_entry_t *e, int owner, const ddl_gpu_ref_t *ref)
{
    return e->owner == owner && e->base < ref->base + ref->size && ref->base < e->base + e->size;
}

ddl_status_t ddl_ipc_cache_map(ddl_ipc_cache_t *c, int owner, const ddl_gpu_ref_t *ref, void **buf)
{
    if (ref->offset >= ref->size)
        return ddl_error(DDL_ERR_INVALID_ARG, "device buffer of local rank %d: offset %llu outside its allocation "
                         "of %llu bytes", owner, (unsigned long long)ref->offset, (unsigned long long)ref->size);
    c->clock++;
    for (int i = 0; i < c->n; i++) {
        ddl_ipc_entry_t *e = &c->e[i];
        if (e->owner == owner && e->buffer_id == ref->buffer_id) {
            e->last_use = c->clock;
            *buf = (char *)e->mapped + ref->offset;
            return DDL_OK;
        }
    }
    /* A new allocation where a mapped one was: that one is gone. */
    for (int i = c->n - 1; i >= 0; i--)
        if (overlaps(&c->e[i], owner, ref))
            drop(c, i);
    if (c->n == DDL_IPC_CACHE_MAX) {
        int lru = 0;
        for (int i = 1; i < c->n; i++)
            if (c->e[i].last_use < c->e[lru].last_use)
                lru = i;
        drop(c, lru);
    }
    void *mapped = NULL;
    if (c->ops.open(c->ops.ctx, ref, &mapped) != DDL_OK)
        return ddl_error(DDL_ERR_INVALID_ARG, "cannot open the device buffer of local rank %d by CUDA IPC: %s",
                         owner, ddl_last_error());
    c->opens++;
    c->e[c->n++] = (ddl_ipc_entry_t){.owner = owner, .buffer_id = ref->buffer_id, .base = ref->base,
                                     .size = ref->size, .mapped = mapped, .last_use = c->clock};
    *buf = (char *)mapped + ref->offset;
    return DDL_OK;
}

void ddl_ipc_cache_clear(ddl_ipc_cache_t *c)
{
    while (c->n)
        drop(c, c->n - 1);
}
