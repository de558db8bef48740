/* SPDX-License-Identifier: Apache-2.0 */
/* Copies of results into buffers that this process will not read again: a
 * call's result goes to every owner's buffer, and the owners (other cores)
 * read it later.  Ordinary stores first read each destination line into this
 * core's cache (a read for ownership) and leave it there; streaming stores
 * write it to memory without the read, which is what out-of-place calls of
 * several MiB need (bench/JOURNAL.md, "Out-of-place at the memory floor"). */
#ifndef DDL_COPY_H
#define DDL_COPY_H

#include <stddef.h>

/* memcpy(dst, src, bytes) with streaming stores where the CPU has them
 * (x86-64), a plain memcpy elsewhere.  The stores are weakly ordered: call
 * ddl_copy_stream_fence() before telling any other process they are done. */
void ddl_copy_stream(void *dst, const void *src, size_t bytes);

/* Orders every earlier streaming store before the stores that follow it (the
 * release of a barrier). */
void ddl_copy_stream_fence(void);

#endif
