/* SPDX-License-Identifier: Apache-2.0 */
/* The device buffers of a node's owners, as its other ranks see them.  An owner
 * describes each buffer by the CUDA IPC handle of the allocation that holds it
 * plus the offset into it; a peer opens each allocation once and keeps it open
 * for later calls.  When an owner's new buffer lies where an open allocation
 * was, that allocation has been freed (the address was reused): the peer closes
 * its mapping before opening the new one.  The cache never holds more than
 * DDL_IPC_CACHE_MAX mappings; the least recently used goes first.
 *
 * This file knows nothing of CUDA: opening and closing are functions it is
 * given, so the unit tests drive it with fakes. */
#ifndef DDL_IPC_CACHE_H
#define DDL_IPC_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "ddl.h"

#define DDL_IPC_HANDLE_BYTES 64 /* sizeof(cudaIpcMemHandle_t) */
#define DDL_IPC_CACHE_MAX 64

/* An owner's device buffer, as it posts it to its node. */
typedef struct {
    unsigned char handle[DDL_IPC_HANDLE_BYTES]; /* of the allocation */
    uint64_t buffer_id;  /* the driver's process-wide unique id of the allocation */
    uint64_t base;       /* the allocation's address in the owner */
    uint64_t size;       /* the allocation's length */
    uint64_t offset;     /* of the buffer in the allocation */
} ddl_gpu_ref_t;

typedef struct {
    /* Map the allocation of ref into *mapped; else a status, the last error
     * (ddl_fail) saying why in one line. */
    ddl_status_t (*open)(void *ctx, const ddl_gpu_ref_t *ref, void **mapped);
    void (*close)(void *ctx, void *mapped);
    void *ctx;
} ddl_ipc_ops_t;

typedef struct {
    int owner;           /* local rank of the exporting owner */
    uint64_t buffer_id, base, size;
    void *mapped;
    uint64_t last_use;
} ddl_ipc_entry_t;

typedef struct {
    ddl_ipc_ops_t ops;
    ddl_ipc_entry_t e[DDL_IPC_CACHE_MAX];
    int n;
    uint64_t clock;
    unsigned long long opens, closes; /* for tests and TRACE */
} ddl_ipc_cache_t;

void ddl_ipc_cache_init(ddl_ipc_cache_t *c, const ddl_ipc_ops_t *ops);
/* The buffer ref points to in owner's memory, mapped into this process. */
ddl_status_t ddl_ipc_cache_map(ddl_ipc_cache_t *c, int owner, const ddl_gpu_ref_t *ref, void **buf);
/* Close every mapping. */
void ddl_ipc_cache_clear(ddl_ipc_cache_t *c);

#endif
