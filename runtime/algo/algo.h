/* SPDX-License-Identifier: Apache-2.0 */
/* The algorithms' ids, names and descriptions.  The names are what DDL_ALGO,
 * DDL_LANE_ALGO, DDL_GPU_TRANSPORT and tuning files accept; ddl-info prints
 * the descriptions (ddl_algo_table).  Selection does not read this table: the
 * path is dispatched in engine/allreduce.c, the lane algorithm through
 * algo/inter.c's table. */
#ifndef DDL_ALGO_H
#define DDL_ALGO_H

#include <stddef.h>

typedef enum { DDL_ALGO_AUTO = 0, DDL_ALGO_MPI, DDL_ALGO_LANE, DDL_ALGO_MULTIRING, DDL_ALGO_COUNT } ddl_algo_id_t;
typedef enum { DDL_INTER_AUTO = 0, DDL_INTER_RING, DDL_INTER_RD, DDL_INTER_RAB, DDL_INTER_COUNT } ddl_inter_algo_id_t;

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
