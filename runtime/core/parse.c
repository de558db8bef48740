/* SPDX-License-Identifier: Apache-2.0 */
/* Strict parsers for configuration values (parse.h).  Pure; shared with the
 * SPANK plugin. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse.h"

int ddl_parse_long(const char *s, long min, long max, long *out)
{
    if (!s || !*s || isspace((unsigned char)s[0]))
        return -1;
    if (s[0] == '+' || (s[0] == '-' && min >= 0))
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end != '\0' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int ddl_parse_size(const char *s, size_t *out)
{
    if (!s || !isdigit((unsigned char)s[0]))
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case '\0': break;
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    case 'T': shift = 40; end++; break;
    default: return -1;
    }
    if (shift && (strcasecmp(end, "iB") == 0 || strcasecmp(end, "B") == 0))
        end += strlen(end);
    if (*end != '\0')
        return -1;
    if (shift && v > (SIZE_MAX >> shift))
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

int ddl_parse_seconds(const char *s, double *out)
{
    if (!s || !*s || isspace((unsigned char)s[0]) || s[0] == '-' || s[0] == '+')
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end != '\0' || !isfinite(v) || v <= 0)
        return -1;
    *out = v;
    return 0;
}

long long ddl_double_to_ll(double v, long long lo, long long hi)
{
    if (!(v >= (double)lo)) /* also NaN */
        return lo;
    if (v >= (double)hi)
        return hi;
    return (long long)v;
}

int ddl_parse_enum(const char *s, const char *const *names, int *idx)
{
    if (!s)
        return -1;
    for (int i = 0; names[i]; i++) {
        if (strcasecmp(s, names[i]) == 0) {
            *idx = i;
            return 0;
        }
    }
    return -1;
}

int ddl_parse_bool(const char *s, int *out)
{
    static const char *const names[] = {"0", "1", "no", "yes", "off", "on", "false", "true", NULL};
    int idx;
    if (ddl_parse_enum(s, names, &idx) != 0)
        return -1;
    *out = idx & 1;
    return 0;
}
