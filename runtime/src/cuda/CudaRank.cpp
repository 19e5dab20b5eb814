//===- CudaRank.cpp - What CUDA programs call -----------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The entry points of tp-compile --target cuda programs (tprt_rt_table, ABI
// version 2) for a rank of a GPU world: buffers from the stream-ordered
// allocator, constants uploaded, kernels of the program's image launched,
// GEMMs by cuBLAS, every one on the rank's stream. As on the CPU, a failing
// call keeps its status in the rank context and later calls return at once.
//
//===----------------------------------------------------------------------===//

#include "CudaRank.h"

#include "../Program.h"
#include "../RankContext.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstdio>
#include <optional>
#include <thread>

#ifdef TPRT_HAS_CUDA_HEADERS

using namespace tprt;
using namespace tprt::cuda;

tprt_status CudaRank::named(tprt_status status) const {
  if (!status)
    return nullptr;
  tprt_status out = error(tprt_status_code(status), "rank ", rank, " (GPU ",
                          ordinal, "): ", tprt_status_message(status));
  tprt_status_free(status);
  return out;
}

tprt_status CudaRank::check(CUresult result, const char *call) const {
  return result == CUDA_SUCCESS ? nullptr : named(cu->error(result, call));
}

tprt_status CudaRank::check(cublasStatus_t result, const char *call) const {
  return result == CUBLAS_STATUS_SUCCESS ? nullptr
                                         : named(blas->error(result, call));
}

tprt_status CudaRank::checkLt(cublasStatus_t result, const char *call) const {
  return result == CUBLAS_STATUS_SUCCESS ? nullptr
                                         : named(lt->error(result, call));
}

tprt_status CudaRank::wait(const tprt_communicator *comm) const {
  for (auto pause = std::chrono::microseconds(2);;
       pause = std::min(pause * 2, std::chrono::microseconds(200))) {
    CUresult result = cu->cuStreamQuery(stream);
    if (result != CUDA_ERROR_NOT_READY)
      return check(result, "cuStreamQuery");
    if (comm && comm->aborted())
      return error(TPRT_ABORTED, "rank ", rank, " (GPU ", ordinal,
                   "): stopped waiting for its stream: the world was aborted");
    std::this_thread::sleep_for(pause);
  }
}

tprt_status CudaRank::copy2D(const void *src, size_t srcPitch, void *dst,
                             size_t dstPitch, size_t width,
                             int64_t rows) const {
  if (!width || !rows)
    return nullptr;
  CUDA_MEMCPY2D c = {};
  c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  c.srcDevice = reinterpret_cast<CUdeviceptr>(src);
  c.srcPitch = srcPitch;
  c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.dstDevice = reinterpret_cast<CUdeviceptr>(dst);
  c.dstPitch = dstPitch;
  c.WidthInBytes = width;
  c.Height = static_cast<size_t>(rows);
  return check(cu->cuMemcpy2DAsync(&c, stream), "cuMemcpy2DAsync");
}

tprt_status CudaRank::kernel(uint64_t owner, const void *image,
                             const char *name, CUfunction *out) {
  auto loaded = modules.find({owner, image});
  if (loaded == modules.end()) {
    CUmodule module = nullptr;
    // An image for another architecture fails here, naming the call and
    // CUDA_ERROR_NO_BINARY_FOR_GPU.
    if (tprt_status s =
            check(cu->cuModuleLoadData(&module, image), "cuModuleLoadData"))
      return s;
    loaded = modules.emplace(std::make_pair(owner, image), module).first;
  }
  auto key = std::make_pair(loaded->second, std::string(name));
  auto function = functions.find(key);
  if (function == functions.end()) {
    CUfunction f = nullptr;
    if (tprt_status s = check(cu->cuModuleGetFunction(&f, loaded->second, name),
                              "cuModuleGetFunction"))
      return s;
    function = functions.emplace(key, f).first;
  }
  *out = function->second;
  return nullptr;
}

CUevent CudaRank::event() {
  if (!idleEvents.empty()) {
    CUevent e = idleEvents.back();
    idleEvents.pop_back();
    return e;
  }
  CUevent e = nullptr;
  if (tprt_status s = check(cu->cuEventCreate(&e, CU_EVENT_DEFAULT),
                            "cuEventCreate (device timing)")) {
    if (!timingError)
      timingError = s;
    else
      tprt_status_free(s);
    return nullptr;
  }
  return e;
}

CudaRank::Span CudaRank::begin(int kind) {
  Span span;
  if (!timing || timingError)
    return span;
  span.start = event();
  if (!span.start)
    return span;
  if (CUresult r = cu->cuEventRecord(span.start, stream); r != CUDA_SUCCESS) {
    timingError = check(r, "cuEventRecord (device timing)");
    idleEvents.push_back(span.start);
    return Span();
  }
  span.kind = kind;
  return span;
}

void CudaRank::end(const Span &span) {
  if (span.kind < 0)
    return;
  CUevent stop = timingError ? nullptr : event();
  if (!stop) {
    idleEvents.push_back(span.start);
    return;
  }
  if (CUresult r = cu->cuEventRecord(stop, stream); r != CUDA_SUCCESS) {
    if (!timingError)
      timingError = check(r, "cuEventRecord (device timing)");
    idleEvents.push_back(span.start);
    idleEvents.push_back(stop);
    return;
  }
  spans.push_back({span.kind, span.start, stop});
}

void CudaRank::startTiming() {
  timing = true;
  graphLaunches = 0;
  tprt_status_free(timingError);
  timingError = nullptr;
  runSpan = begin(Run);
}

void CudaRank::endRun() {
  end(runSpan);
  runSpan = Span();
}

tprt_status CudaRank::takeTiming(tprt_device_profile *profile) {
  timing = false;
  *profile = TPRT_DEVICE_PROFILE_INIT;
  tprt_status status = timingError;
  timingError = nullptr;
  profile->graph_launches = graphLaunches;
  for (const Timed &t : spans) {
    float ms = 0;
    if (!status)
      status = check(cu->cuEventElapsedTime(&ms, t.start, t.end),
                     "cuEventElapsedTime");
    double seconds = static_cast<double>(ms) * 1e-3;
    switch (t.kind) {
    case Kernel:
      profile->kernel_launches += 1;
      profile->kernel_seconds += seconds;
      break;
    case Gemm:
      profile->gemm_calls += 1;
      profile->gemm_seconds += seconds;
      break;
    case Copy:
      profile->copies += 1;
      profile->copy_seconds += seconds;
      break;
    case Run:
      profile->run_seconds += seconds;
      break;
    default:
      profile->collective_calls[t.kind] += 1;
      profile->collective_seconds[t.kind] += seconds;
      break;
    }
    idleEvents.push_back(t.start);
    idleEvents.push_back(t.end);
  }
  spans.clear();
  return status;
}

