//===- FakeCuda.h - What the counting fakes share ---------------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The counting fake of the CUDA driver (libcuda.so.1), cuBLAS
// (libcublas.so.13) and NCCL (libnccl.so.2): libraries of those names that
// libtprt opens instead of NVIDIA's when their directory comes first on
// LD_LIBRARY_PATH. Host memory stands in for device memory; nothing is
// computed (a kernel launch, a GEMM and a collective are counted and their
// arguments checked, not run), copies are real. Every call is counted, and
// so are the bytes each kind of copy moves; the census is written at exit
// to the file TPRT_FAKE_CUDA_CENSUS names (appended, one `name count` line
// per counter, a `---` line after them), so a test compares the census of N
// runs with that of one. A call that breaks the API's rules (a device
// pointer outside every live allocation, an unknown stream, event, module
// or handle, a driver call with no current context) fails with the error
// the real library would give and is counted as `error.<call>`.
//
// CUDA graphs: a stream in capture (cuStreamBeginCapture) records the work
// enqueued on it, kernels, copies, GEMMs and collectives, instead of doing
// it; cuGraphLaunch replays the recorded nodes: each is counted as
// `graph.replayed.<call>`, its device ranges are checked again (a graph that
// reads memory freed since its capture fails with
// CUDA_ERROR_ILLEGAL_ADDRESS), and copies are made then. What the real
// driver refuses in a capture is refused and invalidates it: a copy to or
// from pageable host memory, a stream synchronization or query, a
// synchronous allocation on the capturing thread; so is freeing, inside a
// capture, memory allocated outside it.
//
// TPRT_FAKE_CUBLAS_REFUSE_CAPTURE=1 makes the fake cuBLAS refuse a GEMM on a
// capturing stream (CUBLAS_STATUS_NOT_SUPPORTED), as a library that cannot be
// captured would: how the session's fallback to plain launches is tested.
//
// cuBLAS and NCCL link the fake driver and reach its census, its
// allocations and its captures through the functions below.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_FAKECUDA_FAKECUDA_H
#define TPRT_FAKECUDA_FAKECUDA_H

#include <cstddef>
#include <cstdint>

#define FAKE_CUDA_API extern "C" __attribute__((visibility("default")))

/// Adds `n` to counter `name`.
FAKE_CUDA_API void tprtFakeCount(const char *name, long long n);
/// Counter `name` so far (0 if never counted): how a test in the same
/// process reads the census between calls.
FAKE_CUDA_API long long tprtFakeCounter(const char *name);
/// Whether [ptr, ptr + bytes) lies inside one live device allocation.
FAKE_CUDA_API int tprtFakeIsDevice(uintptr_t ptr, size_t bytes);

/// A device range an op reads or writes.
struct FakeRange {
  uintptr_t ptr;
  size_t bytes;
};
/// Whether `stream` (a CUstream) is capturing.
FAKE_CUDA_API int tprtFakeCapturing(const void *stream);
/// When `stream` (a CUstream) is capturing, adds a node for library call
/// `call` that touches `ranges` (checked again at each replay) and returns
/// 1; returns 0 when it is not: the caller does the op now.
FAKE_CUDA_API int tprtFakeCapture(const void *stream, const char *call,
                                  const FakeRange *ranges, int count);

#endif // TPRT_FAKECUDA_FAKECUDA_H
