//===- FakeCublasLt.cpp - A counting fake of libcublasLt.so.13 ------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The cuBLASLt entry points libtprt uses, counted. Descriptors keep the
// attributes set on them; the heuristic answers one algorithm; a matmul
// checks its handle, its descriptors, that its layouts fit the product
// (op(A) and op(B) as the transposes say, C and D of the product's shape),
// that every matrix, the bias (one entry per row of D) and the workspace lie
// in device memory, and counts its epilogue (`gemm.epilogue.BIAS`,
// `GELU`, `GELU_BIAS`) and compute type; it computes nothing. See
// FakeCuda.h.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"

#include <cublasLt.h>

#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {

struct Op {
  cublasComputeType_t compute;
  cudaDataType scale;
  cublasOperation_t transA = CUBLAS_OP_N, transB = CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void *bias = nullptr;
};

struct Layout {
  cudaDataType type;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch = 1;
  int64_t stride = 0;
};

std::mutex mutex;
std::set<const void *> live;

template <typename T> T *made(T *object) {
  std::lock_guard<std::mutex> lock(mutex);
  live.insert(object);
  return object;
}

bool isLive(const void *object) {
  std::lock_guard<std::mutex> lock(mutex);
  return object && live.count(object) != 0;
}

template <typename T> cublasStatus_t destroy(const char *call, T *object) {
  tprtFakeCount(call, 1);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!live.erase(object)) {
      tprtFakeCount((std::string("error.") + call).c_str(), 1);
      return CUBLAS_STATUS_INVALID_VALUE;
    }
  }
  delete object;
  return CUBLAS_STATUS_SUCCESS;
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
  default:
    return 0;
  }
}

const char *epilogueName(cublasLtEpilogue_t epilogue) {
  switch (epilogue) {
  case CUBLASLT_EPILOGUE_DEFAULT:
    return "DEFAULT";
  case CUBLASLT_EPILOGUE_BIAS:
    return "BIAS";
  case CUBLASLT_EPILOGUE_GELU:
    return "GELU";
  case CUBLASLT_EPILOGUE_GELU_BIAS:
    return "GELU_BIAS";
  default:
    return nullptr;
  }
}

const char *computeName(cublasComputeType_t compute, cudaDataType type) {
  if (type == CUDA_R_32F)
    switch (compute) {
    case CUBLAS_COMPUTE_32F:
      return "32F";
    case CUBLAS_COMPUTE_32F_FAST_TF32:
      return "32F_FAST_TF32";
    case CUBLAS_COMPUTE_32F_FAST_16BF:
      return "32F_FAST_16BF";
    default:
      return nullptr;
    }
  return compute == CUBLAS_COMPUTE_32F ? "32F" : nullptr;
}

/// Whether `layout`'s matrices at `ptr` lie in device memory (each batch
/// entry `stride` elements after the last); their extent goes to `ranges`.
bool inDevice(const void *ptr, const Layout &layout,
              std::vector<FakeRange> &ranges) {
  size_t size = elementSize(layout.type);
  if (!size || layout.ld < static_cast<int64_t>(layout.rows) || layout.ld < 1 ||
      layout.batch < 1)
    return false;
  if (!layout.rows || !layout.cols)
    return true;
  size_t last = static_cast<size_t>(layout.ld) * (layout.cols - 1) +
                layout.rows +
                static_cast<size_t>(layout.stride) * (layout.batch - 1);
  ranges.push_back({reinterpret_cast<uintptr_t>(ptr), last * size});
  return tprtFakeIsDevice(reinterpret_cast<uintptr_t>(ptr), last * size) != 0;
}

} // namespace

