/* SPDX-License-Identifier: Apache-2.0 */
/* Site policy and the user's lane request (options.h).  Pure; uses the
 * runtime's parsers. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "fabric.h"
#include "options.h"
#include "parse.h"

#include "ddl_limits.h"

void ddl_spank_policy_defaults(ddl_spank_policy_t *p)
{
    p->default_lanes = 0;
    p->max_lanes = 16;
    p->bind = 1;
    p->owner_cores = 0;
    p->helpers = DDL_SPANK_HELPERS_DAEMON;
    p->nrails = 0;
    p->stacks = DDL_STACKS_ALL;
    snprintf(p->helper_path, sizeof(p->helper_path), "%s", DDL_HELPER_PATH);
}

int ddl_spank_parse_lanes(const char *value, const char *source, int max, int *lanes, char *err, size_t errlen)
{
    long v;
    if (ddl_parse_long(value, 1, DDL_MAX_LANES, &v) != 0) {
        snprintf(err, errlen, "%s=%s is not a lane count: give an integer from 1 to %d", source, value ? value : "",
                 max);
        return -1;
    }
    if (v > max) {
        snprintf(err, errlen, "%s=%ld is above this site's maximum of %d lanes per GPU", source, v, max);
        return -1;
    }
    *lanes = (int)v;
    return 0;
}

int ddl_spank_rail_index(const ddl_spank_policy_t *p, int gpu, int lane, int gpus)
{
    return (lane * gpus + gpu) % p->nrails;
}

const char *ddl_spank_rail_of(const ddl_spank_policy_t *p, int gpu, int lane, int gpus)
{
    return p->rails[ddl_spank_rail_index(p, gpu, lane, gpus)];
}

/* "eth0,mlx5_1:1,cxi0": device names of letters, digits, '.', '_' and '-',
 * each with an optional ":port" (an RDMA device's port number). */
static int rail_name_ok(const char *name, size_t n)
{
    const char *colon = memchr(name, ':', n);
    size_t dev = colon ? (size_t)(colon - name) : n;
    if (dev == 0)
        return 0;
    for (size_t i = 0; i < dev; i++)
        if (!isalnum((unsigned char)name[i]) && !strchr("._-", name[i]))
            return 0;
    if (!colon)
        return 1;
    if (dev + 1 == n || n - dev - 1 > 3)
        return 0;
    for (size_t i = dev + 1; i < n; i++)
        if (!isdigit((unsigned char)name[i]))
            return 0;
    return 1;
}

static int parse_rails(const char *val, ddl_spank_policy_t *p)
{
    p->nrails = 0;
    while (*val) {
        size_t n = strcspn(val, ",");
        if (n == 0 || n >= sizeof(p->rails[0]) || p->nrails == 8 || !rail_name_ok(val, n))
            return -1;
        memcpy(p->rails[p->nrails], val, n);
        p->rails[p->nrails++][n] = '\0';
        val += n;
        if (*val == ',' && *++val == '\0')
            return -1;
    }
    return p->nrails ? 0 : -1;
}

int ddl_spank_policy_parse(int argc, char **argv, ddl_spank_policy_t *p, char *err, size_t errlen)
{
    static const char *const helper_modes[] = {"app", "daemon", NULL};
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i], *eq = strchr(arg, '=');
        if (!eq || eq == arg) {
            snprintf(err, errlen, "plugstack argument '%s' is not key=value", arg);
            return -1;
        }
        size_t klen = (size_t)(eq - arg);
        const char *val = eq + 1;
        long v;
        int idx, bad = 0;
        char form[256]; /* the accepted values, for the message */
        if (klen == 13 && strncmp(arg, "default_lanes", klen) == 0) {
            bad = ddl_parse_long(val, 0, DDL_MAX_LANES, &v);
            p->default_lanes = (int)v;
            snprintf(form, sizeof(form), "an integer from 0 to %d", DDL_MAX_LANES);
        } else if (klen == 9 && strncmp(arg, "max_lanes", klen) == 0) {
            bad = ddl_parse_long(val, 1, DDL_MAX_LANES, &v);
            p->max_lanes = (int)v;
            snprintf(form, sizeof(form), "an integer from 1 to %d", DDL_MAX_LANES);
        } else if (klen == 11 && strncmp(arg, "owner_cores", klen) == 0) {
            bad = ddl_parse_long(val, 0, DDL_MAX_CPU_ID, &v);
            p->owner_cores = (int)v;
            snprintf(form, sizeof(form), "an integer from 0 to %d (0: all of the GPU's share)", DDL_MAX_CPU_ID);
        } else if (klen == 4 && strncmp(arg, "bind", klen) == 0) {
            bad = ddl_parse_bool(val, &p->bind);
            snprintf(form, sizeof(form), "yes or no (also 1/0, on/off, true/false)");
        } else if (klen == 7 && strncmp(arg, "helpers", klen) == 0) {
            bad = ddl_parse_enum(val, helper_modes, &idx);
            p->helpers = (ddl_spank_helpers_t)idx;
            snprintf(form, sizeof(form), "app or daemon");
        } else if (klen == 6 && strncmp(arg, "helper", klen) == 0) {
            /* An admin's absolute path: never a user's. */
            bad = val[0] != '/' || strlen(val) >= sizeof(p->helper_path);
            if (!bad)
                snprintf(p->helper_path, sizeof(p->helper_path), "%s", val);
            snprintf(form, sizeof(form), "an absolute path of at most %zu characters", sizeof(p->helper_path) - 1);
        } else if (klen == 5 && strncmp(arg, "rails", klen) == 0) {
            bad = parse_rails(val, p);
            snprintf(form, sizeof(form), "1 to 8 comma-separated device names of at most %zu letters, digits, . _ - "
                     "(an RDMA device may add :port), such as eth1,eth2 or mlx5_0:1,mlx5_1:1", sizeof(p->rails[0]) - 1);
        } else if (klen == 6 && strncmp(arg, "fabric", klen) == 0) {
            bad = ddl_fabric_parse(val, &p->stacks);
            snprintf(form, sizeof(form), "%s", ddl_fabric_accepted());
        } else {
            snprintf(err, errlen, "unknown plugstack argument '%.*s' (known: default_lanes, max_lanes, bind, "
                     "helpers, helper, rails, fabric, owner_cores)", (int)klen, arg);
            return -1;
        }
        if (bad) {
            snprintf(err, errlen, "plugstack argument '%s' has a bad value: %.*s takes %s", arg, (int)klen, arg,
                     form);
            return -1;
        }
    }
    if (p->default_lanes > p->max_lanes) {
        snprintf(err, errlen, "plugstack default_lanes=%d is above max_lanes=%d", p->default_lanes, p->max_lanes);
        return -1;
    }
    return 0;
}