tprt_status tprt::cuda::createRank(const Driver *cu, const Cublas *blas,
                                   int64_t rank, int ordinal, CudaRank &out) {
  out.cu = cu;
  out.blas = blas;
  out.rank = rank;
  out.ordinal = ordinal;
  if (tprt_status s =
          out.check(cu->cuDeviceGet(&out.device, ordinal), "cuDeviceGet"))
    return s;
  if (tprt_status s =
          out.check(cu->cuDevicePrimaryCtxRetain(&out.context, out.device),
                    "cuDevicePrimaryCtxRetain"))
    return s;
  if (tprt_status s =
          out.check(cu->cuCtxSetCurrent(out.context), "cuCtxSetCurrent"))
    return s;
  if (tprt_status s =
          out.check(cu->cuStreamCreate(&out.stream, CU_STREAM_NON_BLOCKING),
                    "cuStreamCreate"))
    return s;
  if (tprt_status s =
          out.check(blas->cublasCreate(&out.handle), "cublasCreate"))
    return s;
  return out.check(blas->cublasSetStream(out.handle, out.stream),
                   "cublasSetStream");
}

void CudaRank::releaseGraphs() {
  for (auto &[key, slot] : graphs) {
    if (slot.exec)
      cu->cuGraphExecDestroy(slot.exec);
    for (size_t i = 0; i < slot.outputs.size(); ++i)
      if (slot.idle[i])
        cu->cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(slot.outputs[i]),
                           stream);
  }
  graphs.clear();
  outputs.clear();
}

void tprt::cuda::destroyRank(CudaRank &rank) {
  if (!rank.context)
    return;
  rank.cu->cuCtxSetCurrent(rank.context);
  rank.releaseGraphs();
  if (rank.gemmPointers)
    rank.cu->cuMemFreeAsync(rank.gemmPointers, rank.stream);
  for (auto &[key, arrays] : rank.pointerArrays)
    rank.cu->cuMemFreeAsync(arrays, rank.stream);
  if (rank.stream)
    rank.cu->cuStreamSynchronize(rank.stream);
  if (rank.handle)
    rank.blas->cublasDestroy(rank.handle);
  for (auto &[key, plan] : rank.ltPlans) {
    for (cublasLtMatrixLayout_t layout : {plan.a, plan.b, plan.c, plan.d})
      if (layout)
        rank.lt->cublasLtMatrixLayoutDestroy(layout);
    if (plan.op)
      rank.lt->cublasLtMatmulDescDestroy(plan.op);
  }
  if (rank.ltWorkspace)
    rank.cu->cuMemFree(rank.ltWorkspace);
  if (rank.ltHandle)
    rank.lt->cublasLtDestroy(rank.ltHandle);
  for (auto &[key, module] : rank.modules)
    rank.cu->cuModuleUnload(module);
  for (const CudaRank::Timed &t : rank.spans)
    rank.idleEvents.insert(rank.idleEvents.end(), {t.start, t.end});
  for (CUevent e : rank.idleEvents)
    rank.cu->cuEventDestroy(e);
  tprt_status_free(rank.timingError);
  if (rank.stream)
    rank.cu->cuStreamDestroy(rank.stream);
  rank.cu->cuDevicePrimaryCtxRelease(rank.device);
  rank = CudaRank();
}

