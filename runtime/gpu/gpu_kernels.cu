/* SPDX-License-Identifier: Apache-2.0 */
// Device reduction kernels: one template per (type, op), each thread combining
// 16-byte packs of every source when all pointers allow it, element by element
// for the tail.  Memory-bound: the loads of G sources and one store per pack.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "gpu_kernels.h"
#include "gpu_launch.h"

namespace {

struct Sources {
    const void *p[DDL_GPU_MAX_SRCS];
};

// Arithmetic per storage type.  Signed integers add and multiply as their
// unsigned twins so that overflow wraps, as on the host.
template <typename T, typename U> struct Native {
    __device__ static T sum(T a, T b) { return (T)((U)a + (U)b); }
    __device__ static T prod(T a, T b) { return (T)((U)a * (U)b); }
    __device__ static T min(T a, T b) { return b < a ? b : a; }
    __device__ static T max(T a, T b) { return b > a ? b : a; }
};

template <typename T> struct Avg {
    __device__ static T div(T s, int d) { return (T)(s / (T)d); }
};
template <> struct Avg<int8_t> {
    __device__ static int8_t div(int8_t s, int d) { return (int8_t)floor_div(s, d); }
    __device__ static long long floor_div(long long s, long long d) { return s / d - (s % d != 0 && s < 0); }
};
template <> struct Avg<int32_t> {
    __device__ static int32_t div(int32_t s, int d) { return (int32_t)Avg<int8_t>::floor_div(s, d); }
};
template <> struct Avg<int64_t> {
    __device__ static int64_t div(int64_t s, int d) { return s / d - (s % d != 0 && s < 0); }
};
template <> struct Avg<uint8_t> {
    __device__ static uint8_t div(uint8_t s, int d) { return (uint8_t)((unsigned)s / (unsigned)d); }
};

// 16-bit floats, stored as uint16_t: widen, operate, round to nearest even.
struct F16 {
    __device__ static float in(uint16_t x) { return __half2float(__ushort_as_half(x)); }
    __device__ static uint16_t out(float f) { return __half_as_ushort(__float2half_rn(f)); }
};
struct BF16 {
    __device__ static float in(uint16_t x) { return __bfloat162float(__ushort_as_bfloat16(x)); }
    __device__ static uint16_t out(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
};
template <typename H> struct Half {
    __device__ static uint16_t sum(uint16_t a, uint16_t b) { return H::out(H::in(a) + H::in(b)); }
    __device__ static uint16_t prod(uint16_t a, uint16_t b) { return H::out(H::in(a) * H::in(b)); }
    __device__ static uint16_t min(uint16_t a, uint16_t b)
    {
        float x = H::in(a), y = H::in(b);
        return H::out(y < x ? y : x);
    }
    __device__ static uint16_t max(uint16_t a, uint16_t b)
    {
        float x = H::in(a), y = H::in(b);
        return H::out(y > x ? y : x);
    }
    __device__ static uint16_t div(uint16_t s, int d) { return H::out(H::in(s) / (float)d); }
};

enum Op { SUM, PROD, MIN, MAX };

template <typename T, typename A, Op O> __device__ T apply(T a, T b)
{
    switch (O) {
    case SUM: return A::sum(a, b);
    case PROD: return A::prod(a, b);
    case MIN: return A::min(a, b);
    default: return A::max(a, b);
    }
}

template <typename T, typename A> struct Divide {
    __device__ static T run(T s, int d) { return Avg<T>::div(s, d); }
};
template <typename H> struct Divide<uint16_t, Half<H>> {
    __device__ static uint16_t run(uint16_t s, int d) { return Half<H>::div(s, d); }
};

template <typename T, typename A, Op O>
__device__ T combine_at(const Sources &s, int nsrc, size_t i, int divisor)
{
    T acc = static_cast<const T *>(s.p[0])[i];
    for (int k = 1; k < nsrc; k++)
        acc = apply<T, A, O>(acc, static_cast<const T *>(s.p[k])[i]);
    return divisor > 1 ? Divide<T, A>::run(acc, divisor) : acc;
}

constexpr int PACK = 16;

template <typename T> union Pack {
    uint4 raw;
    T v[PACK / sizeof(T)];
};

template <typename T, typename A, Op O>
__global__ void reduce_kernel(T *dst, Sources s, int nsrc, size_t n, int divisor, int packed)
{
    constexpr int V = PACK / sizeof(T);
    size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x, stride = (size_t)gridDim.x * blockDim.x;
    size_t npacks = packed ? n / V : 0;
    for (size_t p = tid; p < npacks; p += stride) {
        Pack<T> acc, b;
        acc.raw = static_cast<const uint4 *>(s.p[0])[p];
        for (int k = 1; k < nsrc; k++) {
            b.raw = static_cast<const uint4 *>(s.p[k])[p];
#pragma unroll
            for (int j = 0; j < V; j++)
                acc.v[j] = apply<T, A, O>(acc.v[j], b.v[j]);
        }
        if (divisor > 1)
#pragma unroll
            for (int j = 0; j < V; j++)
                acc.v[j] = Divide<T, A>::run(acc.v[j], divisor);
        reinterpret_cast<uint4 *>(dst)[p] = acc.raw;
    }
    for (size_t i = npacks * V + tid; i < n; i += stride)
        dst[i] = combine_at<T, A, O>(s, nsrc, i, divisor);
}

template <typename T, typename A, Op O>
cudaError_t start(unsigned blocks, unsigned threads, cudaStream_t st, T *d, const Sources &s, int nsrc, size_t n,
                  int div, int packed)
{
    auto kernel = reduce_kernel<T, A, O>;
    return DDL_LAUNCH(blocks, threads, st, kernel, d, s, nsrc, n, div, packed);
}

template <typename T, typename A>
cudaError_t launch(void *dst, const Sources &devs, int nsrc, size_t n, ddl_redop_t op, int divisor, cudaStream_t st)
{
    Sources s;
    T *d = static_cast<T *>(DDL_DEVICE_VIEW(dst, n * sizeof(T)));
    int reachable = d != nullptr;
    for (int k = 0; k < nsrc; k++)
        reachable &= (s.p[k] = DDL_DEVICE_VIEW(devs.p[k], n * sizeof(T))) != nullptr;
    if (!reachable)
        return cudaErrorIllegalAddress; // only under the emulation: a GPU faults in the kernel
    int packed = reinterpret_cast<uintptr_t>(d) % PACK == 0;
    for (int k = 0; k < nsrc; k++)
        packed &= reinterpret_cast<uintptr_t>(s.p[k]) % PACK == 0;
    size_t work = packed ? n / (PACK / sizeof(T)) + PACK : n;
    const unsigned threads = 512;
    size_t blocks = (work + threads - 1) / threads;
    if (blocks > 4096)
        blocks = 4096; // grid-stride beyond: enough to fill any current GPU
    if (blocks == 0)
        blocks = 1;
    unsigned b = (unsigned)blocks;
    int div = op == DDL_REDOP_AVG ? divisor : 1;
    switch (op) {
    case DDL_REDOP_PROD: return start<T, A, PROD>(b, threads, st, d, s, nsrc, n, div, packed);
    case DDL_REDOP_MIN: return start<T, A, MIN>(b, threads, st, d, s, nsrc, n, div, packed);
    case DDL_REDOP_MAX: return start<T, A, MAX>(b, threads, st, d, s, nsrc, n, div, packed);
    default: return start<T, A, SUM>(b, threads, st, d, s, nsrc, n, div, packed);
    }
}

} // namespace

extern "C" cudaError_t ddl_gpu_reduce(void *dst, const void *const *srcs, int nsrc, size_t n, ddl_dtype_t dtype,
                                      ddl_redop_t op, int divisor, cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    if (nsrc < 1 || nsrc > DDL_GPU_MAX_SRCS)
        return cudaErrorInvalidValue;
    Sources s;
    for (int k = 0; k < nsrc; k++)
        s.p[k] = srcs[k];
    switch (dtype) {
    case DDL_DTYPE_F32: return launch<float, Native<float, float>>(dst, s, nsrc, n, op, divisor, stream);
    case DDL_DTYPE_F64: return launch<double, Native<double, double>>(dst, s, nsrc, n, op, divisor, stream);
    case DDL_DTYPE_F16: return launch<uint16_t, Half<F16>>(dst, s, nsrc, n, op, divisor, stream);
    case DDL_DTYPE_BF16: return launch<uint16_t, Half<BF16>>(dst, s, nsrc, n, op, divisor, stream);
    case DDL_DTYPE_I8: return launch<int8_t, Native<int8_t, uint8_t>>(dst, s, nsrc, n, op, divisor, stream);
    case DDL_DTYPE_U8: return launch<uint8_t, Native<uint8_t, uint8_t>>(dst, s, nsrc, n, op, divisor, stream);
    case DDL_DTYPE_I32: return launch<int32_t, Native<int32_t, uint32_t>>(dst, s, nsrc, n, op, divisor, stream);
    case DDL_DTYPE_U32: return launch<uint32_t, Native<uint32_t, uint32_t>>(dst, s, nsrc, n, op, divisor, stream);
    case DDL_DTYPE_I64: return launch<int64_t, Native<int64_t, uint64_t>>(dst, s, nsrc, n, op, divisor, stream);
    case DDL_DTYPE_U64: return launch<uint64_t, Native<uint64_t, uint64_t>>(dst, s, nsrc, n, op, divisor, stream);
    default: return cudaErrorInvalidValue;
    }
}
