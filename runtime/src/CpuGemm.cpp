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
#include <map>
#include <string>
#include <thread>
#include <vector>

#ifdef TPRT_HAS_ONEDNN
#include <oneapi/dnnl/dnnl.h>

// libgomp's, which oneDNN runs on (declared here: clang's sanitizer builds
// have no omp.h of their own). GOMP_parallel is what GCC compiles
// `#pragma omp parallel` to (libgomp's ABI since GCC 4.9).
extern "C" {
void omp_set_num_threads(int threads);
int omp_get_max_threads(void);
int omp_get_num_threads(void);
int omp_get_thread_num(void);
void GOMP_parallel(void (*fn)(void *), void *data, unsigned threads,
                   unsigned flags);
}
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

#ifdef TPRT_HAS_ONEDNN
/// Gives the calling thread's OpenMP team, which oneDNN runs on, the
/// session's thread count: OpenMP's count is each thread's own setting, so
/// each rank thread sets it when the count changes.
void followGemmThreads() {
  thread_local int threadsHere = 0;
  int threads = gemmThreads.load(std::memory_order_relaxed);
  if (threads > 0 && threads != threadsHere) {
    omp_set_num_threads(threads);
    threadsHere = threads;
  }
}
#endif

#ifdef TPRT_HAS_ONEDNN
// ThreadSanitizer does not see libgomp's hand-offs (it is not instrumented):
// a parallel_for's fork and join are told to it as a release and an acquire.
#if defined(__SANITIZE_THREAD__)
#define TPRT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TPRT_TSAN 1
#endif
#endif
#ifdef TPRT_TSAN
extern "C" void __tsan_acquire(void *addr);
extern "C" void __tsan_release(void *addr);
void tsanAcquire(void *addr) { __tsan_acquire(addr); }
void tsanRelease(void *addr) { __tsan_release(addr); }
#else
void tsanAcquire(void *) {}
void tsanRelease(void *) {}
#endif

struct ParallelFor {
  void (*body)(void *, int64_t, int64_t);
  void *args;
  int64_t lo, count;
};

/// One team member's share: an equal part of the range, in team order.
void runShare(void *data) {
  tsanAcquire(data);
  const ParallelFor &job = *static_cast<const ParallelFor *>(data);
  int64_t threads = omp_get_num_threads(), me = omp_get_thread_num();
  int64_t begin = job.lo + job.count * me / threads;
  int64_t end = job.lo + job.count * (me + 1) / threads;
  if (begin < end)
    job.body(job.args, begin, end);
  tsanRelease(data);
}
#endif

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

void tprt::cpuParallelFor(void (*body)(void *, int64_t, int64_t), void *args,
                          int64_t lo, int64_t hi) {
  int64_t count = hi - lo;
#ifdef TPRT_HAS_ONEDNN
  // OpenBLAS's GEMMs run on its own threads, which an OpenMP team's, spinning
  // between parallel regions, would nearly halve in speed (measured: the
  // GPT-2-small block 39 -> 69 ms on 2 cores): those ranks stay alone.
  if (cpuGemmLibrary() == CpuGemmLibrary::OneDNN) {
    followGemmThreads();
    int threads = gemmThreads.load(std::memory_order_relaxed);
    if (threads <= 0)
      threads = omp_get_max_threads();
    threads = static_cast<int>(std::min<int64_t>(threads, count));
    if (threads > 1) {
      ParallelFor job{body, args, lo, count};
      tsanRelease(&job);
      GOMP_parallel(runShare, &job, static_cast<unsigned>(threads), 0);
      tsanAcquire(&job);
      return;
    }
  }
#endif
  if (count > 0)
    body(args, lo, hi);
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
    followGemmThreads();
    if (dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, 1.0f, a,
                   lda, b, ldb, beta, c, ldc) == dnnl_success)
      return;
  }