namespace {

CudaRank &rankOf(tprt_rank_context *ctx) {
  return *static_cast<CudaRank *>(ctx->device);
}

CUdeviceptr devicePointer(const void *ptr) {
  return reinterpret_cast<CUdeviceptr>(ptr);
}

void *cudaAlloc(tprt_rank_context *ctx, int64_t bytes) {
  if (ctx->error)
    return nullptr;
  CudaRank &r = rankOf(ctx);
  if (bytes < 0) {
    fail(ctx, error(TPRT_INVALID_ARGUMENT, "rank ", r.rank,
                    ": tprt_rt_alloc of ", bytes, " bytes"));
    return nullptr;
  }
  CUdeviceptr ptr = 0;
  if (tprt_status s = r.check(
          r.cu->cuMemAllocAsync(
              &ptr, static_cast<size_t>(std::max<int64_t>(bytes, 1)), r.stream),
          "cuMemAllocAsync")) {
    fail(ctx, s);
    return nullptr;
  }
  return reinterpret_cast<void *>(ptr);
}

void cudaFree(tprt_rank_context *ctx, void *ptr) {
  if (!ptr)
    return;
  // Freed even after a failure: the buffers of a failed run are released.
  CudaRank &r = rankOf(ctx);
  CUresult result = r.cu->cuMemFreeAsync(devicePointer(ptr), r.stream);
  if (result != CUDA_SUCCESS && !ctx->error)
    fail(ctx, r.check(result, "cuMemFreeAsync"));
}

void cudaUpload(tprt_rank_context *ctx, void *dst, const void *host,
                int64_t bytes) {
  guarded(ctx, [&]() -> tprt_status {
    if (bytes <= 0)
      return nullptr;
    CudaRank &r = rankOf(ctx);
    CudaRank::Span span = r.begin(CudaRank::Copy);
    tprt_status s =
        r.check(r.cu->cuMemcpyHtoDAsync(devicePointer(dst), host,
                                        static_cast<size_t>(bytes), r.stream),
                "cuMemcpyHtoDAsync");
    r.end(span);
    return s;
  });
}

void cudaLaunch(tprt_rank_context *ctx, const void *image, int64_t imageSize,
                const char *name, int64_t gridX, int64_t gridY, int64_t gridZ,
                int64_t blockX, int64_t blockY, int64_t blockZ,
                int32_t sharedBytes, void **params, int64_t numParams) {
  guarded(ctx, [&]() -> tprt_status {
    CudaRank &r = rankOf(ctx);
    const int64_t dims[] = {gridX, gridY, gridZ, blockX, blockY, blockZ};
    for (int64_t d : dims)
      if (d < 1 || d > UINT_MAX)
        return error(TPRT_INVALID_ARGUMENT, "rank ", r.rank, ": kernel '", name,
                     "' launched with a grid or block size of ", d);
    if (!image || imageSize <= 0 || sharedBytes < 0 || numParams < 0)
      return error(TPRT_INVALID_ARGUMENT, "rank ", r.rank, ": kernel '", name,
                   "' launched with no image or bad parameters");
    CUfunction function = nullptr;
    if (tprt_status s = r.kernel(r.program, image, name, &function))
      return s;
    CudaRank::Span span = r.begin(CudaRank::Kernel);
    tprt_status launched = r.check(
        r.cu->cuLaunchKernel(
            function, static_cast<unsigned>(gridX),
            static_cast<unsigned>(gridY), static_cast<unsigned>(gridZ),
            static_cast<unsigned>(blockX), static_cast<unsigned>(blockY),
            static_cast<unsigned>(blockZ), static_cast<unsigned>(sharedBytes),
            r.stream, params, nullptr),
        "cuLaunchKernel");
    r.end(span);
    return launched;
  });
}

/// Whether the rank has not been asked about `buffer` before: a program's
/// constants are uploaded into the buffer the session keeps for them by its
/// first run alone (later runs, and their graphs, do not upload).
int32_t cudaFillOnce(tprt_rank_context *ctx, void *buffer) {
  if (ctx->error)
    return 0;
  return rankOf(ctx).filled.insert(buffer).second ? 1 : 0;
}

/// cuBLAS's compute type for matrices of `type` at the program's matmul
/// `precision` (tprt::MatmulPrecision): f32 ones in IEEE f32, or fast with
/// TF32 or bf16 inputs; f16 and bf16 ones in f32 always.
cublasComputeType_t computeType(cudaDataType type, int32_t precision) {
  if (type != CUDA_R_32F)
    return CUBLAS_COMPUTE_32F;
  switch (static_cast<MatmulPrecision>(precision)) {
  case MatmulPrecision::High:
    return CUBLAS_COMPUTE_32F_FAST_TF32;
  case MatmulPrecision::Medium:
    return CUBLAS_COMPUTE_32F_FAST_16BF;
  default:
    return CUBLAS_COMPUTE_32F;
  }
}

/// How many batched GEMMs' pointer arrays a rank keeps (a session's
/// attention layers; beyond, the shared buffer is written before each).
constexpr size_t kKeptPointerArrays = 256;

/// The `count` x 3 pointers of a batched GEMM's entries, written on the
/// stream by tprt_gemm_pointers. They depend only on the GEMM's buffers and
/// strides, which a session's arena keeps from run to run: each set is
/// written once into a buffer of its own and reused (no launch on later
/// runs, nor in their graphs). A new set met during a capture, or beyond
/// kKeptPointerArrays, goes to the rank's shared buffer (grown as needed; a
/// freed one makes graphs capture again), written before each such GEMM.
tprt_status gemmPointers(CudaRank &r, const void *a, const void *b, void *c,
                         int64_t batch1, int64_t count, int64_t strides[6],
                         void ***out) {
  size_t bytes = static_cast<size_t>(count) * 3 * sizeof(void *);
  std::array<int64_t, 11> key = {
      static_cast<int64_t>(reinterpret_cast<uintptr_t>(a)),
      static_cast<int64_t>(reinterpret_cast<uintptr_t>(b)),
      static_cast<int64_t>(reinterpret_cast<uintptr_t>(c)),
      batch1,
      count,
      strides[0],
      strides[1],
      strides[2],
      strides[3],
      strides[4],
      strides[5]};
  if (auto kept = r.pointerArrays.find(key); kept != r.pointerArrays.end()) {
    *out = reinterpret_cast<void **>(kept->second);
    return nullptr;
  }
  CUdeviceptr target = 0;
  if (!r.capturing && r.pointerArrays.size() < kKeptPointerArrays) {
    if (tprt_status s = r.check(r.cu->cuMemAllocAsync(&target, bytes, r.stream),
                                "cuMemAllocAsync (GEMM pointer arrays)"))
      return s;
    r.pointerArrays.emplace(key, target);
  } else {
    if (r.gemmPointerBytes < bytes) {
      if (r.gemmPointers) {
        r.cu->cuMemFreeAsync(r.gemmPointers, r.stream);
        r.generation += 1;
      }
      r.gemmPointers = 0;
      r.gemmPointerBytes = 0;
      if (tprt_status s =
              r.check(r.cu->cuMemAllocAsync(&r.gemmPointers, bytes, r.stream),
                      "cuMemAllocAsync (GEMM pointer arrays)"))
        return s;
      r.gemmPointerBytes = bytes;
    }
    target = r.gemmPointers;
  }
  CUfunction function = nullptr;
  if (tprt_status s =
          r.kernel(0, runtimeKernels(), "tprt_gemm_pointers", &function))
    return s;
  void *arrays = reinterpret_cast<void *>(target);
  void *params[] = {&a,          &b,          &c,          &strides[0],
                    &strides[1], &strides[2], &strides[3], &strides[4],
                    &strides[5], &batch1,     &count,      &arrays};
  unsigned threads = 256;
  auto blocks =
      static_cast<unsigned>(std::min<int64_t>((count + 255) / 256, 65535));
  if (tprt_status s =
          r.check(r.cu->cuLaunchKernel(function, blocks, 1, 1, threads, 1, 1, 0,
                                       r.stream, params, nullptr),
                  "cuLaunchKernel (tprt_gemm_pointers)"))
    return s;
  *out = static_cast<void **>(arrays);
  return nullptr;
}

/// C += op(A) op(B) on row-major matrices of `type`, accumulated in f32:
/// cuBLAS is column-major, so it computes C^T = op(B)^T op(A)^T, which reads
/// the same memory. One call for the whole batch: strided where one stride
/// spans it (one level, or batch0's strides batch1 times batch1's), else
/// through pointer arrays (an attention's heads inside its rows: [batch,
/// seq, heads, dim]).
tprt_status gemm(CudaRank &r, cudaDataType type, cublasComputeType_t compute,
                 size_t elemSize, int32_t transA, int32_t transB,
                 int32_t accumulate, int64_t m, int64_t n, int64_t k,
                 const void *a, int64_t lda, const void *b, int64_t ldb,
                 void *c, int64_t ldc, int64_t batch0, int64_t batch1,
                 int64_t strideA0, int64_t strideA1, int64_t strideB0,
                 int64_t strideB1, int64_t strideC0, int64_t strideC1) {
  for (int64_t v : {m, n, k, lda, ldb, ldc, batch1})
    if (v < 0 || v > INT_MAX)
      return error(TPRT_INVALID_ARGUMENT, "rank ", r.rank,
                   ": GEMM size or leading dimension ", v,
                   " does not fit cuBLAS's int");
  const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  int64_t count = batch0 * batch1;
  if (count == 0)
    return nullptr;
  if (count > INT_MAX)
    return error(TPRT_INVALID_ARGUMENT, "rank ", r.rank, ": GEMM batch of ",
                 count, " does not fit cuBLAS's int");
  // One stride for the whole batch, when there is one.
  std::optional<std::array<int64_t, 3>> strides;
  if (batch0 == 1)
    strides = {strideA1, strideB1, strideC1};
  else if (batch1 == 1)
    strides = {strideA0, strideB0, strideC0};
  else if (strideA0 == batch1 * strideA1 && strideB0 == batch1 * strideB1 &&
           strideC0 == batch1 * strideC1)
    strides = {strideA1, strideB1, strideC1};
  if (strides)
    return r.check(r.blas->cublasGemmStridedBatchedEx(
                       r.handle, opB, opA, static_cast<int>(n),
                       static_cast<int>(m), static_cast<int>(k), &one, b, type,
                       static_cast<int>(ldb), (*strides)[1], a, type,
                       static_cast<int>(lda), (*strides)[0], &beta, c, type,
                       static_cast<int>(ldc), (*strides)[2],
                       static_cast<int>(count), compute, CUBLAS_GEMM_DEFAULT),
                   "cublasGemmStridedBatchedEx");
  int64_t bytes[6] = {strideA0 * static_cast<int64_t>(elemSize),
                      strideA1 * static_cast<int64_t>(elemSize),
                      strideB0 * static_cast<int64_t>(elemSize),
                      strideB1 * static_cast<int64_t>(elemSize),
                      strideC0 * static_cast<int64_t>(elemSize),
                      strideC1 * static_cast<int64_t>(elemSize)};
  void **arrays = nullptr;
  if (tprt_status s = gemmPointers(r, a, b, c, batch1, count, bytes, &arrays))
    return s;
  return r.check(r.blas->cublasGemmBatchedEx(
                     r.handle, opB, opA, static_cast<int>(n),
                     static_cast<int>(m), static_cast<int>(k), &one,
                     arrays + count, type, static_cast<int>(ldb), arrays, type,
                     static_cast<int>(lda), &beta, arrays + 2 * count, type,
                     static_cast<int>(ldc), static_cast<int>(count), compute,
                     CUBLAS_GEMM_DEFAULT),
                 "cublasGemmBatchedEx");
}

/// cuBLASLt's workspace per rank: what NVIDIA advises for Hopper, room for
/// the split-K and stream-K algorithms its heuristic picks.
constexpr size_t kLtWorkspaceBytes = size_t(32) << 20;

/// The largest power of two (up to 256) that divides `p`'s address: the
/// alignment cuBLASLt's heuristic may assume of a matrix.
int64_t alignmentOf(const void *p) {
  auto address = reinterpret_cast<uintptr_t>(p);
  int64_t align = 256;
  while (align > 1 && address % static_cast<uintptr_t>(align))
    align /= 2;
  return align;
}

/// cuBLASLt opened and its handle and workspace made (on the first GEMM that
/// needs it).
tprt_status startLt(CudaRank &r) {
  if (r.ltHandle)
    return nullptr;
  if (!r.lt)
    if (tprt_status s = loadCublasLt(&r.lt))
      return s;
  if (tprt_status s =
          r.checkLt(r.lt->cublasLtCreate(&r.ltHandle), "cublasLtCreate"))
    return s;
  return r.check(r.cu->cuMemAlloc(&r.ltWorkspace, kLtWorkspaceBytes),
                 "cuMemAlloc (cuBLASLt workspace)");
}

/// The plan of one GEMM of `g`'s shape (batch `count`, strides `strides`
/// of A, B, C, D) with C and the bias present or not, made on first use:
/// cuBLASLt's descriptors of the column-major GEMM D^T = op(B)^T op(A)^T
/// (which reads row-major memory as tprt_rt_gemm says), and the algorithm
/// its heuristic ranks first within the workspace.
tprt_status ltPlan(CudaRank &r, const tprt_gemm_desc &g, cudaDataType type,
                   cublasComputeType_t compute, int64_t count,
                   const int64_t strides[4], bool hasC, bool hasBias,
                   const int64_t alignments[5], const CudaRank::LtPlan **out) {
  std::vector<int64_t> key = {
      g.dtype, g.trans_a,  g.trans_b,  g.epilogue, g.m,       g.n,  g.k,
      g.lda,   g.ldb,      g.ldc,      g.ldd,      count,     hasC, hasBias,
      compute, strides[0], strides[1], strides[2], strides[3]};
  key.insert(key.end(), alignments, alignments + 5);
  auto found = r.ltPlans.find(key);
  if (found != r.ltPlans.end()) {
    *out = &found->second;
    return nullptr;
  }
  CudaRank::LtPlan plan;
  const CublasLt &lt = *r.lt;
  auto keep = [&](tprt_status s) {
    if (s) {
      for (cublasLtMatrixLayout_t layout : {plan.a, plan.b, plan.c, plan.d})
        if (layout)
          lt.cublasLtMatrixLayoutDestroy(layout);
      if (plan.op)
        lt.cublasLtMatmulDescDestroy(plan.op);
    }
    return s;
  };
  if (tprt_status s =
          r.checkLt(lt.cublasLtMatmulDescCreate(&plan.op, compute, CUDA_R_32F),
                    "cublasLtMatmulDescCreate"))
    return s;
  // cuBLASLt's A is our B, its B our A (column-major, transposed product).
  cublasOperation_t opA = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  bool gelu = g.epilogue & TPRT_EPILOGUE_GELU;
  if (hasBias)
    epilogue = gelu ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
  else if (gelu)
    epilogue = CUBLASLT_EPILOGUE_GELU;
  auto setOp = [&](cublasLtMatmulDescAttributes_t attribute, const void *value,
                   size_t bytes) {
    return r.checkLt(
        lt.cublasLtMatmulDescSetAttribute(plan.op, attribute, value, bytes),
        "cublasLtMatmulDescSetAttribute");
  };
  if (tprt_status s = setOp(CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA)))
    return keep(s);
  if (tprt_status s = setOp(CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB)))
    return keep(s);
  if (tprt_status s =
          setOp(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)))
    return keep(s);
  // Stored (column-major) shapes: rows x cols, leading dimension.
  auto layout = [&](cublasLtMatrixLayout_t *made, int64_t rows, int64_t cols,
                    int64_t ld, int64_t stride) -> tprt_status {
    if (tprt_status s = r.checkLt(lt.cublasLtMatrixLayoutCreate(
                                      made, type, static_cast<uint64_t>(rows),
                                      static_cast<uint64_t>(cols), ld),
                                  "cublasLtMatrixLayoutCreate"))
      return s;
    if (count == 1)
      return nullptr;
    int32_t batch = static_cast<int32_t>(count);
    if (tprt_status s = r.checkLt(lt.cublasLtMatrixLayoutSetAttribute(
                                      *made, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                      &batch, sizeof(batch)),
                                  "cublasLtMatrixLayoutSetAttribute"))
      return s;
    return r.checkLt(lt.cublasLtMatrixLayoutSetAttribute(
                         *made, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                         &stride, sizeof(stride)),
                     "cublasLtMatrixLayoutSetAttribute");
  };
  if (tprt_status s = layout(&plan.a, g.trans_b ? g.k : g.n,
                             g.trans_b ? g.n : g.k, g.ldb, strides[1]))
    return keep(s);
  if (tprt_status s = layout(&plan.b, g.trans_a ? g.m : g.k,
                             g.trans_a ? g.k : g.m, g.lda, strides[0]))
    return keep(s);
  if (tprt_status s = layout(&plan.c, g.n, g.m, hasC ? g.ldc : g.ldd,
                             hasC ? strides[2] : strides[3]))
    return keep(s);
  if (tprt_status s = layout(&plan.d, g.n, g.m, g.ldd, strides[3]))
    return keep(s);
  cublasLtMatmulPreference_t preference = nullptr;
  if (tprt_status s = r.checkLt(lt.cublasLtMatmulPreferenceCreate(&preference),
                                "cublasLtMatmulPreferenceCreate"))
    return keep(s);
  uint64_t workspace = kLtWorkspaceBytes;
  uint32_t align[4] = {static_cast<uint32_t>(alignments[1]),
                       static_cast<uint32_t>(alignments[0]),
                       static_cast<uint32_t>(alignments[2]),
                       static_cast<uint32_t>(alignments[3])};
  cublasStatus_t set = lt.cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
      sizeof(workspace));
  const cublasLtMatmulPreferenceAttributes_t alignAttributes[4] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  for (int i = 0; i < 4 && set == CUBLAS_STATUS_SUCCESS; ++i)
    set = lt.cublasLtMatmulPreferenceSetAttribute(
        preference, alignAttributes[i], &align[i], sizeof(align[i]));
  cublasLtMatmulHeuristicResult_t result{};
  int found_count = 0;
  if (set == CUBLAS_STATUS_SUCCESS) {
    // The bias pointer's alignment matters to the heuristic too: a stand-in
    // of the same alignment (it is not read).
    if (hasBias) {
      auto stand = static_cast<uintptr_t>(alignments[4]);
      const void *bias = reinterpret_cast<const void *>(stand);
      setOp(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
    }
    set = lt.cublasLtMatmulAlgoGetHeuristic(r.ltHandle, plan.op, plan.a, plan.b,
                                            plan.c, plan.d, preference, 1,
                                            &result, &found_count);
  }
  lt.cublasLtMatmulPreferenceDestroy(preference);
  if (tprt_status s = r.checkLt(set, "cublasLtMatmulAlgoGetHeuristic"))
    return keep(s);
  if (found_count < 1 || result.state != CUBLAS_STATUS_SUCCESS)
    return keep(error(TPRT_UNAVAILABLE, "rank ", r.rank, " (GPU ", r.ordinal,
                      "): cuBLASLt has no algorithm for a GEMM of ", g.m, " x ",
                      g.n, " x ", g.k, " (batch ", count, ", epilogue ",
                      g.epilogue, ") on this device"));
  plan.algo = result.algo;
  plan.workspace = result.workspaceSize;
  *out = &r.ltPlans.emplace(std::move(key), plan).first->second;
  return nullptr;
}

