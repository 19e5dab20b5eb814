//===- FakeCublas.cpp - A counting fake of libcublas.so.13 ----------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The cuBLAS entry points libtprt uses, counted; a GEMM checks its handle and
// that every matrix it would read or write lies in device memory (the fake
// driver's allocations), and computes nothing. See FakeCuda.h.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"

#include <cublas_v2.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {

std::mutex mutex;
std::set<const void *> handles;
/// Each handle's stream (cublasSetStream): a GEMM on a capturing stream is
/// recorded in the capture.
std::map<const void *, const void *> streams;

bool isHandle(cublasHandle_t handle) {
  std::lock_guard<std::mutex> lock(mutex);
  return handles.count(handle) != 0;
}

cublasStatus_t fail(const char *call, cublasStatus_t status) {
  tprtFakeCount((std::string("error.") + call).c_str(), 1);
  return status;
}

size_t elementSize(cudaDataType type) {
  switch (type) {
  case CUDA_R_32F:
    return 4;
  case CUDA_R_16F:
  case CUDA_R_16BF:
    return 2;
  case CUDA_R_64F:
    return 8;
  default:
    return 0;
  }
}

/// Whether a column-major `rows` x `cols` matrix with leading dimension `ld`
/// (and `batch` of them `stride` elements apart) lies in device memory; its
/// extent is added to `ranges`.
bool inDevice(const void *ptr, cudaDataType type, int rows, int cols, int ld,
              long long stride, int batch, std::vector<FakeRange> &ranges) {
  size_t size = elementSize(type);
  if (!size || ld < rows || ld < 1 || rows < 0 || cols < 0 || batch < 0)
    return false;
  if (!rows || !cols || !batch)
    return true;
  size_t last = static_cast<size_t>(ld) * static_cast<size_t>(cols - 1) +
                static_cast<size_t>(rows) +
                static_cast<size_t>(stride) * static_cast<size_t>(batch - 1);
  ranges.push_back({reinterpret_cast<uintptr_t>(ptr), last * size});
  return tprtFakeIsDevice(reinterpret_cast<uintptr_t>(ptr), last * size) != 0;
}

/// The name of a compute type cuBLAS takes with matrices of `type` (f32
/// ones may compute fast in TF32, bf16 or f16; f16 and bf16 ones in f32),
/// or null.
const char *computeName(cublasComputeType_t compute, cudaDataType type) {
  if (type == CUDA_R_32F)
    switch (compute) {
    case CUBLAS_COMPUTE_32F:
      return "32F";
    case CUBLAS_COMPUTE_32F_FAST_TF32:
      return "32F_FAST_TF32";
    case CUBLAS_COMPUTE_32F_FAST_16BF:
      return "32F_FAST_16BF";
    case CUBLAS_COMPUTE_32F_FAST_16F:
      return "32F_FAST_16F";
    default:
      return nullptr;
    }
  if (type == CUDA_R_16F || type == CUDA_R_16BF)
    return compute == CUBLAS_COMPUTE_32F ? "32F" : nullptr;
  if (type == CUDA_R_64F)
    return compute == CUBLAS_COMPUTE_64F ? "64F" : nullptr;
  return nullptr;
}

/// The checks of a GEMM (batched when batch > 1): its handle, its
/// matrices in device memory, its compute type.
cublasStatus_t gemm(const char *call, cublasHandle_t handle,
                    cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                    int k, const void *alpha, const void *a, cudaDataType at,
                    int lda, long long sa, const void *b, cudaDataType bt,
                    int ldb, long long sb, const void *beta, void *c,
                    cudaDataType ct, int ldc, long long sc, int batch,
                    cublasComputeType_t compute) {
  tprtFakeCount(call, 1);
  tprtFakeCount("gemm.matrices", batch);
  if (!isHandle(handle))
    return fail(call, CUBLAS_STATUS_NOT_INITIALIZED);
  if (!alpha || !beta || m < 0 || n < 0 || k < 0)
    return fail(call, CUBLAS_STATUS_INVALID_VALUE);
  // Each call's compute type, counted by name (gemm.compute.32F_FAST_TF32).
  const char *computeType = computeName(compute, at);
  if (!computeType || at != bt || at != ct)
    return fail(call, CUBLAS_STATUS_NOT_SUPPORTED);
  tprtFakeCount((std::string("gemm.compute.") + computeType).c_str(), 1);
  bool transA = ta != CUBLAS_OP_N, transB = tb != CUBLAS_OP_N;
  std::vector<FakeRange> ranges;
  if (!inDevice(a, at, transA ? k : m, transA ? m : k, lda, sa, batch,
                ranges) ||
      !inDevice(b, bt, transB ? n : k, transB ? k : n, ldb, sb, batch,
                ranges) ||
      !inDevice(c, ct, m, n, ldc, sc, batch, ranges))
    return fail(call, CUBLAS_STATUS_INVALID_VALUE);
  const void *stream = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    stream = streams[handle];
  }
  if (const char *refuse = std::getenv("TPRT_FAKE_CUBLAS_REFUSE_CAPTURE");
      refuse && std::string(refuse) == "1" && tprtFakeCapturing(stream))
    return fail(call, CUBLAS_STATUS_NOT_SUPPORTED);
  tprtFakeCapture(stream, call, ranges.data(), static_cast<int>(ranges.size()));
  return CUBLAS_STATUS_SUCCESS;
}

} // namespace

