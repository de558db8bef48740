/* SPDX-License-Identifier: Apache-2.0 */
/* plugstack.conf arguments (one per line) and lane counts: parsed or refused
 * with the argument named; accepted policies are within their bounds. */
#include "config.h"

#include "fuzz.h"
#include "options.h"

DDL_FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstring(data, size), *argv[64], err[512];
    int argc = 0;
    if (!s)
        return 0;
    for (char *save, *w = strtok_r(s, "\n", &save); w && argc < 64; w = strtok_r(NULL, "\n", &save))
        argv[argc++] = w;
    ddl_spank_policy_t p;
    ddl_spank_policy_defaults(&p);
    if (ddl_spank_policy_parse(argc, argv, &p, err, sizeof(err)) == 0) {
        FUZZ_ASSERT(p.max_lanes >= 1 && p.default_lanes >= 0 && p.default_lanes <= p.max_lanes);
        FUZZ_ASSERT(p.nrails >= 0 && p.nrails <= 8);
    }
    int lanes;
    if (argc > 0 && ddl_spank_parse_lanes(argv[0], "--ddl-lanes", 16, &lanes, err, sizeof(err)) == 0)
        FUZZ_ASSERT(lanes >= 1 && lanes <= 16);
    free(s);
    return 0;
}
