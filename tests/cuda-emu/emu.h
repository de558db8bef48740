/* SPDX-License-Identifier: Apache-2.0 */
/* The emulated CUDA runtime and NCCL: shared state of memory.c (devices,
 * device memory the host cannot touch, IPC), stream.c (asynchronous streams,
 * events, kernels), runtime.c (errors, copies, the entry points) and nccl.c.
 * Built only with ./configure --enable-cuda-emulation, as a shared library
 * that libddl and the GPU tests link in place of libcudart (and that libddl
 * loads in place of libnccl.so.2).  Only the C library and the CUDA and NCCL
 * headers are used; nothing of libddl's but its host reduction kernels. */
#ifndef DDL_CUDA_EMU_H
#define DDL_CUDA_EMU_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#define EMU_MAX_DEVICES 16

/* ---- errors (runtime.c) ---------------------------------------------------- */

/* rc as this call's result: remembered as the thread's last error unless it is
 * cudaSuccess; a sticky error (a fault in device code) wins over everything. */
cudaError_t emu_return(cudaError_t rc);
/* A fault in device code: every later call fails with it, as on a GPU. */
void emu_fault(cudaError_t rc, const char *what, const void *addr);
cudaError_t emu_sticky(void);
/* Environment number with K/M/G suffixes; fallback when unset or bad. */
unsigned long long emu_env_size(const char *name, unsigned long long fallback);

/* ---- devices and memory (memory.c) ------------------------------------------ */

/* Visible devices (CUDA_VISIBLE_DEVICES over DDL_EMU_GPUS). */
int emu_device_count(void);
/* The physical index of visible ordinal `ordinal`, or -1. */
int emu_physical(int ordinal);
/* The visible ordinal of physical device `phys`, or -1 when it is hidden. */
int emu_ordinal(int phys);
/* This host thread's current device (visible ordinal). */
int emu_current(void);
const char *emu_pci_bus_id(int phys);

/* Where the bytes [p, p + n) of device memory are for the emulator's own
 * copies and kernels; NULL when they are not inside one live allocation. */
void *emu_view(const void *p, size_t n);
/* Whether p lies in the device address range (valid or not). */
int emu_is_device_address(const void *p);
/* Whether p is in a range registered with cudaHostRegister / cudaMallocHost. */
int emu_is_pinned(const void *p);
/* The physical device of device pointer p, or -1. */
int emu_device_of(const void *p);

/* ---- streams (stream.c) ----------------------------------------------------- */

typedef struct emu_stream emu_stream_t;

/* The stream a handle names, on device `phys` for the default streams. */
emu_stream_t *emu_stream(cudaStream_t s, int phys);
/* Queue fn(arg) on the stream (after the implicit waits of the legacy default
 * stream); free_arg(arg) after it ran (may be NULL). */
cudaError_t emu_enqueue(emu_stream_t *s, void (*fn)(void *), void *arg, void (*free_arg)(void *));
/* Block until everything queued on s so far ran. */
void emu_stream_drain(emu_stream_t *s);
/* Block until every stream of physical device phys drained. */
void emu_device_drain(int phys);
/* The driver's cuStreamWaitValue32 on pinned host memory (the GEQ and EQ waits). */
CUresult emu_stream_wait_value32(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags);

#endif
