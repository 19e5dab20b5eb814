//===- tprt-bench.cpp - The local communicator's bandwidth ----------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// tprt-bench [ranks] [megabytes] [iterations]
//
// Times an f32 sum all_reduce of `megabytes` per rank over `ranks` threads
// of the local communicator, against one memcpy of the same bytes, and
// prints both bandwidths (bytes of one rank's tensor per second) and their
// ratio. Best of `iterations`.
//
//===----------------------------------------------------------------------===//

#include "tprt/tprt.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

int main(int argc, char **argv) {
  int64_t ranks = argc > 1 ? std::atoll(argv[1]) : 4;
  double megabytes = argc > 2 ? std::atof(argv[2]) : 16;
  int iterations = argc > 3 ? std::atoi(argv[3]) : 10;
  int64_t count = static_cast<int64_t>(megabytes * 1e6 / 4);
  size_t bytes = static_cast<size_t>(count) * 4;
  using Clock = std::chrono::steady_clock;

  // memcpy of the same bytes, best of `iterations`.
  std::vector<float> src(count, 1.0f), dst(count);
  double copy = 1e300;
  for (int i = 0; i < iterations; ++i) {
    auto start = Clock::now();
    std::memcpy(dst.data(), src.data(), bytes);
    copy = std::min(
        copy, std::chrono::duration<double>(Clock::now() - start).count());
  }

  tprt_mesh mesh = {1, {ranks}};
  tprt_world *world = nullptr;
  if (tprt_status s = tprt_world_create(&mesh, nullptr, &world)) {
    std::fprintf(stderr, "tprt-bench: %s\n", tprt_status_message(s));
    return 2;
  }
  tprt_axes axes = {1, {0}};
  std::vector<std::vector<float>> in(ranks, std::vector<float>(count, 1.0f)),
      out(ranks, std::vector<float>(count));
  std::vector<double> rankBest(ranks, 1e300);
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      tprt_communicator *comm = nullptr;
      tprt_status_free(tprt_world_communicator(world, r, &comm));
      for (int i = 0; i < iterations; ++i) {
        tprt_status_free(tprt_barrier(comm, &axes));
        auto start = Clock::now();
        tprt_status s = tprt_all_reduce(comm, in[r].data(), out[r].data(),
                                        count, TPRT_F32, TPRT_SUM, &axes);
        rankBest[r] = std::min(
            rankBest[r],
            std::chrono::duration<double>(Clock::now() - start).count());
        tprt_status_free(s);
      }
    });
  for (std::thread &t : threads)
    t.join();
  tprt_world_destroy(world);
  double reduce = *std::max_element(rankBest.begin(), rankBest.end());
  bool correct = out[0][0] == static_cast<float>(ranks);
  std::printf("all_reduce f32 sum, %lld ranks, %.1f MB per rank: %.3f ms, "
              "%.2f GB/s; memcpy of %.1f MB: %.3f ms, %.2f GB/s; "
              "all_reduce / memcpy time: %.2fx%s\n",
              static_cast<long long>(ranks), bytes / 1e6, reduce * 1e3,
              bytes / reduce / 1e9, bytes / 1e6, copy * 1e3, bytes / copy / 1e9,
              reduce / copy, correct ? "" : " (WRONG RESULT)");
  return correct ? 0 : 1;
}