#endif
  openblasSgemm(transA, transB, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

#ifdef TPRT_HAS_ONEDNN
namespace {

/// A matmul primitive of one shape, with its memory objects (their data
/// handles set per call); `prim` null where oneDNN cannot run the shape here.
struct NarrowMatmul {
  dnnl_primitive_t prim = nullptr;
  dnnl_memory_t a = nullptr, b = nullptr, d = nullptr, bias = nullptr;
};

/// A rank thread's oneDNN engine, stream and primitives (made on first use,
/// destroyed with the thread).
struct OneDnnThread {
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;
  bool broken = false;
  std::map<std::vector<int64_t>, NarrowMatmul> matmuls;

  ~OneDnnThread() {
    for (auto &[key, mm] : matmuls) {
      for (dnnl_memory_t mem : {mm.a, mm.b, mm.d, mm.bias})
        if (mem)
          dnnl_memory_destroy(mem);
      if (mm.prim)
        dnnl_primitive_destroy(mm.prim);
    }
    if (stream)
      dnnl_stream_destroy(stream);
    if (engine)
      dnnl_engine_destroy(engine);
  }

  bool start() {
    if (engine || broken)
      return !broken;
    broken = dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success ||
             dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) !=
                 dnnl_success;
    return !broken;
  }

  /// The primitive for `key`'s shape, made the first time.
  const NarrowMatmul &matmul(const std::vector<int64_t> &key) {
    auto [it, fresh] = matmuls.try_emplace(key);
    if (!fresh)
      return it->second;
    NarrowMatmul &mm = it->second;
    bool half = key[0], transA = key[1], transB = key[2];
    int64_t m = key[3], n = key[4], k = key[5], lda = key[6], ldb = key[7],
            ldd = key[8];
    bool accumulate = key[9], withBias = key[10], gelu = key[11];
    dnnl_data_type_t type = half ? dnnl_f16 : dnnl_bf16;
    dnnl_memory_desc_t aDesc, bDesc, dDesc, biasDesc;
    dnnl_dims_t aDims = {m, k}, aStrides = {transA ? 1 : lda, transA ? lda : 1};
    dnnl_dims_t bDims = {k, n}, bStrides = {transB ? 1 : ldb, transB ? ldb : 1};
    dnnl_dims_t dDims = {m, n}, dStrides = {ldd, 1};
    dnnl_dims_t biasDims = {1, n}, biasStrides = {n, 1};
    if (dnnl_memory_desc_init_by_strides(&aDesc, 2, aDims, type, aStrides) ||
        dnnl_memory_desc_init_by_strides(&bDesc, 2, bDims, type, bStrides) ||
        dnnl_memory_desc_init_by_strides(&dDesc, 2, dDims, type, dStrides) ||
        dnnl_memory_desc_init_by_strides(&biasDesc, 2, biasDims, type,
                                         biasStrides))
      return mm;
    dnnl_matmul_desc_t desc;
    if (dnnl_matmul_desc_init(&desc, &aDesc, &bDesc,
                              withBias ? &biasDesc : nullptr, &dDesc))
      return mm;
    // D's old value, then GELU: act(A B + bias + D), as tprt_rt_gemm says.
    dnnl_primitive_attr_t attr = nullptr;
    dnnl_post_ops_t ops = nullptr;
    bool made =
        dnnl_primitive_attr_create(&attr) == dnnl_success &&
        dnnl_post_ops_create(&ops) == dnnl_success &&
        (!accumulate || dnnl_post_ops_append_sum(ops, 1.0f) == dnnl_success) &&
        (!gelu ||
         dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_gelu_tanh, 0.0f,
                                      0.0f) == dnnl_success) &&
        dnnl_primitive_attr_set_post_ops(attr, ops) == dnnl_success;
    dnnl_primitive_desc_t pd = nullptr;
    // Where oneDNN declines the shape (no bf16 kernels without AVX-512, no
    // f16 ones without AVX512-FP16), no primitive: the caller widens to f32.
    if (made && dnnl_primitive_desc_create(&pd, &desc, attr, engine, nullptr) ==
                    dnnl_success) {
      if (dnnl_primitive_create(&mm.prim, pd) != dnnl_success)
        mm.prim = nullptr;
      dnnl_primitive_desc_destroy(pd);
    }
    if (ops)
      dnnl_post_ops_destroy(ops);
    if (attr)
      dnnl_primitive_attr_destroy(attr);
    if (mm.prim &&
        (dnnl_memory_create(&mm.a, &aDesc, engine, DNNL_MEMORY_NONE) ||
         dnnl_memory_create(&mm.b, &bDesc, engine, DNNL_MEMORY_NONE) ||
         dnnl_memory_create(&mm.d, &dDesc, engine, DNNL_MEMORY_NONE) ||
         (withBias &&
          dnnl_memory_create(&mm.bias, &biasDesc, engine, DNNL_MEMORY_NONE)))) {
      dnnl_primitive_destroy(mm.prim);
      mm.prim = nullptr;
    }
    return mm;
  }
};

} // namespace
#endif

bool tprt::cpuNarrowGemm(bool half, bool transA, bool transB, int64_t m,
                         int64_t n, int64_t k, const void *a, int64_t lda,
                         const void *b, int64_t ldb, bool accumulate,
                         const void *bias, bool gelu, void *d, int64_t ldd) {
#ifdef TPRT_HAS_ONEDNN
  if (cpuGemmLibrary() != CpuGemmLibrary::OneDNN || m == 0 || n == 0 || k == 0)
    return false;
  thread_local OneDnnThread onednn;
  if (!onednn.start())
    return false;
  followGemmThreads();
  const NarrowMatmul &mm =
      onednn.matmul({half, transA, transB, m, n, k, lda, ldb, ldd, accumulate,
                     bias != nullptr, gelu});
  if (!mm.prim)
    return false;
  dnnl_memory_set_data_handle(mm.a, const_cast<void *>(a));
  dnnl_memory_set_data_handle(mm.b, const_cast<void *>(b));
  dnnl_memory_set_data_handle(mm.d, d);
  std::vector<dnnl_exec_arg_t> args = {
      {DNNL_ARG_SRC, mm.a}, {DNNL_ARG_WEIGHTS, mm.b}, {DNNL_ARG_DST, mm.d}};
  if (bias) {
    dnnl_memory_set_data_handle(mm.bias, const_cast<void *>(bias));
    args.push_back({DNNL_ARG_BIAS, mm.bias});
  }
  return dnnl_primitive_execute(mm.prim, onednn.stream,
                                static_cast<int>(args.size()),
                                args.data()) == dnnl_success &&
         dnnl_stream_wait(onednn.stream) == dnnl_success;
#else
  (void)half, (void)transA, (void)transB, (void)m, (void)n, (void)k, (void)a,
      (void)lda, (void)b, (void)ldb, (void)accumulate, (void)bias, (void)gelu,
      (void)d, (void)ldd;
  return false;
#endif
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
