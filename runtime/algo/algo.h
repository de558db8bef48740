/* SPDX-License-Identifier: Apache-2.0 */
/* The algorithms' ids, names and descriptions.  The names are what DDL_ALGO,
 * DDL_LANE_ALGO, DDL_GPU_TRANSPORT and tuning files accept; ddl-info prints
 * the descriptions (ddl_algo_table).  The lane algorithms' ids, names and
 * descriptions come from their rows (inter_algos.def), which selection
 * iterates (inter.h); the path is dispatched in engine/allreduce.c. */
#ifndef DDL_ALGO_H
#define DDL_ALGO_H

#include <stddef.h>

typedef enum { DDL_ALGO_AUTO = 0, DDL_ALGO_MPI, DDL_ALGO_LANE, DDL_ALGO_MULTIRING, DDL_ALGO_COUNT } ddl_algo_id_t;
/* DDL_INTER_AUTO (the cost model chooses per chunk), then one id per row of
 * inter_algos.def, in its order. */
typedef enum {
    DDL_INTER_AUTO = 0,
#define DDL_INTER_ROW(ID, ...) DDL_INTER_##ID,
#include "inter_algos.def"
#undef DDL_INTER_ROW
    DDL_INTER_COUNT
} ddl_inter_algo_id_t;
#define DDL_INTER_ALGOS (DDL_INTER_COUNT - 1) /* the rows */

typedef struct {
    const char *scope; /* "allreduce" (DDL_ALGO) or "lane" (DDL_LANE_ALGO) */
    int id;
    const char *name;
    const char *description;
} ddl_algo_desc_t;

extern const char *const ddl_algo_names[];       /* indexed by ddl_algo_id_t, NULL-terminated */
extern const char *const ddl_inter_algo_names[]; /* indexed by ddl_inter_algo_id_t */

const ddl_algo_desc_t *ddl_algo_table(size_t *count);

#endif
