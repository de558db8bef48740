/* SPDX-License-Identifier: Apache-2.0 */
/* The PowerAI DDL compatible API, as a program written for it uses it. */
#include "config.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddl/powerai.h>

#include "half.h"

int main(void)
{
    int failures = 0, rank, size, lrank, lsize;
    if (ddl_init("-mode z4x4") == DDL_SUCCESS) /* malformed: refused before anything starts */
        failures++;
    if (ddl_init("-mode r:1x2x2 -dump_iter 2 -dbg_level 0") != DDL_SUCCESS) {
        fprintf(stderr, "FAIL: ddl_init\n");
        return 1;
    }
    ddl_rank(&rank);
    ddl_size(&size);
    ddl_local_rank(&lrank);
    ddl_local_size(&lsize);
    const size_t n = 100003;
    float *f = malloc(n * sizeof(float));
    uint16_t *h = malloc(n * sizeof(uint16_t));
    for (int it = 0; it < 3; it++) {
        for (size_t i = 0; i < n; i++) {
            f[i] = (float)(rank + 1) * (float)(i % 5);
            h[i] = ddl_f32_to_f16((float)(rank + 1));
        }
        if (ddl_allreduce(f, n, DDL_TYPE_FLOAT, DDL_OP_SUM) != DDL_SUCCESS ||
            ddl_allreduce(h, n, DDL_TYPE_HALF, DDL_OP_SUM) != DDL_SUCCESS) {
            fprintf(stderr, "FAIL rank %d: ddl_allreduce\n", rank);
            failures++;
            break;
        }
        float expect = (float)(size * (size + 1) / 2);
        for (size_t i = 0; i < n; i++) {
            if (f[i] != expect * (float)(i % 5) || ddl_f16_to_f32(h[i]) != expect) {
                if (failures++ < 3)
                    fprintf(stderr, "FAIL rank %d: element %zu: %g and %g, expected %g and %g\n", rank, i, f[i],
                            ddl_f16_to_f32(h[i]), expect * (float)(i % 5), expect);
            }
        }
    }
    if (ddl_allreduce(f, n, (ddl_type)7, DDL_OP_SUM) == DDL_SUCCESS)
        failures++;
    if (lsize != 1 || lrank != 0 || size != 4)
        failures++;
    int total = failures;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("PowerAI DDL API: %d ranks, %d failures\n", size, total);
    free(f);
    free(h);
    ddl_finalize();
    return total ? 1 : 0;
}
