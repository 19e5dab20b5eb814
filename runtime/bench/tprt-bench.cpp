//===- tprt-bench.cpp - The local communicator's bandwidth ----------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// tprt-bench [--comm NAME] [ranks] [megabytes] [iterations]
// tprt-bench --calibrate FILE [--comm NAME] [--ranks N]
//
// Times an f32 sum all_reduce of `megabytes` per rank over `ranks` ranks of
// a communicator backend (default local: threads; mpi: run it under
// `mpirun -np ranks`, one rank a process), against one memcpy of the same
// bytes, and prints both bandwidths (bytes of one rank's tensor per second)
// and their ratio. Best of `iterations` per rank, slowest rank. bench/
// bench_comm.py sweeps sizes and backends.
//
// With --calibrate, measures the machine model automatic planning reads
// (collectives, GEMM rate, memory bandwidth on N ranks at once, default 4;
// Calibrate.cpp) and writes it to FILE.
//
//===----------------------------------------------------------------------===//

#include "Calibrate.h"

#include "tprt/tprt.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

/// tprt-bench --calibrate FILE [--comm NAME] [--ranks N].
int calibrateMain(int argc, char **argv) {
  const char *backend = "local";
  const char *path = nullptr;
  int64_t ranks = 4;
  for (int i = 1; i < argc; ++i) {
    bool hasValue = i + 1 < argc;
    if (std::strcmp(argv[i], "--calibrate") == 0 && hasValue)
      path = argv[++i];
    else if (std::strcmp(argv[i], "--comm") == 0 && hasValue)
      backend = argv[++i];
    else if (std::strcmp(argv[i], "--ranks") == 0 && hasValue)
      ranks = std::atoll(argv[++i]);
    else {
      std::fprintf(stderr,
                   "tprt-bench: unexpected '%s'\nusage: tprt-bench "
                   "--calibrate FILE [--comm NAME] [--ranks N]\n",
                   argv[i]);
      return 2;
    }
  }
  if (!path || ranks < 2 || ranks > 1024) {
    std::fprintf(stderr, "tprt-bench: --calibrate needs a FILE and --ranks "
                         "from 2 to 1024\n");
    return 2;
  }
  return tprtCalibrate(backend, ranks, path);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--calibrate") == 0)
      return calibrateMain(argc, argv);
  const char *backend = "local";
  if (argc > 2 && std::strcmp(argv[1], "--comm") == 0) {
    backend = argv[2];
    argc -= 2;
    argv += 2;
  }
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
  tprt_world_options options = TPRT_WORLD_OPTIONS_INIT;
  options.backend = backend;
  tprt_world *world = nullptr;
  if (tprt_status s = tprt_world_create(&mesh, &options, &world)) {
    std::fprintf(stderr, "tprt-bench: %s\n", tprt_status_message(s));
    return 2;
  }
  tprt_axes axes = {1, {0}};
  // This process's ranks (every rank for `local`, one for `mpi`).
  int64_t here = tprt_world_num_local_ranks(world);
  std::vector<std::vector<float>> in(here, std::vector<float>(count, 1.0f)),
      out(here, std::vector<float>(count));
  std::vector<double> rankBest(here, 1e300);
  std::vector<std::thread> threads;
  std::vector<int> wrong(here, 0);
  for (int64_t i = 0; i < here; ++i)
    threads.emplace_back([&, i] {
      tprt_communicator *comm = nullptr;
      tprt_status_free(tprt_world_communicator(
          world, tprt_world_local_rank(world, i), &comm));
      for (int it = 0; it < iterations; ++it) {
        tprt_status_free(tprt_barrier(comm, &axes));
        auto start = Clock::now();
        tprt_status s = tprt_all_reduce(comm, in[i].data(), out[i].data(),
                                        count, TPRT_F32, TPRT_SUM, &axes);
        rankBest[i] = std::min(
            rankBest[i],
            std::chrono::duration<double>(Clock::now() - start).count());
        wrong[i] |= s != nullptr || out[i][0] != static_cast<float>(ranks);
        tprt_status_free(s);
      }
      // The slowest rank's best, and whether any was wrong, everywhere.
      double mine[2] = {rankBest[i], static_cast<double>(wrong[i])}, worst[2];
      tprt_status_free(
          tprt_all_reduce(comm, mine, worst, 2, TPRT_F64, TPRT_MAX, &axes));
      rankBest[i] = worst[0];
      wrong[i] = worst[1] != 0;
    });
  for (std::thread &t : threads)
    t.join();
  bool root = tprt_world_local_rank(world, 0) == 0;
  tprt_world_destroy(world);
  double reduce = rankBest[0];
  bool correct = !wrong[0];
  if (root)
    std::printf("all_reduce f32 sum, %s, %lld ranks, %.3f MB per rank: "
                "%.3f ms, %.2f GB/s; memcpy of %.3f MB: %.3f ms, %.2f GB/s; "
                "all_reduce / memcpy time: %.2fx%s\n",
                backend, static_cast<long long>(ranks), bytes / 1e6,
                reduce * 1e3, bytes / reduce / 1e9, bytes / 1e6, copy * 1e3,
                bytes / copy / 1e9, reduce / copy,
                correct ? "" : " (WRONG RESULT)");
  return correct ? 0 : 1;
}
