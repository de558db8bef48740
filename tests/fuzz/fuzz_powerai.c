/* SPDX-License-Identifier: Apache-2.0 */
/* PowerAI DDL option strings: parsed or refused, never cut short. */
#include "config.h"

#include "fuzz.h"
#include "powerai_options.h"

DDL_FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstring(data, size);
    ddl_powerai_options_t o;
    if (!s)
        return 0;
    if (ddl_powerai_options_parse(s, &o) == DDL_OK) {
        FUZZ_ASSERT(o.mode == 0 || o.mode == 'r' || o.mode == 'p');
        FUZZ_ASSERT(o.dbg_level >= -1 && o.dbg_level <= 2 && o.dump_iter >= 0);
        FUZZ_ASSERT(strlen(s) < 4096);
    }
    free(s);
    return 0;
}
