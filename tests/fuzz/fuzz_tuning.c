/* SPDX-License-Identifier: Apache-2.0 */
/* The tuning file parser: any text is parsed or refused with a line number;
 * what it accepts has ordered, non-overlapping bands and finite model numbers. */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "fuzz.h"
#include "tuning.h"

DDL_FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstring(data, size);
    const char *err = ddl_last_error();
    static ddl_tuning_t t;
    if (!text)
        return 0;
    if (ddl_tuning_parse(text, &t) == 0) {
        for (int i = 0; i < t.nbands; i++) {
            FUZZ_ASSERT(t.bands[i].max > t.bands[i].min);
            FUZZ_ASSERT(i == 0 || t.bands[i].min >= t.bands[i - 1].max);
            FUZZ_ASSERT(ddl_tuning_find(&t, t.bands[i].min) == &t.bands[i]);
        }
        for (int d = 0; d < DDL_GRID_MAX_DIMS; d++)
            FUZZ_ASSERT(isfinite(t.model.link[d].alpha) && isfinite(t.model.link[d].beta));
        FUZZ_ASSERT(isfinite(t.model.gamma));
        (void)ddl_tuning_digest(&t);
    } else {
        FUZZ_ASSERT(strncmp(err, "line ", 5) == 0);
    }
    free(text);
    return 0;
}