extern "C" {

const char *cublasLtGetStatusName(cublasStatus_t status) {
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

const char *cublasLtGetStatusString(cublasStatus_t) {
  return "reported by the counting fake of cuBLASLt";
}

cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle) {
  tprtFakeCount("cublasLtCreate", 1);
  *handle = reinterpret_cast<cublasLtHandle_t>(made(new int(0)));
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  return destroy("cublasLtDestroy", reinterpret_cast<int *>(handle));
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc,
                                        cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  tprtFakeCount("cublasLtMatmulDescCreate", 1);
  auto *op = made(new Op{compute, scale});
  *desc = reinterpret_cast<cublasLtMatmulDesc_t>(op);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  return destroy("cublasLtMatmulDescDestroy", reinterpret_cast<Op *>(desc));
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t a,
                                              const void *buf, size_t bytes) {
  const char *call = "cublasLtMatmulDescSetAttribute";
  tprtFakeCount(call, 1);
  auto *op = reinterpret_cast<Op *>(desc);
  if (!isLive(op) || !buf)
    return fail(call, CUBLAS_STATUS_INVALID_VALUE);
  auto take = [&](auto &field) {
    if (bytes != sizeof(field))
      return fail(call, CUBLAS_STATUS_INVALID_VALUE);
    std::memcpy(&field, buf, bytes);
    return CUBLAS_STATUS_SUCCESS;
  };
  switch (a) {
  case CUBLASLT_MATMUL_DESC_TRANSA:
    return take(op->transA);
  case CUBLASLT_MATMUL_DESC_TRANSB:
    return take(op->transB);
  case CUBLASLT_MATMUL_DESC_EPILOGUE:
    return take(op->epilogue);
  case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
    return take(op->bias);
  default:
    return fail(call, CUBLAS_STATUS_NOT_SUPPORTED);
  }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout,
                                          cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  tprtFakeCount("cublasLtMatrixLayoutCreate", 1);
  if (!elementSize(type) || ld < static_cast<int64_t>(rows) || ld < 1)
    return fail("cublasLtMatrixLayoutCreate", CUBLAS_STATUS_INVALID_VALUE);
  *layout = reinterpret_cast<cublasLtMatrixLayout_t>(
      made(new Layout{type, rows, cols, ld}));
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  return destroy("cublasLtMatrixLayoutDestroy",
                 reinterpret_cast<Layout *>(layout));
}

cublasStatus_t
cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                 cublasLtMatrixLayoutAttribute_t attribute,
                                 const void *buf, size_t bytes) {
  const char *call = "cublasLtMatrixLayoutSetAttribute";
  tprtFakeCount(call, 1);
  auto *l = reinterpret_cast<Layout *>(layout);
  if (!isLive(l) || !buf)
    return fail(call, CUBLAS_STATUS_INVALID_VALUE);
  if (attribute == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT &&
      bytes == sizeof(int32_t)) {
    std::memcpy(&l->batch, buf, bytes);
    return l->batch >= 1 ? CUBLAS_STATUS_SUCCESS
                         : fail(call, CUBLAS_STATUS_INVALID_VALUE);
  }
  if (attribute == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET &&
      bytes == sizeof(int64_t)) {
    std::memcpy(&l->stride, buf, bytes);
    return CUBLAS_STATUS_SUCCESS;
  }
  return fail(call, CUBLAS_STATUS_NOT_SUPPORTED);
}

cublasStatus_t
cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *preference) {
  tprtFakeCount("cublasLtMatmulPreferenceCreate", 1);
  *preference =
      reinterpret_cast<cublasLtMatmulPreference_t>(made(new uint64_t(0)));
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t preference) {
  return destroy("cublasLtMatmulPreferenceDestroy",
                 reinterpret_cast<uint64_t *>(preference));
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t preference,
    cublasLtMatmulPreferenceAttributes_t attribute, const void *buf,
    size_t bytes) {
  const char *call = "cublasLtMatmulPreferenceSetAttribute";
  tprtFakeCount(call, 1);
  auto *workspace = reinterpret_cast<uint64_t *>(preference);
  if (!isLive(workspace) || !buf)
    return fail(call, CUBLAS_STATUS_INVALID_VALUE);
  if (attribute == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES &&
      bytes == sizeof(uint64_t)) {
    std::memcpy(workspace, buf, bytes);
    return CUBLAS_STATUS_SUCCESS;
  }
  bool alignment = attribute == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES ||
                   attribute == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES ||
                   attribute == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES ||
                   attribute == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES;
  if (alignment && bytes == sizeof(uint32_t))
    return CUBLAS_STATUS_SUCCESS;
  return fail(call, CUBLAS_STATUS_NOT_SUPPORTED);
}