/// A GEMM through cuBLASLt: with its epilogue (bias, GELU), and with C apart
/// from D. One call per batch where one stride spans it, else one per entry
/// of its outer level.
tprt_status ltGemm(CudaRank &r, const tprt_gemm_desc &g, cudaDataType type,
                   cublasComputeType_t compute, size_t elemSize, const void *a,
                   const void *b, const void *c, void *d, const void *bias) {
  if (tprt_status s = startLt(r))
    return s;
  int64_t count = g.batch0 * g.batch1, outer = 1;
  int64_t strides[4] = {g.stride_a1, g.stride_b1, g.stride_c1, g.stride_d1};
  if (g.batch1 == 1) {
    int64_t outerStrides[4] = {g.stride_a0, g.stride_b0, g.stride_c0,
                               g.stride_d0};
    std::copy(outerStrides, outerStrides + 4, strides);
  } else if (g.batch0 != 1 && !(g.stride_a0 == g.batch1 * g.stride_a1 &&
                                g.stride_b0 == g.batch1 * g.stride_b1 &&
                                g.stride_c0 == g.batch1 * g.stride_c1 &&
                                g.stride_d0 == g.batch1 * g.stride_d1)) {
    outer = g.batch0;
    count = g.batch1;
  }
  if (count > INT_MAX)
    return error(TPRT_INVALID_ARGUMENT, "rank ", r.rank, ": GEMM batch of ",
                 count, " does not fit cuBLASLt's int");
  int64_t alignments[5] = {alignmentOf(a), alignmentOf(b),
                           alignmentOf(c ? c : d), alignmentOf(d),
                           alignmentOf(bias)};
  const CudaRank::LtPlan *plan = nullptr;
  if (tprt_status s = ltPlan(r, g, type, compute, count, strides, c, bias,
                             alignments, &plan))
    return s;
  if (bias)
    if (tprt_status s =
            r.checkLt(r.lt->cublasLtMatmulDescSetAttribute(
                          plan->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                          sizeof(bias)),
                      "cublasLtMatmulDescSetAttribute"))
      return s;
  const float one = 1.0f, beta = c ? 1.0f : 0.0f;
  auto at = [&](const void *base, int64_t i, int64_t stride) {
    return static_cast<const char *>(base) +
           i * stride * static_cast<int64_t>(elemSize);
  };
  for (int64_t i = 0; i < outer; ++i) {
    void *di = const_cast<char *>(at(d, i, g.stride_d0));
    const void *ci = c ? at(c, i, g.stride_c0) : di;
    if (tprt_status s = r.checkLt(
            r.lt->cublasLtMatmul(
                r.ltHandle, plan->op, &one, at(b, i, g.stride_b0), plan->a,
                at(a, i, g.stride_a0), plan->b, &beta, ci, plan->c, di, plan->d,
                &plan->algo, reinterpret_cast<void *>(r.ltWorkspace),
                plan->workspace, reinterpret_cast<cudaStream_t>(r.stream)),
            "cublasLtMatmul"))
      return s;
  }
  return nullptr;
}

