//===- CudaLibraries.h - CUDA libraries, opened late -----------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// libtprt links no CUDA library: the driver (libcuda.so.1), cuBLAS
// (libcublas.so.13) and NCCL (libnccl.so.2) are opened with dlopen the first
// time something asks for them, so that the same libtprt loads and runs CPU
// programs on machines without CUDA. Each library is a table of the entry
// points the runtime calls, typed from the CUDA 13 headers (the versioned
// symbol a header macro names, e.g. cuMemAlloc_v2 for cuMemAlloc). A missing
// library or symbol is a TPRT_UNAVAILABLE status that names it; every failing
// call becomes a status naming the call and the library's error string.
//
// Without the CUDA headers at build time (TPRT_HAS_CUDA_HEADERS undefined),
// every loader reports that this libtprt was built without CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_SRC_CUDA_CUDALIBRARIES_H
#define TPRT_SRC_CUDA_CUDALIBRARIES_H

#include "tprt/tprt.h"

#ifdef TPRT_HAS_CUDA_HEADERS
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <nccl.h>
#endif

#include <string>

namespace tprt::cuda {

#ifdef TPRT_HAS_CUDA_HEADERS

/// The driver API entry points the runtime uses.
struct Driver {
#define TPRT_CUDA_DRIVER_FUNCTIONS(X)                                          \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDeviceTotalMem)                                                          \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease)                                                 \
  X(cuCtxSetCurrent)                                                           \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamQuery)                                                             \
  X(cuStreamWaitEvent)                                                         \
  X(cuEventCreate)                                                             \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventElapsedTime)                                                        \
  X(cuEventDestroy)                                                            \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemAllocAsync)                                                           \
  X(cuMemFreeAsync)                                                            \
  X(cuMemcpy2DAsync)                                                           \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoHAsync)                                                         \
  X(cuMemcpyDtoDAsync)                                                         \
  X(cuMemsetD8Async)                                                           \
  X(cuModuleLoadData)                                                          \
  X(cuModuleGetFunction)                                                       \
  X(cuModuleUnload)                                                            \
  X(cuLaunchKernel)                                                            \
  X(cuStreamBeginCapture)                                                      \
  X(cuStreamEndCapture)                                                        \
  X(cuGraphInstantiate)                                                        \
  X(cuGraphExecUpdate)                                                         \
  X(cuGraphLaunch)                                                             \
  X(cuGraphExecDestroy)                                                        \
  X(cuGraphDestroy)
#define TPRT_CUDA_MEMBER(name) decltype(&::name) name = nullptr;
  TPRT_CUDA_DRIVER_FUNCTIONS(TPRT_CUDA_MEMBER)
  int version = 0; // cuDriverGetVersion, e.g. 13000

  /// A failed call as a status: "<call> failed: CUDA_ERROR_X (text)".
  tprt_status error(CUresult result, const std::string &call) const;
};

/// The cuBLAS entry points the runtime uses.
struct Cublas {
#define TPRT_CUBLAS_FUNCTIONS(X)                                               \
  X(cublasGetProperty)                                                         \
  X(cublasGetStatusName)                                                       \
  X(cublasGetStatusString)                                                     \
  X(cublasCreate)                                                              \
  X(cublasDestroy)                                                             \
  X(cublasSetStream)                                                           \
  X(cublasSetWorkspace)                                                        \
  X(cublasSetMathMode)
  TPRT_CUBLAS_FUNCTIONS(TPRT_CUDA_MEMBER)
  // C++ overloads these three (a deprecated form with a cudaDataType compute
  // type): the C entry points, named by their type.
  using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                                      cublasOperation_t, int, int, int,
                                      const void *, const void *, cudaDataType,
                                      int, const void *, cudaDataType, int,
                                      const void *, void *, cudaDataType, int,
                                      cublasComputeType_t, cublasGemmAlgo_t);
  using GemmStridedBatchedExFn = cublasStatus_t (*)(
      cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
      const void *, const void *, cudaDataType, int, long long, const void *,
      cudaDataType, int, long long, const void *, void *, cudaDataType, int,
      long long, int, cublasComputeType_t, cublasGemmAlgo_t);
  using GemmBatchedExFn = cublasStatus_t (*)(
      cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
      const void *, const void *const[], cudaDataType, int, const void *const[],
      cudaDataType, int, const void *, void *const[], cudaDataType, int, int,
      cublasComputeType_t, cublasGemmAlgo_t);
  GemmExFn cublasGemmEx = nullptr;
  GemmStridedBatchedExFn cublasGemmStridedBatchedEx = nullptr;
  GemmBatchedExFn cublasGemmBatchedEx = nullptr;
  int version = 0; // major * 10000 + minor * 100 + patch

  tprt_status error(cublasStatus_t status, const std::string &call) const;
};

