/* SPDX-License-Identifier: Apache-2.0 */
/* The strict value parsers (sizes, seconds, integers, booleans, enums), the log
 * file name expansion and the /proc/<pid>/stat reader: accepted values are in
 * range, nothing overflows. */
#include "config.h"

#include <math.h>

#include "fuzz.h"
#include "log.h"
#include "parse.h"
#include "procstat.h"

DDL_FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstring(data, size);
    if (!s)
        return 0;
    size_t bytes;
    double sec;
    long v;
    int b, idx;
    static const char *const names[] = {"collective", "serve", NULL};
    (void)ddl_parse_size(s, &bytes);
    if (ddl_parse_seconds(s, &sec) == 0)
        FUZZ_ASSERT(isfinite(sec) && sec > 0);
    if (ddl_parse_long(s, -5, 1000, &v) == 0)
        FUZZ_ASSERT(v >= -5 && v <= 1000);
    if (ddl_parse_bool(s, &b) == 0)
        FUZZ_ASSERT(b == 0 || b == 1);
    if (ddl_parse_enum(s, names, &idx) == 0)
        FUZZ_ASSERT(idx == 0 || idx == 1);
    char out[64];
    if (ddl_log_expand_path(s, "a-rather-long-host-name.example.org", 123456, 7, out, sizeof(out)) == 0)
        FUZZ_ASSERT(strlen(out) < sizeof(out));
    ddl_procstat_t st;
    (void)ddl_procstat_parse(s, &st);
    free(s);
    return 0;
}
