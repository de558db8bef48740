/* SPDX-License-Identifier: Apache-2.0 */
/* A long stream of large allreduces for the failure test: each rank writes its
 * pid to $DDL_TEST_PIDDIR/rank.N.pid, and on an error prints the runtime's
 * message and aborts the job.  DDL_TEST_ASYNC=N: N nonblocking requests in
 * flight at a time; on a failure every one is waited for and its message
 * printed ("request K: ..."), and the job is aborted once the other ranks
 * have had the time to do the same.  DDL_TEST_DEVICE=1 (a build with CUDA): the
 * buffer is device memory (the device path's transports, NCCL included). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef DDL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "ddl.h"
#include "testcomm.h"

/* An owner's buffer: the communicator's heap, or device memory. */
static float *allocate(ddl_comm_t *comm, const ddl_comm_info_t *info, size_t bytes)
{
    void *p = NULL;
    const char *device = getenv("DDL_TEST_DEVICE");
    if (device && atoi(device)) {
#ifdef DDL_HAVE_CUDA
        int devices = 0;
        if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0 &&
            cudaSetDevice((info->node * info->gpus_per_node + info->gpu) % devices) == cudaSuccess &&
            cudaMalloc(&p, bytes) == cudaSuccess && cudaMemset(p, 0, bytes) == cudaSuccess &&
            cudaDeviceSynchronize() == cudaSuccess)
            return p;
#endif
        fprintf(stderr, "rank %d: DDL_TEST_DEVICE=1: no device memory here\n", info->rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (ddl_malloc(comm, bytes, &p) != DDL_OK)
        MPI_Abort(MPI_COMM_WORLD, 1);
    return p;
}

/* After this rank's failure: the other survivors' waits end within
 * DDL_TIMEOUT (and a short grace), so let them report before the abort ends
 * the job; whichever rank fails first, the one that waited for the stalled
 * rank still says so (run-failure.sh looks for it). */
static void abort_after_the_others(void)
{
    const char *t = getenv("DDL_TIMEOUT");
    sleep((unsigned)(t ? atoi(t) : 10) + 2);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

int main(int argc, char **argv)
{
    ddl_config_t cfg;
    ddl_comm_info_t info;
    ddl_comm_t *comm = ddl_test_comm(&argc, &argv, &cfg, &info);
    const char *dir = getenv("DDL_TEST_PIDDIR");
    if (dir) {
        char path[512];
        snprintf(path, sizeof(path), "%s/rank.%d.pid", dir, info.rank);
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "%d\n", (int)getpid());
            fclose(f);
        }
    }
    const char *async = getenv("DDL_TEST_ASYNC");
    int inflight = async ? atoi(async) : 0;
    if (inflight > 8)
        inflight = 8;
    size_t count = 8u << 20;
    float *buf = info.role == DDL_ROLE_OWNER ? allocate(comm, &info, count * sizeof(float)) : NULL;
    double end = MPI_Wtime() + 120;
    while (inflight > 0 && MPI_Wtime() < end) {
        ddl_request_t *req[8];
        size_t part = count / (size_t)inflight;
        for (int k = 0; k < inflight; k++)
            if (ddl_iallreduce(DDL_IN_PLACE, buf ? buf + (size_t)k * part : NULL, (int64_t)part, DDL_DTYPE_F32,
                               DDL_REDOP_SUM, comm, &req[k]) != DDL_OK) {
                fprintf(stderr, "rank %d: ddl_iallreduce: %s\n", info.rank, ddl_last_error());
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        int failed = 0;
        for (int k = 0; k < inflight; k++) {
            ddl_status_t st = ddl_wait(req[k]);
            if (st != DDL_OK) {
                fprintf(stderr, "rank %d: request %d: ddl_wait: %s: %s\n", info.rank, k, ddl_status_string(st),
                        ddl_last_error());
                failed = 1;
            }
            ddl_request_free(req[k]);
        }
        if (failed)
            abort_after_the_others();
    }
    while (MPI_Wtime() < end) {
        ddl_status_t st = ddl_allreduce(DDL_IN_PLACE, buf, (int64_t)count, DDL_DTYPE_F32, DDL_REDOP_SUM, comm);
        if (st != DDL_OK) {
            fprintf(stderr, "rank %d: ddl_allreduce: %s: %s\n", info.rank, ddl_status_string(st), ddl_last_error());
            abort_after_the_others();
        }
    }
    ddl_comm_destroy(comm);
    MPI_Finalize();
    return 0;
}
