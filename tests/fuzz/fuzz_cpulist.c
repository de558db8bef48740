/* SPDX-License-Identifier: Apache-2.0 */
/* CPU and GPU lists ("0-7,16"): parsed or refused; what is accepted is sorted,
 * unique, and formats back to a list that parses to the same ids. */
#include "config.h"

#include "cpulist.h"
#include "fuzz.h"

DDL_FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAX = 4096 };
    static int ids[MAX], again[MAX];
    static char text[16 * MAX];
    char *s = fuzz_cstring(data, size);
    if (!s)
        return 0;
    int n = ddl_cpulist_parse(s, ids, MAX);
    if (n >= 0) {
        for (int i = 1; i < n; i++)
            FUZZ_ASSERT(ids[i] > ids[i - 1]);
        ddl_cpulist_format(ids, n, text, sizeof(text));
        FUZZ_ASSERT(n == 0 || ddl_cpulist_parse(text, again, MAX) == n);
        FUZZ_ASSERT(n == 0 || memcmp(ids, again, sizeof(int) * (size_t)n) == 0);
    }
    free(s);
    return 0;
}
