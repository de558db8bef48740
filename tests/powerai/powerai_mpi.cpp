/* SPDX-License-Identifier: Apache-2.0 */
// The MPI form of PowerAI DDL 1.x (<ddl_mpi.hpp>): the program starts MPI
// itself, asks ddl_rank before any DDL call, and allreduces on MPI_COMM_WORLD
// and on a split communicator with MPI types and ops; it never calls
// ddl_finalize (MPI_Finalize releases the communicators).  Checked against
// values computed here.  Prints "PowerAI MPI: N ranks, F failures".
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <ddl_mpi.hpp>

int main(int argc, char **argv)
{
    int provided, failures = 0, rank = -1, size = 0, mpi_rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
    if (ddl_rank(&rank) != DDL_SUCCESS || ddl_size(&size) != DDL_SUCCESS || rank != mpi_rank)
        failures++;
    const char *options = std::getenv("DDL_OPTIONS") ? std::getenv("DDL_OPTIONS") : "";
    const size_t n = 20011;
    std::vector<float> f(n);
    std::vector<double> d(n);
    std::vector<int> in(n);
    std::vector<int64_t> l(n);
    for (int it = 0; it < 2; it++) { // the second round reuses the communicator
        for (size_t i = 0; i < n; i++) {
            f[i] = (float)(rank + 1) * (float)(i % 11);
            d[i] = rank * 0.5 + (double)i;
            in[i] = rank - (int)(i % 5);
            l[i] = rank % 2 ? 3 : -1;
        }
        if (ddl_allreduce_mpi(options, f.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) != DDL_SUCCESS ||
            ddl_allreduce_mpi(options, d.data(), n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) != DDL_SUCCESS ||
            ddl_allreduce_mpi(options, in.data(), n, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != DDL_SUCCESS ||
            ddl_allreduce_mpi(options, l.data(), n, MPI_INT64_T, MPI_PROD, MPI_COMM_WORLD) != DDL_SUCCESS) {
            std::fprintf(stderr, "FAIL: ddl_allreduce_mpi: %s\n", ddl_last_error());
            failures++;
            break;
        }
        int64_t prod = 1;
        for (int r = 0; r < size; r++)
            prod *= r % 2 ? 3 : -1;
        for (size_t i = 0; i < n; i++) {
            bool ok = f[i] == (float)(size * (size + 1) / 2) * (float)(i % 11) && d[i] == (size - 1) * 0.5 + (double)i &&
                      in[i] == -(int)(i % 5) && l[i] == prod;
            if (!ok && failures++ < 5)
                std::fprintf(stderr, "FAIL rank %d: element %zu: %g %g %d %lld\n", rank, i, f[i], d[i], in[i],
                             (long long)l[i]);
        }
    }
    // A communicator of half the ranks: its own DDL communicator (without the
    // grid, which describes all the ranks).
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hsize;
    MPI_Comm_size(half, &hsize);
    std::vector<float> h(33, 1.0f);
    if (ddl_allreduce_mpi("", h.data(), h.size(), MPI_FLOAT, MPI_SUM, half) != DDL_SUCCESS || h[32] != hsize)
        failures++;
    // Types and ops it cannot do are refused by name.
    short s = 1;
    if (ddl_allreduce_mpi(options, &s, 1, MPI_SHORT, MPI_SUM, MPI_COMM_WORLD) >= 0 ||
        ddl_allreduce_mpi(options, f.data(), 1, MPI_FLOAT, MPI_BAND, MPI_COMM_WORLD) >= 0)
        failures++;
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        std::printf("PowerAI MPI: %d ranks, %d failures\n", size, total);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return total ? 1 : 0;
}
