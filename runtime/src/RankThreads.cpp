//===- RankThreads.cpp - A session's rank threads -------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The threads wait on one condition variable for a new generation of work.
// Everything they read is in `Shared`, which each thread holds a reference
// to: a thread detached while stuck in its work (abandon) outlives the
// RankThreads that made it without touching freed memory.
//
//===----------------------------------------------------------------------===//

#include "RankThreads.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <pthread.h>
#include <sched.h>
#include <system_error>

using namespace tprt;

struct RankThreads::Shared {
  std::mutex mutex;
  std::condition_variable wake;
  /// Bumped by each dispatch (under `mutex`, read without it while a thread
  /// spins); a thread runs the work once per generation.
  std::atomic<uint64_t> generation{0};
  std::atomic<bool> stopping{false};
  Work work = nullptr;
  std::shared_ptr<void> arg;
};

namespace {

void pinToCore(int core) {
  if (core < 0)
    return;
  // Best effort: a refusal leaves the thread where the kernel puts it.
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  (void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

} // namespace

tprt_status RankThreads::start(int64_t numRanks, const std::vector<int> &cores,
                               std::unique_ptr<RankThreads> &out) {
  std::unique_ptr<RankThreads> made(new RankThreads());
  made->shared = std::make_shared<Shared>();
  made->threads.reserve(static_cast<size_t>(numRanks));
  made->abandoned.assign(static_cast<size_t>(numRanks), false);
  for (int64_t rank = 0; rank < numRanks; ++rank) {
    int core = cores.empty() ? -1 : cores[static_cast<size_t>(rank)];
    try {
      made->threads.emplace_back([shared = made->shared, rank, core] {
        pinToCore(core);
        uint64_t seen = 0;
        for (;;) {
          Work work;
          std::shared_ptr<void> arg;
          // A loop of runs dispatches again within microseconds: a thread
          // that watches for it a while is woken without a system call.
          spinUntil([&] {
            return shared->stopping.load(std::memory_order_acquire) ||
                   shared->generation.load(std::memory_order_acquire) != seen;
          });
          {
            std::unique_lock<std::mutex> lock(shared->mutex);
            shared->wake.wait(lock, [&] {
              return shared->stopping || shared->generation != seen;
            });
            if (shared->stopping)
              return;
            seen = shared->generation;
            work = shared->work;
            arg = shared->arg;
          }
          work(arg.get(), rank);
        }
      });
    } catch (const std::system_error &e) {
      // `made`'s destructor stops and joins the threads that did start.
      return error(TPRT_UNAVAILABLE, "cannot start the thread of rank ", rank,
                   " of ", numRanks, ": ", e.what(),
                   " (this process may not have that many threads: see "
                   "`ulimit -u` and the cgroup's pids.max; run fewer ranks "
                   "per process, e.g. one per process under mpirun)");
    }
  }
  out = std::move(made);
  return nullptr;
}

RankThreads::~RankThreads() {
  {
    std::lock_guard<std::mutex> lock(shared->mutex);
    shared->stopping = true;
    // Nothing left for the threads to hold.
    shared->arg.reset();
  }
  shared->wake.notify_all();
  for (size_t i = 0; i < threads.size(); ++i) {
    if (abandoned[i])
      threads[i].detach();
    else
      threads[i].join();
  }
}

void RankThreads::dispatch(Work work, std::shared_ptr<void> arg) {
  {
    std::lock_guard<std::mutex> lock(shared->mutex);
    shared->work = work;
    shared->arg = std::move(arg);
    shared->generation.fetch_add(1, std::memory_order_release);
  }
  // A system call only for threads that stopped spinning and sleep.
  shared->wake.notify_all();
}

void RankThreads::release() {
  std::lock_guard<std::mutex> lock(shared->mutex);
  shared->arg.reset();
}

void RankThreads::abandon(int64_t rank) {
  abandoned[static_cast<size_t>(rank)] = true;
}