/// One algorithm, asking for a quarter of the workspace the preference
/// allows (as a split-K algorithm would).
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
    cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
    cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
    cublasLtMatmulPreference_t preference, int requested,
    cublasLtMatmulHeuristicResult_t results[], int *returned) {
  const char *call = "cublasLtMatmulAlgoGetHeuristic";
  tprtFakeCount(call, 1);
  if (!isLive(handle) || !isLive(desc) || !isLive(a) || !isLive(b) ||
      !isLive(c) || !isLive(d) || !isLive(preference) || requested < 1)
    return fail(call, CUBLAS_STATUS_INVALID_VALUE);
  results[0] = cublasLtMatmulHeuristicResult_t{};
  results[0].workspaceSize = *reinterpret_cast<uint64_t *>(preference) / 4;
  results[0].state = CUBLAS_STATUS_SUCCESS;
  results[0].wavesCount = 1.0f;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
               const void *alpha, const void *a, cublasLtMatrixLayout_t aDesc,
               const void *b, cublasLtMatrixLayout_t bDesc, const void *beta,
               const void *c, cublasLtMatrixLayout_t cDesc, void *d,
               cublasLtMatrixLayout_t dDesc, const cublasLtMatmulAlgo_t *algo,
               void *workspace, size_t workspaceBytes, cudaStream_t stream) {
  const char *call = "cublasLtMatmul";
  tprtFakeCount(call, 1);
  if (!isLive(handle))
    return fail(call, CUBLAS_STATUS_NOT_INITIALIZED);
  auto *op = reinterpret_cast<Op *>(desc);
  auto *la = reinterpret_cast<Layout *>(aDesc);
  auto *lb = reinterpret_cast<Layout *>(bDesc);
  auto *lc = reinterpret_cast<Layout *>(cDesc);
  auto *ld = reinterpret_cast<Layout *>(dDesc);
  if (!isLive(op) || !isLive(la) || !isLive(lb) || !isLive(lc) || !isLive(ld) ||
      !alpha || !beta || !algo)
    return fail(call, CUBLAS_STATUS_INVALID_VALUE);
  tprtFakeCount("gemm.matrices", ld->batch);
  // op(A) is m x k, op(B) k x n, C and D m x n (column-major).
  uint64_t m = ld->rows, n = ld->cols;
  bool ta = op->transA != CUBLAS_OP_N, tb = op->transB != CUBLAS_OP_N;
  uint64_t am = ta ? la->cols : la->rows, ak = ta ? la->rows : la->cols;
  uint64_t bk = tb ? lb->cols : lb->rows, bn = tb ? lb->rows : lb->cols;
  if (am != m || bn != n || ak != bk || lc->rows != m || lc->cols != n ||
      la->batch != ld->batch || lb->batch != ld->batch ||
      lc->batch != ld->batch)
    return fail(call, CUBLAS_STATUS_INVALID_VALUE);
  const char *computeType = computeName(op->compute, la->type);
  const char *epilogue = epilogueName(op->epilogue);
  if (!computeType || !epilogue || op->scale != CUDA_R_32F ||
      la->type != lb->type || la->type != lc->type || la->type != ld->type)
    return fail(call, CUBLAS_STATUS_NOT_SUPPORTED);
  tprtFakeCount((std::string("gemm.compute.") + computeType).c_str(), 1);
  if (op->epilogue != CUBLASLT_EPILOGUE_DEFAULT)
    tprtFakeCount((std::string("gemm.epilogue.") + epilogue).c_str(), 1);
  std::vector<FakeRange> ranges;
  if (!inDevice(a, *la, ranges) || !inDevice(b, *lb, ranges) ||
      !inDevice(c, *lc, ranges) || !inDevice(d, *ld, ranges))
    return fail(call, CUBLAS_STATUS_INVALID_VALUE);
  if (op->epilogue & CUBLASLT_EPILOGUE_BIAS) {
    size_t bytes = m * elementSize(ld->type);
    ranges.push_back({reinterpret_cast<uintptr_t>(op->bias), bytes});
    if (!tprtFakeIsDevice(reinterpret_cast<uintptr_t>(op->bias), bytes))
      return fail(call, CUBLAS_STATUS_INVALID_VALUE);
  }
  if (workspaceBytes) {
    ranges.push_back({reinterpret_cast<uintptr_t>(workspace), workspaceBytes});
    if (!tprtFakeIsDevice(reinterpret_cast<uintptr_t>(workspace),
                          workspaceBytes))
      return fail(call, CUBLAS_STATUS_INVALID_VALUE);
  }
  tprtFakeCapture(stream, call, ranges.data(), static_cast<int>(ranges.size()));
  return CUBLAS_STATUS_SUCCESS;
}

} // extern "C"
