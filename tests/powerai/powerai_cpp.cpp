/* SPDX-License-Identifier: Apache-2.0 */
// A C++ program written for PowerAI DDL 1.x that also uses the native API in
// the same file (both headers, PowerAI's first): C++ overloads of
// ddl_allreduce and ddl_malloc beside the native functions.  Checked against
// sums computed here.  Prints "PowerAI C++: N ranks, F failures".
#include <cstdio>
#include <cstring>
#include <vector>

#include <ddl.hpp>
#include <ddl.h>

int main()
{
    int failures = 0;
    if (ddl_init(std::getenv("DDL_OPTIONS")) != DDL_SUCCESS) {
        std::fprintf(stderr, "FAIL: ddl_init: %s\n", ddl_last_error());
        return 1;
    }
    int rank = -1, size = 0;
    ddl_rank(&rank);
    ddl_size(&size);
    const int n = 4099;
    float *buf = nullptr;
    int bytes = ddl_malloc((void **)&buf, 256, n * sizeof(float)); // PowerAI's
    int ngrad = bytes / (int)sizeof(float);
    if (bytes != (n * 4 + 255) / 256 * 256 || !buf) {
        std::fprintf(stderr, "FAIL: ddl_malloc returned %d\n", bytes);
        return 1;
    }
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < n; i++)
            buf[i] = (float)(rank + it) * (float)(i % 7);
        if (ddl_allreduce(buf, ngrad) != DDL_SUCCESS)
            failures++;
        for (int i = 0; i < ngrad; i++) {
            double want = i < n ? ((double)size * (size - 1) / 2 + (double)size * it) * (i % 7) : 0;
            if (buf[i] != want && failures++ < 5)
                std::fprintf(stderr, "FAIL rank %d it %d: element %d is %g, expected %g\n", rank, it, i, buf[i], want);
        }
    }
    std::vector<float> v(10, 2.0f);
    if (ddl_allreduce(v.data(), v.size(), DDL_TYPE_FLOAT, DDL_OP_MAX) != DDL_SUCCESS || v[9] != 2.0f)
        failures++;
    // The native API in the same file: its status names and its own communicator.
    if (std::strcmp(ddl_status_string(DDL_ERR_INVALID_ARG), "invalid argument") != 0)
        failures++;
    ddl_config_t cfg;
    ddl_comm_t *comm = nullptr;
    std::vector<double> d(5, 1.5);
    if (ddl_config_init(&cfg) != DDL_OK || ddl_comm_create(MPI_COMM_WORLD, &cfg, &comm) != DDL_OK ||
        ddl_allreduce(DDL_IN_PLACE, d.data(), 5, DDL_DTYPE_F64, DDL_REDOP_SUM, comm) != DDL_OK || d[4] != 1.5 * size)
        failures++;
    if (comm)
        ddl_comm_destroy(comm);
    float total = (float)failures;
    ddl_allreduce(&total, 1);
    if (rank == 0)
        std::printf("PowerAI C++: %d ranks, %d failures\n", size, (int)total);
    std::free(buf);
    ddl_finalize();
    return total ? 1 : 0;
}
