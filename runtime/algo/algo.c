/* SPDX-License-Identifier: Apache-2.0 */
/* The algorithms' one-line descriptions (algo.h), which ddl-info prints: the
 * allreduce paths, the lane algorithms (from their rows) and the device
 * transports.  Uses nothing but the ids of core/choices.h. */
#include "config.h"

#include "algo.h"

static const ddl_algo_desc_t algos[] = {
    {"allreduce", DDL_ALGO_AUTO, "auto",
     "per size class, the fastest of the system MPI and the lanes (multiring when DDL_TOPOLOGY is set) as the first "
     "calls timed them (DDL_SELECT=online); DDL_SELECT=model: MPI below DDL_MPI_THRESHOLD bytes, lanes above"},
    {"allreduce", DDL_ALGO_MPI, "mpi",
     "the system MPI_Allreduce over the owners (one rank per GPU); helpers idle"},
    {"allreduce", DDL_ALGO_LANE, "lane",
     "each of the node's G*L ranks reduces its 1/(G*L) slice of the G owner buffers through "
     "shared memory, allreduces it with the same local rank on the other nodes, and writes it "
     "back into every owner buffer; pipelined in DDL_CHUNK_SIZE chunks"},
    {"lane", DDL_INTER_AUTO, "auto", "per chunk, the cheapest lane algorithm below in the alpha-beta cost model "
     "(link latency and bandwidth from the tuning file's link lines, written by ddl-tune)"},
#define DDL_INTER_ROW(ID, name, build, max_steps, cost, margin, online_min, online_max, description) \
    {"lane", DDL_INTER_##ID, name, description},
#include "inter_algos.def"
#undef DDL_INTER_ROW
    {"gpu", DDL_GPU_AUTO, "auto", "nccl when libnccl.so.2 loads on every rank, else mpi when the MPI library is "
     "CUDA-aware, else staged"},
    {"gpu", DDL_GPU_STAGED, "staged",
     "device buffers: each chunk of the reduced slice is copied to pinned host memory, goes between nodes "
     "on the lane's host schedule, and is copied back"},
    {"gpu", DDL_GPU_MPI, "mpi",
     "device buffers: each chunk goes between nodes by MPI_Iallreduce on device memory (CUDA-aware MPI; "
     "f16 and bf16 are staged, MPI has no native op for them)"},
    {"gpu", DDL_GPU_NCCL, "nccl",
     "device buffers: each chunk goes between nodes by ncclAllReduce on a communicator of this lane's "
     "ranks, one GPU per node in each (libnccl.so.2 loaded at run time)"},
};

const ddl_algo_desc_t *ddl_algo_table(size_t *count)
{
    *count = sizeof(algos) / sizeof(algos[0]);
    return algos;
}
