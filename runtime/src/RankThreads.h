//===- RankThreads.h - A session's rank threads -----------------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Where every rank of a session's world lives in this process (`local`,
// `device`, `nccl`), each rank runs on a thread of its own. The threads are
// started once, when the session is made, and kept until it is destroyed: a
// run hands each of them its rank's work and wakes them, instead of starting
// and joining a thread per rank per run. A thread keeps its core (pinned when
// the ranks outnumber the cores, Affinity.h) and, on a GPU world, its
// device's context current, from run to run.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_SRC_RANKTHREADS_H
#define TPRT_SRC_RANKTHREADS_H

#include "Internal.h"

#include <chrono>
#include <memory>
#include <thread>

namespace tprt {

/// Waits until `ready()` for at most kSpinMicros, yielding the core between
/// looks (ranks may outnumber the cores), and says whether it became true:
/// how a thread that is about to sleep on a condition variable catches an
/// event that comes within microseconds without two system calls.
constexpr int kSpinMicros = 50;
template <typename Ready> bool spinUntil(Ready ready) {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicros);
  for (int i = 0;; ++i) {
    if (ready())
      return true;
    if ((i & 15) == 15 && std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::yield();
  }
}

class RankThreads {
public:
  /// What a thread runs for its rank: `work(arg, rank)`. It must not throw.
  using Work = void (*)(void *arg, int64_t rank);

  /// Starts one thread per rank, rank r's pinned to `cores[r]` when `cores`
  /// is not empty. A thread the system refuses (a process or cgroup limit on
  /// threads) is TPRT_UNAVAILABLE naming the rank and the reason; the threads
  /// already started are stopped and joined first.
  static tprt_status start(int64_t numRanks, const std::vector<int> &cores,
                           std::unique_ptr<RankThreads> &out);
  /// Stops and joins the threads (abandon() first for any that never
  /// return).
  ~RankThreads();

  int64_t size() const { return static_cast<int64_t>(threads.size()); }

  /// Hands every thread `work(arg, rank)` once and returns without waiting:
  /// the work says when it is done. `arg` is kept alive by each thread until
  /// its work returns, so a thread abandoned inside it never sees it freed.
  /// The previous dispatch's work must have returned on every thread not
  /// abandoned.
  void dispatch(Work work, std::shared_ptr<void> arg);
  /// Drops the threads' shared reference to the last dispatch's `arg` (each
  /// thread still running its work holds its own), once every thread not
  /// abandoned has returned from it.
  void release();

  /// Rank `rank`'s thread is stuck in its work (an endless loop in compiled
  /// code): it is detached instead of joined when the threads stop.
  void abandon(int64_t rank);

private:
  struct Shared;
  RankThreads() = default;
  std::shared_ptr<Shared> shared;
  std::vector<std::thread> threads;
  std::vector<bool> abandoned;
};

} // namespace tprt

#endif // TPRT_SRC_RANKTHREADS_H
