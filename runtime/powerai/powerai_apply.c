/* SPDX-License-Identifier: Apache-2.0 */
/* What both PowerAI entry points use (powerai.c's ddl_init and powerai_mpi.c's
 * ddl_allreduce_mpi): applying an options string, and the in-place allreduce
 * of every PowerAI call.  Kept apart so that the two files do not call each
 * other's.  Uses the native API, the settings' overlay (core/params.h) and
 * powerai_options.c's parser. */
#include "config.h"

#include <stdint.h>

#include "log.h"
#include "params.h"
#include "powerai_options.h"

/* The parsed options become DDL_ALGO, DDL_TOPOLOGY, DDL_EXPLORE and
 * DDL_DEBUG in the settings' overlay (params.h), read when the communicator is
 * created (ddl.h); the process's environment is left as it is. */
ddl_status_t ddl_options_apply(const char *options, long *dump)
{
    if (!options)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_options_apply: options is NULL");
    ddl_powerai_options_t o;
    ddl_status_t st = ddl_powerai_options_parse(options, &o);
    if (st != DDL_OK)
        return st;
    /* Each string applies alone, over the program's own environment
     * (ddl_allreduce_mpi keeps one communicator per options string). */
    ddl_params_overlay_clear();
    if (o.mode && ((st = ddl_params_overlay("DDL_EXPLORE", o.mode == 'p' ? "1" : "0")) != DDL_OK ||
                   (st = ddl_params_overlay("DDL_TOPOLOGY", o.grid)) != DDL_OK ||
                   (st = ddl_params_overlay("DDL_ALGO", "multiring")) != DDL_OK))
        return st;
    if (o.dbg_level >= 0) {
        static const char *const levels[] = {"WARN", "INFO", "TRACE"};
        if ((st = ddl_params_overlay("DDL_DEBUG", levels[o.dbg_level])) != DDL_OK)
            return st;
    }
    if (dump)
        *dump = o.dump_iter;
    return DDL_OK;
}

/* Every PowerAI allreduce: in place, host or device memory (DDL_MEM_AUTO). */
ddl_status_t ddl_powerai_allreduce_on(ddl_comm_t *c, void *buf, size_t count, ddl_dtype_t dtype, ddl_redop_t op)
{
    if (count > (size_t)INT64_MAX)
        return ddl_error(DDL_ERR_INVALID_ARG, "ddl_allreduce: count %zu is too large", count);
    return ddl_allreduce(DDL_IN_PLACE, buf, (int64_t)count, dtype, op, c);
}