/// tprt_rt_gemm on a GPU rank: cuBLAS where there is no epilogue and C is
/// D (or absent), cuBLASLt otherwise.
void cudaGemm(tprt_rank_context *ctx, const tprt_gemm_desc *desc, const void *a,
              const void *b, const void *c, void *d, const void *bias) {
  if (ctx->error)
    return;
  if (tprt_status status = checkGemm(desc))
    return fail(ctx, status);
  const tprt_gemm_desc &g = *desc;
  Clock::time_point start = Clock::now();
  CudaRank &r = rankOf(ctx);
  CudaRank::Span span = r.begin(CudaRank::Gemm);
  guarded(ctx, [&]() -> tprt_status {
    cudaDataType type = g.dtype == TPRT_F32   ? CUDA_R_32F
                        : g.dtype == TPRT_F16 ? CUDA_R_16F
                                              : CUDA_R_16BF;
    size_t elemSize = g.dtype == TPRT_F32 ? 4 : 2;
    cublasComputeType_t compute = computeType(type, ctx->matmulPrecision);
    if (!(g.epilogue & TPRT_EPILOGUE_BIAS))
      bias = nullptr;
    if (bias || (g.epilogue & TPRT_EPILOGUE_GELU) || (c && c != d))
      return ltGemm(r, g, type, compute, elemSize, a, b, c, d, bias);
    return gemm(r, type, compute, elemSize, static_cast<int32_t>(g.trans_a),
                static_cast<int32_t>(g.trans_b), c != nullptr, g.m, g.n, g.k, a,
                g.lda, b, g.ldb, d, g.ldd, g.batch0, g.batch1, g.stride_a0,
                g.stride_a1, g.stride_b0, g.stride_b1, g.stride_d0,
                g.stride_d1);
  });
  r.end(span);
  // Enqueue time: the GEMM itself runs on the stream (its device time is the
  // span's).
  recordGemm(ctx, start, g.batch0 * g.batch1 * g.m * g.n * g.k);
}