/// The cuBLASLt entry points the runtime uses (GEMMs with an epilogue).
struct CublasLt {
#define TPRT_CUBLASLT_FUNCTIONS(X)                                             \
  X(cublasLtGetStatusName)                                                     \
  X(cublasLtGetStatusString)                                                   \
  X(cublasLtCreate)                                                            \
  X(cublasLtDestroy)                                                           \
  X(cublasLtMatmulDescCreate)                                                  \
  X(cublasLtMatmulDescDestroy)                                                 \
  X(cublasLtMatmulDescSetAttribute)                                            \
  X(cublasLtMatrixLayoutCreate)                                                \
  X(cublasLtMatrixLayoutDestroy)                                               \
  X(cublasLtMatrixLayoutSetAttribute)                                          \
  X(cublasLtMatmulPreferenceCreate)                                            \
  X(cublasLtMatmulPreferenceDestroy)                                           \
  X(cublasLtMatmulPreferenceSetAttribute)                                      \
  X(cublasLtMatmulAlgoGetHeuristic)                                            \
  X(cublasLtMatmul)
  TPRT_CUBLASLT_FUNCTIONS(TPRT_CUDA_MEMBER)
  tprt_status error(cublasStatus_t status, const std::string &call) const;
};

/// The NCCL entry points the runtime uses.
struct Nccl {
#define TPRT_NCCL_FUNCTIONS(X)                                                 \
  X(ncclGetVersion)                                                            \
  X(ncclGetErrorString)                                                        \
  X(ncclGetUniqueId)                                                           \
  X(ncclCommInitRank)                                                          \
  X(ncclCommInitAll)                                                           \
  X(ncclCommInitRankConfig)                                                    \
  X(ncclCommDestroy)                                                           \
  X(ncclCommAbort)                                                             \
  X(ncclCommGetAsyncError)                                                     \
  X(ncclGroupStart)                                                            \
  X(ncclGroupEnd)                                                              \
  X(ncclAllReduce)                                                             \
  X(ncclAllGather)                                                             \
  X(ncclReduceScatter)                                                         \
  X(ncclSend)                                                                  \
  X(ncclRecv)
  TPRT_NCCL_FUNCTIONS(TPRT_CUDA_MEMBER)
#undef TPRT_CUDA_MEMBER
  int version = 0; // ncclGetVersion, e.g. 22809

  tprt_status error(ncclResult_t result, const std::string &call) const;
};

#else

struct Driver {};
struct Cublas {};
struct CublasLt {};
struct Nccl {};

#endif // TPRT_HAS_CUDA_HEADERS

/// The driver, initialized (cuInit) and with its version read; loaded once
/// per process, thread-safe. TPRT_UNAVAILABLE "no CUDA driver found: ..."
/// when libcuda.so.1 cannot be opened.
tprt_status loadDriver(const Driver **driver);
/// cuBLAS, with its version read (needs no GPU); loaded once per process.
tprt_status loadCublas(const Cublas **cublas);
/// cuBLASLt (libcublasLt.so.13), loaded once per process.
tprt_status loadCublasLt(const CublasLt **cublasLt);
/// NCCL, with its version read (needs no GPU); loaded once per process.
tprt_status loadNccl(const Nccl **nccl);

} // namespace tprt::cuda

#endif // TPRT_SRC_CUDA_CUDALIBRARIES_H
