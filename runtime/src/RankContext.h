//===- RankContext.h - One rank's context in a run ------------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What the entry points compiled code calls (Entry.cpp, and a GPU target's
// own, cuda/CudaRank.cpp) share: the rank context and how a failure is kept.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_SRC_RANKCONTEXT_H
#define TPRT_SRC_RANKCONTEXT_H

#include "Internal.h"

/// Compiled code reads `rt` at offset 0 (tprt.h); it must stay first.
struct tprt_rank_context_s {
  const tprt_rt_table *rt;
  tprt_communicator *comm;
  /// A GPU rank's state (DeviceRanks::rankState) for its table's entries.
  void *device = nullptr;
  tprt_status error = nullptr;
  /// The host code runs in a graph capture: a failure is the capture's (the
  /// run goes on plainly), not the world's.
  bool capturing = false;
  /// The running program's matmul precision (tprt::MatmulPrecision).
  int32_t matmulPrecision = 0;
  int64_t gemmCalls = 0;
  double gemmFlops = 0, gemmSeconds = 0;
};

namespace tprt {

/// Counts a GEMM of `macs` multiply-adds started at `start`.
inline void recordGemm(tprt_rank_context *ctx, Clock::time_point start,
                       int64_t macs) {
  if (!ctx)
    return;
  ctx->gemmCalls += 1;
  ctx->gemmFlops += 2.0 * static_cast<double>(macs);
  ctx->gemmSeconds +=
      std::chrono::duration<double>(Clock::now() - start).count();
}

/// Keeps the rank's first failure and aborts the other ranks (not in a
/// graph capture: nothing ran); a later one is dropped.
inline void fail(tprt_rank_context *ctx, tprt_status status) {
  if (ctx->error) {
    tprt_status_free(status);
    return;
  }
  ctx->error = status;
  if (!ctx->capturing)
    ctx->comm->abort(status);
}

/// Runs `call` unless the rank already failed; keeps its failure.
template <typename Call> void guarded(tprt_rank_context *ctx, Call call) {
  if (ctx->error)
    return;
  if (tprt_status status = call())
    fail(ctx, status);
}

/// A context for a rank of a GPU world: `table` is its target's, `device`
/// the rank's state that table reads.
tprt_status createRankContext(tprt_communicator *comm,
                              const tprt_rt_table *table, void *device,
                              tprt_rank_context **ctx);

} // namespace tprt

#endif // TPRT_SRC_RANKCONTEXT_H
