/* SPDX-License-Identifier: Apache-2.0 */
/* The limits every part of the project shares: the SPANK plugin, the runtime
 * and the tools read them from here, so a limit is raised in one place. */
#ifndef DDL_LIMITS_H
#define DDL_LIMITS_H

#define DDL_MAX_LANES 1024     /* lanes per GPU (--ddl-lanes, DDL_LANES) */
#define DDL_MAX_GPUS 64        /* GPUs per node the runtime and the plan handle */
#define DDL_MAX_NODE_SIZE (1 << 20) /* DDL_NODE_SIZE */
#define DDL_MAX_GRID_DIM (1 << 20)  /* one dimension of DDL_TOPOLOGY */
#define DDL_MAX_CPU_ID (1 << 20) /* the largest core or GPU id a list may name */
#define DDL_MAX_BUFFER_BYTES ((size_t)1 << 56) /* a process holds at most 2^56 bytes (x86-64 with 5-level paging) */
#define DDL_HOST_LEN 64        /* host names exchanged between ranks, with the NUL */
#define DDL_OPTIONS_MAX 4096   /* PowerAI DDL option strings */
#define DDL_TUNING_FILE_MAX (64 * 1024) /* bytes of a tuning file */

/* The most chunks in flight between nodes (DDL_INFLIGHT): the lanes'
 * schedules and scratch buffers, one per pipeline slot. */
#define DDL_INFLIGHT_MAX 4

#endif