/// This rank's block along `dim`: rows of the dimensions before `dim`, each
/// a contiguous run of the block, one strided 2D copy.
void cudaAllSlice(tprt_rank_context *ctx, const void *in, void *out,
                  const int64_t *shape, int32_t rank, int32_t dim,
                  int32_t dtype, int64_t axes) {
  guarded(ctx, [&]() -> tprt_status {
    CudaRank &r = rankOf(ctx);
    const tprt_mesh &mesh = ctx->comm->mesh();
    tprt_axes list{static_cast<int32_t>(axes & 0xf), {}};
    for (int32_t i = 0; i < list.count && i < TPRT_MAX_MESH_RANK; ++i)
      list.axes[i] = static_cast<int32_t>((axes >> (4 * (i + 1))) & 0xf);
    if (tprt_status status = tprt_axes_check(&mesh, &list))
      return status;
    size_t elemSize = tprt_dtype_size(static_cast<tprt_dtype>(dtype));
    if (rank < 1 || rank > TPRT_MAX_TENSOR_RANK || dim < 0 || dim >= rank ||
        elemSize == 0)
      return error(TPRT_INVALID_ARGUMENT, "all_slice: bad rank ", rank,
                   ", dim ", dim, " or dtype ", dtype);
    int64_t size = tprt_group_size(&mesh, &list);
    if (shape[dim] % size != 0)
      return error(TPRT_INVALID_ARGUMENT, "all_slice: dimension ", dim, " of ",
                   formatShape(shape, rank), " is not divisible by ", size);
    int64_t rows = product(shape, dim);
    int64_t inner = product(shape + dim + 1, rank - dim - 1);
    int64_t block = shape[dim] / size;
    int64_t index = tprt_group_position(&mesh, &list, ctx->comm->rank());
    size_t pitch = static_cast<size_t>(shape[dim] * inner) * elemSize;
    size_t width = static_cast<size_t>(block * inner) * elemSize;
    CudaRank::Span span = r.begin(CudaRank::Copy);
    tprt_status s =
        r.copy2D(static_cast<const char *>(in) +
                     static_cast<size_t>(index * block * inner) * elemSize,
                 pitch, out, width, width, rows);
    r.end(span);
    return s;
  });
}

// The collectives are the communicator's (the CPU entry points, which check
// their arguments and keep the failure), timed on the stream.

void cudaAllReduce(tprt_rank_context *ctx, const void *in, void *out,
                   int64_t count, int32_t dtype, int32_t reduction,
                   int64_t axes) {
  timed(rankOf(ctx), TPRT_ALL_REDUCE, [&] {
    tprt_rt_all_reduce(ctx, in, out, count, dtype, reduction, axes);
  });
}

