//===- RuntimeKernels.cu - The runtime's own GPU kernels ------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The kernels the runtime itself launches, compiled by nvcc into a fatbin
// (sm_80, sm_90 and compute_90 PTX for later GPUs) embedded in libtprt and
// loaded per rank the first time one is needed (CudaRank.cpp's
// runtimeKernels()); the runtime itself stays free of nvcc-compiled host
// code:
// - the `device` backend's reduction of its group members' buffers, all in
//   the one context every rank of that backend shares (DeviceWorld.cpp);
// - the pointer arrays of a batched GEMM whose batch has two levels that no
//   single stride spans (CudaRank.cpp).
//
// tprt_gemm_pointers(a, b, c, sa0, sa1, sb0, sb1, sc0, sc1, batch1, count,
// out): for every entry i < count of a batch0 x batch1 batch (i = i0 *
// batch1 + i1), out[i], out[count + i] and out[2 * count + i] are a, b and
// c plus i0 * s0 + i1 * s1 bytes (their own strides each).
//
// tprt_reduce_<op>_<dtype>(sources, count, srcPitch, dst, dstPitch, width,
// rows): for every row r < rows and column c < width,
//   dst[r * dstPitch + c] = op over j < count of sources[j][r * srcPitch + c]
// (pitches in elements), reduced in member order j = 0, 1, ... so that every
// rank computes the same bits; f16 and bf16 accumulate in f32, as on the CPU.
//
//===----------------------------------------------------------------------===//

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

/// Must match kMaxMembers in DeviceWorld.cpp.
constexpr int kMaxMembers = 64;

struct Sources {
  const void *ptr[kMaxMembers];
};

template <typename T> struct Accumulate {
  using type = T;
  static __device__ type load(T v) { return v; }
  static __device__ T store(type v) { return v; }
};
template <> struct Accumulate<__half> {
  using type = float;
  static __device__ float load(__half v) { return __half2float(v); }
  static __device__ __half store(float v) { return __float2half_rn(v); }
};
template <> struct Accumulate<__nv_bfloat16> {
  using type = float;
  static __device__ float load(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __nv_bfloat16 store(float v) {
    return __float2bfloat16_rn(v);
  }
};

struct Sum {
  template <typename A> static __device__ A apply(A a, A b) { return a + b; }
};
struct Prod {
  template <typename A> static __device__ A apply(A a, A b) { return a * b; }
};
struct Max {
  template <typename A> static __device__ A apply(A a, A b) {
    return b > a ? b : a;
  }
};
struct Min {
  template <typename A> static __device__ A apply(A a, A b) {
    return b < a ? b : a;
  }
};

template <typename T, typename Op>
__device__ void reduceRows(const Sources &sources, int32_t count,
                           int64_t srcPitch, T *dst, int64_t dstPitch,
                           int64_t width, int64_t rows) {
  using A = typename Accumulate<T>::type;
  int64_t total = width * rows;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < total; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t row = i / width, column = i - row * width;
    int64_t at = row * srcPitch + column;
    A acc = Accumulate<T>::load(static_cast<const T *>(sources.ptr[0])[at]);
    for (int32_t j = 1; j < count; ++j)
      acc = Op::apply(
          acc, Accumulate<T>::load(static_cast<const T *>(sources.ptr[j])[at]));
    dst[row * dstPitch + column] = Accumulate<T>::store(acc);
  }
}

#define TPRT_REDUCE_KERNEL(OPNAME, OP, TYNAME, TY)                             \
  extern "C" __global__ void tprt_reduce_##OPNAME##_##TYNAME(                  \
      Sources sources, int32_t count, int64_t srcPitch, TY *dst,               \
      int64_t dstPitch, int64_t width, int64_t rows) {                         \
    reduceRows<TY, OP>(sources, count, srcPitch, dst, dstPitch, width, rows);  \
  }

#define TPRT_REDUCE_KERNELS(TYNAME, TY)                                        \
  TPRT_REDUCE_KERNEL(sum, Sum, TYNAME, TY)                                     \
  TPRT_REDUCE_KERNEL(max, Max, TYNAME, TY)                                     \
  TPRT_REDUCE_KERNEL(min, Min, TYNAME, TY)                                     \
  TPRT_REDUCE_KERNEL(prod, Prod, TYNAME, TY)

TPRT_REDUCE_KERNELS(f32, float)
TPRT_REDUCE_KERNELS(f64, double)
TPRT_REDUCE_KERNELS(f16, __half)
TPRT_REDUCE_KERNELS(bf16, __nv_bfloat16)
TPRT_REDUCE_KERNELS(i32, int32_t)
TPRT_REDUCE_KERNELS(i64, int64_t)

extern "C" __global__ void
tprt_gemm_pointers(const char *a, const char *b, char *c, int64_t sa0,
                   int64_t sa1, int64_t sb0, int64_t sb1, int64_t sc0,
                   int64_t sc1, int64_t batch1, int64_t count, void **out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < count; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t i0 = i / batch1, i1 = i - i0 * batch1;
    out[i] = const_cast<char *>(a + i0 * sa0 + i1 * sa1);
    out[count + i] = const_cast<char *>(b + i0 * sb0 + i1 * sb1);
    out[2 * count + i] = c + i0 * sc0 + i1 * sc1;
  }
}
