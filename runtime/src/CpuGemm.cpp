//===- CpuGemm.cpp - The CPU target's GEMM library ------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "CpuGemm.h"

#include "Internal.h"

#include <algorithm>
#include <atomic>
#include <cblas.h>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#ifdef TPRT_HAS_ONEDNN
#include <oneapi/dnnl/dnnl.h>

// libgomp's, which oneDNN runs on (declared here: clang's sanitizer builds
// have no omp.h of their own).
extern "C" void omp_set_num_threads(int threads);
#endif

using namespace tprt;

namespace {

/// The threads asked for (0: the libraries' defaults).
std::atomic<int> gemmThreads{0};

struct Choice {
  CpuGemmLibrary library;
  /// TPRT_CPU_GEMM's value when it names no library this runtime has.
  std::string bad;
};

const Choice &choice() {
  static const Choice made = [] {
#ifdef TPRT_HAS_ONEDNN
    Choice c{CpuGemmLibrary::OneDNN, {}};
#else
    Choice c{CpuGemmLibrary::OpenBLAS, {}};
#endif
    const char *env = std::getenv("TPRT_CPU_GEMM");
    if (!env || !*env)
      return c;
    if (std::strcmp(env, "openblas") == 0)
      c.library = CpuGemmLibrary::OpenBLAS;
#ifdef TPRT_HAS_ONEDNN
    else if (std::strcmp(env, "onednn") == 0)
      c.library = CpuGemmLibrary::OneDNN;
#endif
    else
      c.bad = env;
    return c;
  }();
  return made;
}

void openblasSgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                   const float *a, int64_t lda, const float *b, int64_t ldb,
                   float beta, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), 1.0f, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c,
              static_cast<int>(ldc));
}

} // namespace

CpuGemmLibrary tprt::cpuGemmLibrary() { return choice().library; }

const char *tprt::cpuGemmLibraryName(CpuGemmLibrary library) {
  return library == CpuGemmLibrary::OneDNN ? "oneDNN" : "OpenBLAS";
}

tprt_status tprt::checkCpuGemmChoice() {
  const Choice &c = choice();
  if (c.bad.empty())
    return nullptr;
#ifdef TPRT_HAS_ONEDNN
  const char *choices = "'onednn' or 'openblas'";
#else
  const char *choices = "'openblas' (this runtime was built without oneDNN)";
#endif
  return error(TPRT_INVALID_ARGUMENT, "TPRT_CPU_GEMM='", c.bad,
               "' names no CPU GEMM library; expected ", choices);
}

int tprt::cpuGemmThreadsPerRank(int64_t here) {
  if (std::getenv(cpuGemmLibrary() == CpuGemmLibrary::OneDNN
                      ? "OMP_NUM_THREADS"
                      : "OPENBLAS_NUM_THREADS"))
    return 0;
  int cores =
      static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int64_t sharing = std::max<int64_t>(here, 1);
  if (const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
    sharing *= std::max(1, std::atoi(local));
  return std::max(1,
                  cores / static_cast<int>(std::min<int64_t>(sharing, cores)));
}

void tprt::setCpuGemmThreads(int threads) {
  if (threads > 0 && openblas_get_num_threads() != threads)
    openblas_set_num_threads(threads);
  gemmThreads.store(threads, std::memory_order_relaxed);
}

void tprt::cpuSgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                    const float *a, int64_t lda, const float *b, int64_t ldb,
                    float beta, float *c, int64_t ldc) {
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    // An empty sum: C stays (beta 1) or is zeros (beta 0); oneDNN would
    // leave C's old contents either way.
    if (beta == 0.0f)
      for (int64_t r = 0; r < m; ++r)
        std::memset(c + r * ldc, 0, static_cast<size_t>(n) * sizeof(float));
    else if (beta != 1.0f)
      for (int64_t r = 0; r < m; ++r)
        for (int64_t q = 0; q < n; ++q)
          c[r * ldc + q] *= beta;
    return;
  }
#ifdef TPRT_HAS_ONEDNN
  if (cpuGemmLibrary() == CpuGemmLibrary::OneDNN) {
    // OpenMP's thread count is the calling thread's own setting: each rank
    // thread sets it when the session's count changes.
    thread_local int threadsHere = 0;
    int threads = gemmThreads.load(std::memory_order_relaxed);
    if (threads > 0 && threads != threadsHere) {
      omp_set_num_threads(threads);
      threadsHere = threads;
    }
    if (dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, 1.0f, a,
                   lda, b, ldb, beta, c, ldc) == dnnl_success)
      return;
  }
#endif
  openblasSgemm(transA, transB, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

extern "C" {

const char *tprt_cpu_gemm_library(void) {
  return cpuGemmLibraryName(cpuGemmLibrary());
}

int32_t tprt_cpu_gemm_share_cores(int64_t local_ranks) {
  int threads = cpuGemmThreadsPerRank(local_ranks);
  setCpuGemmThreads(threads);
  return threads;
}

} // extern "C"