void cudaAllGather(tprt_rank_context *ctx, const void *in, void *out,
                   const int64_t *shape, int32_t rank, int32_t dim,
                   int32_t dtype, int64_t axes) {
  timed(rankOf(ctx), TPRT_ALL_GATHER, [&] {
    tprt_rt_all_gather(ctx, in, out, shape, rank, dim, dtype, axes);
  });
}

void cudaReduceScatter(tprt_rank_context *ctx, const void *in, void *out,
                       const int64_t *shape, int32_t rank, int32_t dim,
                       int32_t dtype, int32_t reduction, int64_t axes) {
  timed(rankOf(ctx), TPRT_REDUCE_SCATTER, [&] {
    tprt_rt_reduce_scatter(ctx, in, out, shape, rank, dim, dtype, reduction,
                           axes);
  });
}

void cudaAllToAll(tprt_rank_context *ctx, const void *in, void *out,
                  const int64_t *shape, int32_t rank, int32_t splitDim,
                  int32_t concatDim, int32_t dtype, int64_t axes) {
  timed(rankOf(ctx), TPRT_ALL_TO_ALL, [&] {
    tprt_rt_all_to_all(ctx, in, out, shape, rank, splitDim, concatDim, dtype,
                       axes);
  });
}

} // namespace

tprt_status CudaRanks::enter(int64_t rank) {
  CudaRank &r = gpu(rank);
  return r.check(r.cu->cuCtxSetCurrent(r.context), "cuCtxSetCurrent");
}

tprt_status CudaRanks::alloc(int64_t rank, size_t bytes, void **ptr) {
  CudaRank &r = gpu(rank);
  CUdeviceptr p = 0;
  tprt_status s =
      r.check(r.cu->cuMemAllocAsync(&p, bytes ? bytes : 1, r.stream),
              "cuMemAllocAsync");
  *ptr = s ? nullptr : reinterpret_cast<void *>(p);
  return s;
}

void CudaRanks::release(int64_t rank, void *ptr) {
  CudaRank &r = gpu(rank);
  // A function's result buffer is kept for its next run (idleOutput).
  if (auto kept = r.outputs.find(ptr); kept != r.outputs.end()) {
    r.graphs[kept->second.first].idle[kept->second.second] = 1;
    return;
  }
  r.cu->cuMemFreeAsync(devicePointer(ptr), r.stream);
}

void *CudaRanks::idleOutput(int64_t rank, FunctionKey function, size_t index,
                            size_t bytes) {
  CudaRank &r = gpu(rank);
  auto it = r.graphs.find(function);
  if (it == r.graphs.end())
    return nullptr;
  CudaRank::GraphSlot &slot = it->second;
  if (index >= slot.outputs.size() || !slot.idle[index] ||
      slot.outputBytes[index] != bytes)
    return nullptr;
  slot.idle[index] = 0;
  return slot.outputs[index];
}

GraphMode
CudaRanks::graphMode(FunctionKey function, bool enabled,
                     const std::vector<int64_t> &ranks,
                     const std::vector<std::vector<void *>> &buffers) {
  if (!enabled || graphRefusal())
    return GraphMode::Plain;
  // Every rank has a slot (made here), has run the function as often, and
  // refused it together.
  bool plain = false, replay = true;
  for (size_t k = 0; k < ranks.size(); ++k) {
    CudaRank &r = gpu(ranks[k]);
    CudaRank::GraphSlot &slot = r.graphs[function];
    plain = plain || !slot.refused.empty() || slot.runs == 0;
    replay = replay && slot.exec && slot.buffers == buffers[k] &&
             slot.generation == r.generation;
  }
  return plain    ? GraphMode::Plain
         : replay ? GraphMode::Replay
                  : GraphMode::Capture;
}

namespace {

/// Every axis of `mesh`: the group of all its ranks.
tprt_axes allAxes(const tprt_mesh &mesh) {
  tprt_axes axes{mesh.rank, {}};
  for (int32_t i = 0; i < mesh.rank; ++i)
    axes.axes[i] = i;
  return axes;
}

/// The message of `status` (freed), or "".
std::string takeMessage(tprt_status status) {
  if (!status)
    return "";
  std::string message = tprt_status_message(status);
  tprt_status_free(status);
  return message;
}

} // namespace