extern "C" {

cublasStatus_t cublasGetProperty(libraryPropertyType type, int *value) {
  *value = type == MAJOR_VERSION ? 13 : 0;
  return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusName(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  default:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  }
}

const char *cublasGetStatusString(cublasStatus_t) {
  return "reported by the counting fake of cuBLAS";
}

cublasStatus_t cublasCreate(cublasHandle_t *handle) {
  tprtFakeCount("cublasCreate", 1);
  auto *made = new int(0);
  std::lock_guard<std::mutex> lock(mutex);
  handles.insert(made);
  *handle = reinterpret_cast<cublasHandle_t>(made);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  tprtFakeCount("cublasDestroy", 1);
  {
    std::lock_guard<std::mutex> lock(mutex);
    streams.erase(handle);
    if (!handles.erase(handle))
      handle = nullptr;
  }
  if (!handle)
    return fail("cublasDestroy", CUBLAS_STATUS_NOT_INITIALIZED);
  delete reinterpret_cast<int *>(handle);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  tprtFakeCount("cublasSetStream", 1);
  if (!isHandle(handle))
    return fail("cublasSetStream", CUBLAS_STATUS_NOT_INITIALIZED);
  std::lock_guard<std::mutex> lock(mutex);
  streams[handle] = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace(cublasHandle_t handle, void *workspace,
                                  size_t bytes) {
  tprtFakeCount("cublasSetWorkspace", 1);
  if (!isHandle(handle))
    return fail("cublasSetWorkspace", CUBLAS_STATUS_NOT_INITIALIZED);
  if (bytes && !tprtFakeIsDevice(reinterpret_cast<uintptr_t>(workspace), bytes))
    return fail("cublasSetWorkspace", CUBLAS_STATUS_INVALID_VALUE);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t) {
  tprtFakeCount("cublasSetMathMode", 1);
  return isHandle(handle)
             ? CUBLAS_STATUS_SUCCESS
             : fail("cublasSetMathMode", CUBLAS_STATUS_NOT_INITIALIZED);
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t ta,
                            cublasOperation_t tb, int m, int n, int k,
                            const void *alpha, const void *a, cudaDataType at,
                            int lda, const void *b, cudaDataType bt, int ldb,
                            const void *beta, void *c, cudaDataType ct, int ldc,
                            cublasComputeType_t compute, cublasGemmAlgo_t) {
  return gemm("cublasGemmEx", handle, ta, tb, m, n, k, alpha, a, at, lda, 0, b,
              bt, ldb, 0, beta, c, ct, ldc, 0, 1, compute);
}

cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m,
    int n, int k, const void *alpha, const void *a, cudaDataType at, int lda,
    long long sa, const void *b, cudaDataType bt, int ldb, long long sb,
    const void *beta, void *c, cudaDataType ct, int ldc, long long sc,
    int batch, cublasComputeType_t compute, cublasGemmAlgo_t) {
  return gemm("cublasGemmStridedBatchedEx", handle, ta, tb, m, n, k, alpha, a,
              at, lda, sa, b, bt, ldb, sb, beta, c, ct, ldc, sc, batch,
              compute);
}

/// A batch through pointer arrays: the fake runs no kernel (the runtime's
/// tprt_gemm_pointers wrote nothing here), so it checks that the three
/// arrays lie in device memory, not the matrices they point to.
cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t,
                                   cublasOperation_t, int m, int n, int k,
                                   const void *alpha, const void *const a[],
                                   cudaDataType at, int, const void *const b[],
                                   cudaDataType bt, int, const void *beta,
                                   void *const c[], cudaDataType ct, int,
                                   int batch, cublasComputeType_t compute,
                                   cublasGemmAlgo_t) {
  const char *call = "cublasGemmBatchedEx";
  tprtFakeCount(call, 1);
  tprtFakeCount("gemm.matrices", batch);
  if (!isHandle(handle))
    return fail(call, CUBLAS_STATUS_NOT_INITIALIZED);
  if (!alpha || !beta || m < 0 || n < 0 || k < 0 || batch < 0)
    return fail(call, CUBLAS_STATUS_INVALID_VALUE);
  const char *computeType = computeName(compute, at);
  if (!computeType || at != bt || at != ct)
    return fail(call, CUBLAS_STATUS_NOT_SUPPORTED);
  tprtFakeCount((std::string("gemm.compute.") + computeType).c_str(), 1);
  std::vector<FakeRange> ranges;
  size_t bytes = static_cast<size_t>(batch) * sizeof(void *);
  for (const void *array :
       {static_cast<const void *>(a), static_cast<const void *>(b),
        static_cast<const void *>(c)}) {
    ranges.push_back({reinterpret_cast<uintptr_t>(array), bytes});
    if (batch && !tprtFakeIsDevice(reinterpret_cast<uintptr_t>(array), bytes))
      return fail(call, CUBLAS_STATUS_INVALID_VALUE);
  }
  const void *stream = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    stream = streams[handle];
  }
  tprtFakeCapture(stream, call, ranges.data(), static_cast<int>(ranges.size()));
  return CUBLAS_STATUS_SUCCESS;
}

} // extern "C"
