/* SPDX-License-Identifier: Apache-2.0 */
/* Bytes per grid dimension: one allreduce of N floats along DDL_TOPOLOGY =
 * 1 x A x B x ... (one GPU, one lane per node): dimension d sends
 * 2 (m_d - 1) / m_d of what reaches it, and what reaches it is divided by the
 * inner dimensions, so the outer links carry 1 / (inner product) of the data.
 * DDL_TEST_DIMS=ring,rd,... says which dimensions the tuning file of the run
 * puts on recursive doubling: such a dimension (of a power-of-two size) sends
 * log2(m) times what reaches it, and passes it on undivided. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddl.h"
#include "testcomm.h"

int main(int argc, char **argv)
{
    ddl_config_t cfg;
    ddl_comm_info_t info;
    ddl_comm_t *comm = ddl_test_comm(&argc, &argv, &cfg, &info);
    const size_t n = 1u << 20; /* divisible by every grid used here */
    float *buf;
    if (ddl_malloc(comm, n * sizeof(float), (void **)&buf) != DDL_OK)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (size_t i = 0; i < n; i++)
        buf[i] = 1.0f;
    ddl_comm_stats_reset(comm);
    if (ddl_allreduce(DDL_IN_PLACE, buf, (int64_t)n, DDL_DTYPE_F32, DDL_REDOP_SUM, comm) != DDL_OK) {
        fprintf(stderr, "allreduce: %s\n", ddl_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int failures = 0;
    for (size_t i = 0; i < n; i++)
        if (buf[i] != (float)info.size && failures++ < 3)
            fprintf(stderr, "FAIL rank %d: element %zu is %g, expected %d\n", info.rank, i, buf[i], info.size);
    ddl_dim_stats_t st[8];
    int ndims = ddl_comm_stats(comm, st, 8);
    double reaching = (double)n * sizeof(float) / (info.gpus_per_node * info.lanes);
    int rd[8] = {0};
    char dims[64];
    snprintf(dims, sizeof(dims), "%s", getenv("DDL_TEST_DIMS") ? getenv("DDL_TEST_DIMS") : "");
    char *save;
    int k = 1;
    for (char *w = strtok_r(dims, ",", &save); w && k < 8; w = strtok_r(NULL, ",", &save))
        rd[k++] = strcmp(w, "rd") == 0;
    for (int d = 0; d < ndims; d++) {
        if (d == 0 && ndims > 1) {
            if (st[0].bytes_sent != 0 && failures++ < 10)
                fprintf(stderr, "FAIL rank %d: the all-node ring sent %llu bytes under multiring\n", info.rank,
                        st[0].bytes_sent);
            continue;
        }
        int m = st[d].size, log2m = 0;
        while ((1 << (log2m + 1)) <= m)
            log2m++;
        double expect = rd[d] ? log2m * reaching : 2.0 * (m - 1) / m * reaching;
        if (fabs((double)st[d].bytes_sent - expect) > 0.001 * expect + 64) {
            fprintf(stderr, "FAIL rank %d: dimension %d (%d ranks) sent %llu bytes, expected %.0f\n", info.rank, d, m,
                    st[d].bytes_sent, expect);
            failures++;
        }
        if (info.rank == 0)
            printf("dimension %d: %d ranks, %s, %llu bytes sent by rank 0 (%.4f of the buffer), %.3f ms in flight\n", d,
                   m, rd[d] ? "rd" : "ring", st[d].bytes_sent, (double)st[d].bytes_sent / ((double)n * sizeof(float)),
                   st[d].seconds * 1e3);
        if (!rd[d])
            reaching /= m;
    }
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    ddl_free(comm, buf);
    ddl_comm_destroy(comm);
    MPI_Finalize();
    return total ? 1 : 0;
}
