/* SPDX-License-Identifier: Apache-2.0 */
/* The multi-ring grid (grid.h): parsing, checking, node coordinates.  Uses
 * core's parsers. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "grid.h"
#include "log.h"
#include "parse.h"
#include "ddl_limits.h"

ddl_status_t ddl_grid_parse(const char *s, ddl_grid_t *g)
{
    memset(g, 0, sizeof(*g));
    char buf[128];
    if (!s || strlen(s) >= sizeof(buf))
        return ddl_fail(DDL_ERR_INVALID_ARG, "DDL_TOPOLOGY is empty or longer than %zu characters", sizeof(buf) - 1);
    snprintf(buf, sizeof(buf), "%s", s);
    char *save;
    for (char *tok = strtok_r(buf, "x", &save); tok; tok = strtok_r(NULL, "x", &save)) {
        long v;
        if (g->ndims == DDL_GRID_MAX_DIMS || ddl_parse_long(tok, 1, DDL_MAX_GRID_DIM, &v) != 0)
            return ddl_fail(DDL_ERR_INVALID_ARG, "DDL_TOPOLOGY=%s is not a grid such as 4x8x2 (GPUs per node x "
                            "nodes per rack x racks, at most %d dimensions of 1 to %d)", s, DDL_GRID_MAX_DIMS,
                            DDL_MAX_GRID_DIM);
        g->dims[g->ndims++] = (int)v;
    }
    if (g->ndims < 2 || s[strlen(s) - 1] == 'x' || s[0] == 'x' || strstr(s, "xx"))
        return ddl_fail(DDL_ERR_INVALID_ARG, "DDL_TOPOLOGY=%s needs at least 2 dimensions (GPUs per node x nodes)", s);
    return DDL_OK;
}

static void shape(const ddl_grid_t *g, char *buf, size_t len)
{
    size_t o = 0;
    for (int d = 0; d < g->ndims && o < len; d++)
        o += (size_t)snprintf(buf + o, len - o, "%s%d", d ? "x" : "", g->dims[d]);
}

ddl_status_t ddl_grid_check(const ddl_grid_t *g, int gpus, int nnodes)
{
    /* Checked: eight dimensions of up to 2^20 overflow any integer. */
    long nodes = 1;
    int overflow = 0;
    for (int d = 1; d < g->ndims; d++)
        overflow |= __builtin_mul_overflow(nodes, (long)g->dims[d], &nodes);
    if (!overflow && g->dims[0] == gpus && nodes == nnodes)
        return DDL_OK;
    char s[96];
    shape(g, s, sizeof(s));
    return ddl_fail(DDL_ERR_LAYOUT, "DDL_TOPOLOGY=%s describes %d GPUs per node on %s%ld nodes, but the job has %d GPUs per "
             "node on %d nodes (%dx%d); give a grid whose first dimension is the GPUs per node and whose other "
             "dimensions multiply to the node count", s, g->dims[0], overflow ? "more than " : "", overflow ? LONG_MAX : nodes, gpus, nnodes, gpus, nnodes);
}

int ddl_grid_coord(const ddl_grid_t *g, int node, int d)
{
    for (int k = 1; k < d; k++)
        node /= g->dims[k];
    return node % g->dims[d];
}

int ddl_grid_peer(const ddl_grid_t *g, int node, int d, int value)
{
    int stride = 1;
    for (int k = 1; k < d; k++)
        stride *= g->dims[k];
    return node + (value - ddl_grid_coord(g, node, d)) * stride;
}
