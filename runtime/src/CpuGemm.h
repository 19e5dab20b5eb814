//===- CpuGemm.h - The CPU target's GEMM library --------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The CPU target's GEMMs go to one of two libraries, chosen once per process:
//  - oneDNN (Debian's libdnnl-dev), where the runtime was built with it: its
//    GEMM kernels are generated at run time for the machine's vector width
//    (AVX2, AVX-512), whatever OPENBLAS_CORETYPE pins;
//  - OpenBLAS, the fallback: where oneDNN is absent, when
//  TPRT_CPU_GEMM=openblas
//    asks for it, and for any call oneDNN refuses.
// Both are called row-major; each rank's calls use setCpuGemmThreads' count
// of threads (OpenBLAS's pool is the process's; oneDNN's OpenMP team is the
// calling rank thread's own).
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_CPUGEMM_H
#define TPRT_CPUGEMM_H

#include "tprt/tprt.h"

#include <cstdint>

namespace tprt {

enum class CpuGemmLibrary { OpenBLAS, OneDNN };

/// The library this process's CPU GEMMs use: TPRT_CPU_GEMM (openblas or
/// onednn) where set and valid, else oneDNN where built with it, else
/// OpenBLAS.
CpuGemmLibrary cpuGemmLibrary();
const char *cpuGemmLibraryName(CpuGemmLibrary library);

/// Null, or an error naming TPRT_CPU_GEMM's bad value and the choices (an
/// unknown name, or onednn in a runtime built without it).
tprt_status checkCpuGemmChoice();

/// The threads each rank's GEMMs use when `here` ranks share this process's
/// cores (and the processes of one MPI job on this host share them too); 0
/// when the library's own variable decides (OPENBLAS_NUM_THREADS for
/// OpenBLAS, OMP_NUM_THREADS for oneDNN).
int cpuGemmThreadsPerRank(int64_t here);

/// The threads each rank's GEMMs use from now on; 0 leaves the libraries'
/// own defaults.
void setCpuGemmThreads(int threads);

/// Runs body(args, lo', hi') over subranges covering [lo, hi) once each, on
/// the calling rank thread's OpenMP team (as many threads as its oneDNN
/// GEMMs use; tprt_rt_parallel_for). Serial where OpenBLAS runs the GEMMs
/// (its own threads and an OpenMP team's would contend) or the runtime has
/// no oneDNN (and no OpenMP).
void cpuParallelFor(void (*body)(void *, int64_t, int64_t), void *args,
                    int64_t lo, int64_t hi);

/// Row-major f32 C = A * B + beta * C, op() as trans_a and trans_b say, on
/// the chosen library (OpenBLAS where oneDNN refuses the call).
void cpuSgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              const float *a, int64_t lda, const float *b, int64_t ldb,
              float beta, float *c, int64_t ldc);

/// D = act(op(A) op(B) (+ D) (+ bias)) on one matrix of f16 (`half`) or
/// bf16, accumulated in f32 and rounded once, through oneDNN's matmul
/// primitive (bf16 dot products where the CPU has them: AVX512_BF16, AMX),
/// made once per shape on the calling thread and kept. False, having done
/// nothing, where oneDNN is absent, not chosen, or cannot run it on this
/// CPU: the caller widens to f32 instead.
bool cpuNarrowGemm(bool half, bool transA, bool transB, int64_t m, int64_t n,
                   int64_t k, const void *a, int64_t lda, const void *b,
                   int64_t ldb, bool accumulate, const void *bias, bool gelu,
                   void *d, int64_t ldd);

} // namespace tprt

#endif // TPRT_CPUGEMM_H
