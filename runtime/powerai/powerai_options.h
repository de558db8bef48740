/* SPDX-License-Identifier: Apache-2.0 */
/* PowerAI DDL's option string ("-mode r:4x16 -dump_iter 100 -dbg_level 1"),
 * parsed without side effects so that it can be tested and fuzzed alone. */
#ifndef DDL_POWERAI_OPTIONS_H
#define DDL_POWERAI_OPTIONS_H

#include "ddl.h"
#include "grid.h"

typedef struct {
    char mode;       /* 'r' (rings per dimension), 'p' (explore per dimension), 0 when not given */
    char grid[128];  /* the grid after "MODE:", as DDL_TOPOLOGY reads it */
    long dump_iter;  /* 0 when not given */
    int dbg_level;   /* 0-2, -1 when not given */
} ddl_powerai_options_t;

/* DDL_ERR_INVALID_ARG with a message naming the bad option; never truncates.
 * A one-dimensional grid ("r:4") is one node: its grid becomes "4x1". */
ddl_status_t ddl_powerai_options_parse(const char *options, ddl_powerai_options_t *o);

/* The rest of the PowerAI layer: powerai_apply.c (ddl_options_apply, in
 * ddl.h, and this allreduce), then powerai.c and powerai_mpi.c above it. */
/* In place, host or device memory. */
ddl_status_t ddl_powerai_allreduce_on(struct ddl_comm *c, void *buf, size_t count, ddl_dtype_t dtype, ddl_redop_t op);
/* Destroy the communicators ddl_allreduce_mpi made (collective). */
ddl_status_t ddl_powerai_mpi_release(void);

#endif
