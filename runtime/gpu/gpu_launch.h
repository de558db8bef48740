/* SPDX-License-Identifier: Apache-2.0 */
// How gpu_kernels.cu starts a kernel and reaches device memory, so that one
// source serves both builds:
//  - nvcc: DDL_LAUNCH is <<<grid, block, 0, stream>>>, and device pointers are
//    used as they are.
//  - the CUDA emulation (configure --enable-cuda-emulation; tests/cuda-emu):
//    the host C++ compiler builds the same kernels, DDL_LAUNCH queues a host
//    loop over the grid's blocks and threads on the emulated stream, and
//    DDL_DEVICE_VIEW gives the emulator's host view of device memory (a
//    device pointer cannot be dereferenced on the host there either).
// Kernels may use threadIdx, blockIdx, blockDim and gridDim (.x), and must not
// rely on threads running concurrently (no __syncthreads, no shared memory).
#ifndef DDL_GPU_LAUNCH_H
#define DDL_GPU_LAUNCH_H

#include <cuda_runtime_api.h>

#ifdef DDL_CUDA_EMULATION
#include <cstdlib>
#include <new>

#ifndef __device__
#define __device__
#endif
#ifndef __global__
#define __global__
#endif

struct ddl_emu_index {
    unsigned x, y, z;
};
inline thread_local ddl_emu_index threadIdx, blockIdx, blockDim, gridDim;

extern "C" cudaError_t ddl_emu_launch(cudaStream_t stream, void (*run)(void *), void *ctx, void (*destroy)(void *));
// The host view of [p, p + bytes) of device memory; NULL (and the device's
// sticky illegal-address error, as after a kernel's fault) when it is not
// inside one allocation.
extern "C" void *ddl_emu_kernel_view(const void *p, size_t bytes);

template <typename Body> cudaError_t ddl_emu_grid(unsigned grid, unsigned block, cudaStream_t stream, Body body)
{
    struct Launch {
        unsigned grid, block;
        Body body;
    };
    void *mem = std::malloc(sizeof(Launch));
    if (!mem)
        return cudaErrorMemoryAllocation;
    Launch *launch = new (mem) Launch{grid, block, body};
    auto run = [](void *p) {
        Launch *l = static_cast<Launch *>(p);
        gridDim = {l->grid, 1, 1};
        blockDim = {l->block, 1, 1};
        for (unsigned b = 0; b < l->grid; b++)
            for (unsigned t = 0; t < l->block; t++) {
                blockIdx = {b, 0, 0};
                threadIdx = {t, 0, 0};
                l->body();
            }
    };
    auto destroy = [](void *p) {
        static_cast<Launch *>(p)->~Launch();
        std::free(p);
    };
    return ddl_emu_launch(stream, run, launch, destroy);
}

#define DDL_LAUNCH(grid, block, stream, kernel, ...) ddl_emu_grid((grid), (block), (stream), [=] { kernel(__VA_ARGS__); })
#define DDL_DEVICE_VIEW(p, bytes) ddl_emu_kernel_view((p), (bytes))
#else
#define DDL_LAUNCH(grid, block, stream, kernel, ...) \
    (kernel<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__), cudaGetLastError())
#define DDL_DEVICE_VIEW(p, bytes) (p)
#endif

#endif
