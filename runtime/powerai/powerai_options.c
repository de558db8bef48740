/* SPDX-License-Identifier: Apache-2.0 */
/* PowerAI DDL's option string, parsed without side effects
 * (powerai_options.h).  Uses core's parsers and grid.h. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddl_limits.h"
#include "log.h"
#include "parse.h"
#include "powerai_options.h"

ddl_status_t ddl_powerai_options_parse(const char *options, ddl_powerai_options_t *o)
{
    memset(o, 0, sizeof(*o));
    o->dbg_level = -1;
    char buf[DDL_OPTIONS_MAX];
    if (strlen(options) >= sizeof(buf))
        return ddl_error(DDL_ERR_INVALID_ARG, "DDL options: %zu characters, more than the %zu accepted; shorten them",
                         strlen(options), sizeof(buf) - 1);
    memcpy(buf, options, strlen(options) + 1);
    char *save;
    for (char *tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        char *val = strtok_r(NULL, " \t", &save);
        long v;
        if (!val)
            return ddl_error(DDL_ERR_INVALID_ARG, "DDL options: '%s' needs a value", tok);
        if (strcmp(tok, "-mode") == 0) {
            char *colon = strchr(val, ':');
            ddl_grid_t g;
            /* A one-dimensional grid is one node: "4" is "4x1". */
            char grid[sizeof(o->grid)] = "";
            size_t glen = colon ? strlen(colon + 1) : 0;
            int fits = colon && glen + 3 <= sizeof(grid);
            if (fits) {
                memcpy(grid, colon + 1, glen + 1);
                if (!strchr(grid, 'x'))
                    strcat(grid, "x1");
            }
            if (!fits || colon == val || ddl_grid_parse(grid, &g) != DDL_OK)
                return ddl_error(DDL_ERR_INVALID_ARG, "DDL options: -mode %s is not MODE:GRID such as r:4x16", val);
            /* r: rings per dimension; p: times ring and recursive doubling per
             * dimension on the first calls and keeps the faster. */
            if (colon - val != 1 || (val[0] != 'r' && val[0] != 'p'))
                return ddl_error(DDL_ERR_INVALID_ARG, "DDL options: -mode %s: mode '%.*s' is not r (rings) or p "
                                 "(explore per dimension)", val, (int)(colon - val), val);
            o->mode = val[0];
            memcpy(o->grid, grid, sizeof(grid));
        } else if (strcmp(tok, "-dump_iter") == 0) {
            if (ddl_parse_long(val, 0, 1L << 40, &v) != 0)
                return ddl_error(DDL_ERR_INVALID_ARG, "DDL options: -dump_iter %s is not a count", val);
            o->dump_iter = v;
        } else if (strcmp(tok, "-dbg_level") == 0) {
            if (ddl_parse_long(val, 0, 2, &v) != 0)
                return ddl_error(DDL_ERR_INVALID_ARG, "DDL options: -dbg_level %s is not 0, 1 or 2", val);
            o->dbg_level = (int)v;
        } else {
            return ddl_error(DDL_ERR_INVALID_ARG, "DDL options: unknown option '%s' (known: -mode, -dump_iter, "
                             "-dbg_level)", tok);
        }
    }
    return DDL_OK;
}