tprt_status CudaRanks::runEntry(int64_t rank, const EntryCall &call,
                                tprt_rank_context *ctx,
                                const std::function<tprt_status()> &body) {
  if (!call.graphed)
    return body();
  CudaRank &r = gpu(rank);
  const FunctionKey &function = call.function;
  const std::vector<void *> &outputs = call.outputs;
  GraphMode mode = call.mode;
  CudaRank::GraphSlot *slot = nullptr;
  if (auto it = r.graphs.find(function); it != r.graphs.end())
    slot = &it->second;
  // The results' buffers are the slot's from now on: the arrays of the last
  // run's that are still held are theirs alone (freed as any other), the
  // idle ones are freed.
  auto adoptOutputs = [&] {
    if (!slot || !slot->refused.empty())
      return;
    slot->outputs.resize(outputs.size(), nullptr);
    slot->idle.resize(outputs.size(), 0);
    slot->outputBytes.resize(outputs.size(), 0);
    for (size_t i = 0; i < outputs.size(); ++i) {
      void *&kept = slot->outputs[i];
      if (kept == outputs[i])
        continue;
      if (kept) {
        r.outputs.erase(kept);
        if (slot->idle[i])
          r.cu->cuMemFreeAsync(devicePointer(kept), r.stream);
      }
      kept = outputs[i];
      slot->idle[i] = 0;
      slot->outputBytes[i] = call.outputBytes[i];
      r.outputs[kept] = {function, i};
    }
  };
  if (mode == GraphMode::Plain) {
    tprt_status status = body();
    if (slot) {
      slot->runs += 1;
      adoptOutputs();
    }
    return status;
  }
  tprt_communicator *comm = ctx->comm;
  if (mode == GraphMode::Replay) {
    tprt_status status =
        r.check(r.cu->cuGraphLaunch(slot->exec, r.stream), "cuGraphLaunch");
    slot->runs += 1;
    // The same ops ran: the figures are the captured run's.
    comm->stats = slot->stats;
    ctx->gemmCalls = slot->gemmCalls;
    ctx->gemmFlops = slot->gemmFlops;
    if (r.timing)
      r.graphLaunches += 1;
    return status;
  }

  // Capture: the host code runs with the stream recording, nothing timed
  // but the whole run.
  bool timing = r.timing;
  r.timing = false;
  ctx->capturing = true;
  r.capturing = true;
  std::string why;
  CUgraph graph = nullptr;
  if (CUresult began = r.cu->cuStreamBeginCapture(
          r.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
      began != CUDA_SUCCESS) {
    why = takeMessage(r.check(began, "cuStreamBeginCapture"));
  } else {
    why = takeMessage(body());
    if (why.empty() && ctx->error)
      why = tprt_status_message(ctx->error);
    CUresult ended = r.cu->cuStreamEndCapture(r.stream, &graph);
    if (ended != CUDA_SUCCESS && why.empty())
      why = takeMessage(r.check(ended, "cuStreamEndCapture"));
  }
  ctx->capturing = false;
  r.capturing = false;
  r.timing = timing;
  // Every rank captured, or none replays: a rank whose graph lacks a
  // collective would leave its peers waiting in theirs.
  int32_t ok = why.empty() ? 1 : 0;
  if (tprt_mesh_num_devices(&comm->mesh()) > 1) {
    tprt_communicator *host = hostCommunicator(rank);
    if (tprt_status agreed = host->allReduce(&ok, &ok, 1, TPRT_I32, TPRT_MIN,
                                             allAxes(host->mesh()))) {
      if (graph)
        r.cu->cuGraphDestroy(graph);
      return agreed;
    }
    if (!ok && why.empty())
      why = "another rank's capture failed";
  }
  tprt_status status = nullptr;
  if (ok) {
    if (slot->exec) {
      // The same ops on other buffers: the graph is updated in place.
      CUgraphExecUpdateResultInfo info{};
      if (r.cu->cuGraphExecUpdate(slot->exec, graph, &info) != CUDA_SUCCESS) {
        r.cu->cuGraphExecDestroy(slot->exec);
        slot->exec = nullptr;
      }
    }
    if (!slot->exec)
      status = r.check(r.cu->cuGraphInstantiate(&slot->exec, graph, 0),
                       "cuGraphInstantiate");
    r.cu->cuGraphDestroy(graph);
    if (!status)
      status =
          r.check(r.cu->cuGraphLaunch(slot->exec, r.stream), "cuGraphLaunch");
    if (status) {
      fail(ctx, status);
      return nullptr;
    }
    if (r.timing)
      r.graphLaunches += 1;
    slot->runs += 1;
    slot->buffers = call.buffers;
    slot->generation = r.generation;
    slot->stats = comm->stats;
    slot->gemmCalls = ctx->gemmCalls;
    slot->gemmFlops = ctx->gemmFlops;
    adoptOutputs();
    return nullptr;
  }
  // Nothing ran: the run goes on plainly, and so does every later one.
  if (graph)
    r.cu->cuGraphDestroy(graph);
  if (slot->exec) {
    r.cu->cuGraphExecDestroy(slot->exec);
    slot->exec = nullptr;
  }
  slot->refused = why;
  if (rank == firstRank)
    std::fprintf(stderr,
                 "tprt: CUDA graphs off for '%s': rank %lld: %s; its runs "
                 "launch each op\n",
                 call.name, static_cast<long long>(rank), why.c_str());
  tprt_status_free(ctx->error);
  ctx->error = nullptr;
  tprt_communicator_reset_stats(comm);
  ctx->gemmCalls = 0;
  ctx->gemmFlops = 0;
  ctx->gemmSeconds = 0;
  tprt_status plain = body();
  slot->runs += 1;
  // Its outputs are ordinary buffers now.
  for (void *kept : slot->outputs)
    r.outputs.erase(kept);
  for (size_t i = 0; i < slot->outputs.size(); ++i)
    if (slot->idle[i])
      r.cu->cuMemFreeAsync(devicePointer(slot->outputs[i]), r.stream);
  slot->outputs.clear();
  slot->idle.clear();
  slot->outputBytes.clear();
  return plain;
}

tprt_status CudaRanks::zero(int64_t rank, void *ptr, size_t bytes) {
  CudaRank &r = gpu(rank);
  return r.check(r.cu->cuMemsetD8Async(devicePointer(ptr), 0, bytes, r.stream),
                 "cuMemsetD8Async");
}

tprt_status CudaRanks::copyToDevice(int64_t rank, void *dst, const void *src,
                                    size_t bytes) {
  CudaRank &r = gpu(rank);
  return r.check(
      r.cu->cuMemcpyHtoDAsync(devicePointer(dst), src, bytes, r.stream),
      "cuMemcpyHtoDAsync");
}

tprt_status CudaRanks::copyToHost(int64_t rank, void *dst, const void *src,
                                  size_t bytes) {
  CudaRank &r = gpu(rank);
  return r.check(
      r.cu->cuMemcpyDtoHAsync(dst, devicePointer(src), bytes, r.stream),
      "cuMemcpyDtoHAsync");
}

tprt_status CudaRanks::startTiming(int64_t rank) {
  gpu(rank).startTiming();
  return nullptr;
}

tprt_status CudaRanks::takeTiming(int64_t rank, tprt_device_profile *profile) {
  return gpu(rank).takeTiming(profile);
}

tprt_status CudaRanks::synchronize(int64_t rank) {
  return gpu(rank).wait(rankCommunicator(rank));
}

namespace {
// tprtRuntimeKernels: the fatbin nvcc made of RuntimeKernels.cu.
#include "RuntimeKernels.fatbin.inc"
} // namespace

const void *tprt::cuda::runtimeKernels() { return tprtRuntimeKernels; }

const tprt_rt_table *tprt::cuda::cudaFunctions() {
  // What a GPU rank does as the CPU does: the entry points themselves.
  constexpr auto cudaAxisIndex = tprt_rt_axis_index;
  constexpr auto cudaIndexError = tprt_rt_index_error;
  constexpr auto cudaParallelFor = tprt_rt_parallel_for;
  static const tprt_rt_table table = {
      TPRT_RT_ABI_VERSION,
#define TPRT_RT_CALL(name, Name, version, ret, params) cuda##Name,
#include "tprt/tprt_rt_calls.def"
  };
  return &table;
}

#endif // TPRT_HAS_CUDA_HEADERS
