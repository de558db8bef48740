/* SPDX-License-Identifier: Apache-2.0 */
/* DDL_TOPOLOGY grids: parsed or refused; an accepted grid is checked against a
 * job, and on small grids every node's multiring schedule stays in its chunk. */
#include "config.h"

#include "fuzz.h"
#include "grid.h"
#include "inter.h"

DDL_FUZZ_QUIET

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstring(data, size);
    ddl_grid_t g;
    if (!s)
        return 0;
    if (ddl_grid_parse(s, &g) == 0) {
        FUZZ_ASSERT(g.ndims >= 2 && g.ndims <= DDL_GRID_MAX_DIMS);
        long nodes = 1;
        int small = 1;
        for (int d = 1; d < g.ndims && small; d++) {
            nodes *= g.dims[d];
            small = nodes <= 64;
        }
        (void)ddl_grid_check(&g, g.dims[0], small ? (int)nodes : 2);
        if (small) {
            int max = ddl_multiring_max_steps(&g);
            ddl_step_t *steps = calloc((size_t)max, sizeof(*steps));
            unsigned char dims[DDL_GRID_MAX_DIMS] = {0};
            size_t n = size < 4 ? size : 1000 + size;
            for (int d = 1; d < g.ndims; d++)
                dims[d] = (unsigned char)(data[d % size] & 1);
            for (int node = 0; node < nodes && steps; node++) {
                int k = ddl_multiring_build(node, &g, dims, n, steps);
                FUZZ_ASSERT(k >= 0 && k <= max);
                for (int i = 0; i < k; i++) {
                    FUZZ_ASSERT(steps[i].send_peer < nodes && steps[i].recv_peer < nodes);
                    FUZZ_ASSERT(steps[i].send_off + steps[i].send_n <= n);
                    FUZZ_ASSERT(steps[i].recv_off + steps[i].recv_n <= n);
                }
            }
            free(steps);
        }
    }
    free(s);
    return 0;
}
