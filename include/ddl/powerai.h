/* A PowerAI DDL compatible API over DDL lanes, for programs written for IBM's
 * DDL: ddl_init(options), an in-place ddl_allreduce(buf, count, type, op),
 * ddl_finalize, and rank and size queries.
 *
 * Differences from PowerAI DDL:
 * - source compatible, not binary: include this header (not ddl.h in the same
 *   file) and link with -lddl; ddl_allreduce here is a macro for
 *   ddl_powerai_allreduce, so it does not clash with the native ddl_allreduce;
 * - "-mode r:AxBxC" runs the multiring algorithm on that grid (A = GPUs per node);
 *   "p:" (exploration, DDL_EXPLORE=1) times ring and recursive doubling along
 *   each dimension on the first calls of each chunk size and keeps the faster;
 * - every rank is one GPU's process (the layout comes from DDL_LANES etc. as for
 *   the native API); buffers are host memory;
 * - errors are the native negative status codes (ddl_status_string names them). */
#ifndef DDL_POWERAI_H
#define DDL_POWERAI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DDL_SUCCESS 0

typedef enum { DDL_TYPE_FLOAT = 0, DDL_TYPE_HALF = 2 } ddl_type;
typedef enum { DDL_OP_SUM = 0 } ddl_op;

/* options: PowerAI DDL's option string ("-mode r:4x16 -dump_iter 100
 * -dbg_level 1"); NULL reads DDL_OPTIONS from the environment.  Collective. */
int ddl_init(const char *options);
int ddl_powerai_allreduce(void *buf, size_t count, ddl_type type, ddl_op op);
int ddl_finalize(void);
int ddl_rank(int *rank);
int ddl_size(int *size);
int ddl_local_rank(int *rank);
int ddl_local_size(int *size);

#ifndef DDL_POWERAI_NO_RENAME /* defined only by the library's own implementation */
#define ddl_allreduce ddl_powerai_allreduce
#endif

#ifdef __cplusplus
}
#endif

#endif
