//===- Calibrate.cpp - Measure this machine for the planner's model -------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// `tprt-bench --calibrate FILE`: measures what automatic planning's machine
// model needs (docs/cost-model.md), on `ranks` ranks of a communicator
// backend running at once, as a program's ranks do:
//  - each collective at four sizes, best of several calls (slowest rank);
//    the latency is the smallest call's time, the bus bandwidth the
//    least-squares slope of (bus bytes, seconds) above it;
//  - the GEMM rate of one rank while every rank multiplies (the runtime's
//    tprt_rt_sgemm and tprt_rt_gemm_narrow on bf16, 1024^3, with the
//    GEMM threads a session gives each rank, on its CPU GEMM library);
//  - the memory bandwidth of one rank while every rank copies (bytes read
//    and written per second).
// The file is JSON in the format the planner reads ("tp-mlir machine model
// 1"). With an even number of ranks (4 or more) the ranks form a 2 x N/2
// mesh and each collective's smallest call is also timed over groups of 2:
// the latency per device is the slope between the two group sizes (0 when
// negative, or with one group size).
//
//===----------------------------------------------------------------------===//

#include "Calibrate.h"

#include "tprt/tprt.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

/// One rank's part of a measurement: called `iterations` times, each after a
/// barrier of every rank; returns an error status or null.
using RankBody = std::function<tprt_status(int64_t local, tprt_communicator *,
                                           tprt_rank_context *)>;

struct World {
  tprt_world *world = nullptr;
  int64_t here = 0;
  /// Every axis of the mesh: the whole group.
  tprt_axes all = {1, {0}};
  std::vector<tprt_communicator *> comms;
  std::vector<tprt_rank_context *> contexts;

  ~World() {
    for (tprt_rank_context *ctx : contexts)
      tprt_rank_context_destroy(ctx);
    tprt_world_destroy(world);
  }
};

/// The slowest rank's best time of `body` over `iterations` calls; negative
/// on an error (printed).
double timeRanks(World &w, int iterations, const RankBody &body) {
  const tprt_axes &axes = w.all;
  std::vector<double> best(w.here, 1e300);
  std::vector<std::string> errors(w.here);
  std::vector<std::thread> threads;
  for (int64_t i = 0; i < w.here; ++i)
    threads.emplace_back([&, i] {
      tprt_communicator *comm = w.comms[i];
      double failed = 0;
      for (int it = 0; it < iterations; ++it) {
        tprt_status_free(tprt_barrier(comm, &axes));
        auto start = Clock::now();
        tprt_status s = body(i, comm, w.contexts[i]);
        if (!s)
          s = tprt_rank_context_take_status(w.contexts[i]);
        double t = std::chrono::duration<double>(Clock::now() - start).count();
        if (s) {
          errors[i] = tprt_status_message(s);
          tprt_status_free(s);
          failed = 1;
          break;
        }
        best[i] = std::min(best[i], t);
      }
      double mine[2] = {best[i], failed}, worst[2] = {best[i], failed};
      tprt_status_free(
          tprt_all_reduce(comm, mine, worst, 2, TPRT_F64, TPRT_MAX, &axes));
      best[i] = worst[1] != 0 ? -1 : worst[0];
    });
  for (std::thread &t : threads)
    t.join();
  for (const std::string &e : errors)
    if (!e.empty())
      std::fprintf(stderr, "tprt-bench: %s\n", e.c_str());
  return best[0];
}

/// Latency (seconds) and bandwidth (bytes per second) of the line
/// seconds = latency + bytes / bandwidth: the latency is the smallest call's
/// time (its bytes take a negligible part of it), the bandwidth the
/// least-squares slope of the rest through that intercept (a plain
/// least-squares line lets the large calls' noise drive the intercept below
/// zero).
void fitLine(const std::vector<double> &bytes,
             const std::vector<double> &seconds, double &latency,
             double &bandwidth) {
  latency = *std::min_element(seconds.begin(), seconds.end());
  double sbb = 0, sbt = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    sbb += bytes[i] * bytes[i];
    sbt += bytes[i] * (seconds[i] - latency);
  }
  double slope = sbt / sbb;
  if (!(slope > 0))
    slope = seconds.back() / bytes.back();
  bandwidth = 1 / slope;
}

const char *const kKinds[] = {"all_reduce", "all_gather", "reduce_scatter",
                              "all_to_all"};

/// Bus bytes of a collective whose per-rank tensor (as CostModel.h names
/// it) has `bytes`, over n ranks.
double busBytes(int kind, double n, double bytes) {
  switch (kind) {
  case 0:
    return 2 * (n - 1) / n * bytes;
  case 1:
  case 2:
    return (n - 1) / n * bytes;
  default:
    return (n - 1) / (n * n) * bytes;
  }
}

} // namespace

int tprtCalibrate(const char *backend, int64_t ranks, const char *path) {
  World w;
  // Groups of 2 (axis 0) and of all ranks (both axes) where the ranks split
  // so.
  bool twoSizes = ranks >= 4 && ranks % 2 == 0;
  tprt_mesh mesh =
      twoSizes ? tprt_mesh{2, {2, ranks / 2}} : tprt_mesh{1, {ranks}};
  if (twoSizes)
    w.all = {2, {0, 1}};
  tprt_world_options options = TPRT_WORLD_OPTIONS_INIT;
  options.backend = backend;
  if (tprt_status s = tprt_world_create(&mesh, &options, &w.world)) {
    std::fprintf(stderr, "tprt-bench: %s\n", tprt_status_message(s));
    tprt_status_free(s);
    return 2;
  }
  w.here = tprt_world_num_local_ranks(w.world);
  for (int64_t i = 0; i < w.here; ++i) {
    tprt_communicator *comm = nullptr;
    tprt_rank_context *ctx = nullptr;
    tprt_status s = tprt_world_communicator(
        w.world, tprt_world_local_rank(w.world, i), &comm);
    if (!s)
      s = tprt_rank_context_create(comm, &ctx);
    if (s) {
      std::fprintf(stderr, "tprt-bench: %s\n", tprt_status_message(s));
      tprt_status_free(s);
      return 2;
    }
    w.comms.push_back(comm);
    w.contexts.push_back(ctx);
  }
  bool root = tprt_world_local_rank(w.world, 0) == 0;
  // The GEMM threads a session gives each rank of this host.
  tprt_cpu_gemm_share_cores(w.here);
  double n = static_cast<double>(ranks);

  // 1. Collectives: per-rank tensors of 1 KB to 8 MB.
  const double sizes[] = {1 << 10, 32 << 10, 1 << 20, 8 << 20};
  double latency[4], perDevice[4] = {0, 0, 0, 0}, bandwidth[4];
  for (int kind = 0; kind < 4; ++kind) {
    std::vector<double> bus, seconds;
    double pairSeconds = 0;
    for (double size : sizes) {
      // Elements of a rank's input: the model's S is the input for
      // all_reduce and reduce_scatter, the gathered result for all_gather,
      // the group's whole exchanged tensor (n inputs) for all_to_all.
      int64_t count = static_cast<int64_t>(size / 4);
      if (kind == 1 || kind == 3)
        count /= ranks;
      if (kind >= 2)
        count = std::max<int64_t>(count / ranks, 1) * ranks;
      count = std::max<int64_t>(count, 1);
      int64_t outCount = kind == 1   ? count * ranks
                         : kind == 2 ? count / ranks
                                     : count;
      std::vector<std::vector<float>> in(w.here,
                                         std::vector<float>(count, 1.0f));
      // Room for a group of 2 as well (a reduce_scatter keeps half).
      std::vector<std::vector<float>> out(
          w.here, std::vector<float>(std::max(outCount, count)));
      auto call = [&](const tprt_axes &axes) -> RankBody {
        return [&, axes](int64_t i, tprt_communicator *comm,
                         tprt_rank_context *) -> tprt_status {
          int64_t shape[1] = {count};
          switch (kind) {
          case 0:
            return tprt_all_reduce(comm, in[i].data(), out[i].data(), count,
                                   TPRT_F32, TPRT_SUM, &axes);
          case 1:
            return tprt_all_gather(comm, in[i].data(), out[i].data(), shape, 1,
                                   0, TPRT_F32, &axes);
          case 2:
            return tprt_reduce_scatter(comm, in[i].data(), out[i].data(), shape,
                                       1, 0, TPRT_F32, TPRT_SUM, &axes);
          default:
            return tprt_all_to_all(comm, in[i].data(), out[i].data(), shape, 1,
                                   0, 0, TPRT_F32, &axes);
          }
        };
      };
      double t = timeRanks(w, 20, call(w.all));
      if (t < 0)
        return 2;
      // The smallest call over groups of 2 as well (the same per-rank
      // tensor: its bytes are a negligible part of either time).
      if (twoSizes && size == sizes[0]) {
        pairSeconds = timeRanks(w, 20, call(tprt_axes{1, {0}}));
        if (pairSeconds < 0)
          return 2;
      }
      // The model's S: the reduced tensor, the gathered result, the
      // scattered input, the whole group's exchanged tensor.
      double s = 4.0 * static_cast<double>(kind == 1   ? outCount
                                           : kind == 3 ? count * ranks
                                                       : count);
      bus.push_back(busBytes(kind, n, s));
      seconds.push_back(t);
    }
    fitLine(bus, seconds, latency[kind], bandwidth[kind]);
    // latency(n) = latency + per device x (n - 1), through both group sizes;
    // `latency` stays the whole group's measured one.
    if (twoSizes) {
      // Within [0, whole group's / (n - 1)]: the fixed part stays at least 0
      // (timing noise can put the pair far below the whole group).
      perDevice[kind] = std::clamp((latency[kind] - pairSeconds) / (n - 2), 0.0,
                                   latency[kind] / (n - 1));
      latency[kind] -= perDevice[kind] * (n - 1);
      if (latency[kind] < 1e-9)
        latency[kind] = 0;
    }
  }

  // 2. GEMMs, every rank at once: f32 and bf16 storage.
  const int64_t m = 1024;
  std::vector<std::vector<float>> a(w.here, std::vector<float>(m * m, 0.5f)),
      c(w.here, std::vector<float>(m * m));
  std::vector<std::vector<uint16_t>> a16(w.here,
                                         std::vector<uint16_t>(m * m, 0x3f00)),
      c16(w.here, std::vector<uint16_t>(m * m));
  double flops = 2.0 * m * m * m;
  double t32 = timeRanks(w, 3,
                         [&](int64_t i, tprt_communicator *,
                             tprt_rank_context *ctx) -> tprt_status {
                           tprt_rt_sgemm(ctx, 0, 0, 0, m, m, m, a[i].data(), m,
                                         a[i].data(), m, c[i].data(), m, 1, 1,
                                         0, 0, 0, 0, 0, 0);
                           return nullptr;
                         });
  double t16 =
      timeRanks(w, 3,
                [&](int64_t i, tprt_communicator *,
                    tprt_rank_context *ctx) -> tprt_status {
                  tprt_rt_gemm_narrow(ctx, TPRT_BF16, 0, 0, 0, m, m, m,
                                      a16[i].data(), m, a16[i].data(), m,
                                      c16[i].data(), m, 1, 1, 0, 0, 0, 0, 0, 0);
                  return nullptr;
                });
  if (t32 < 0 || t16 < 0)
    return 2;

  // 3. Memory: every rank copies 32 MB at once.
  const size_t copyBytes = 32u << 20;
  std::vector<std::vector<char>> src(w.here, std::vector<char>(copyBytes, 1)),
      dst(w.here, std::vector<char>(copyBytes));
  double tCopy = timeRanks(
      w, 5,
      [&](int64_t i, tprt_communicator *, tprt_rank_context *) -> tprt_status {
        std::memcpy(dst[i].data(), src[i].data(), copyBytes);
        return nullptr;
      });
  if (tCopy < 0)
    return 2;
  if (!root)
    return 0;

  char host[256] = "this machine";
  gethostname(host, sizeof(host) - 1);
  char when[64];
  std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  FILE *f = std::fopen(path, "w");
  if (!f) {
    std::fprintf(stderr, "tprt-bench: cannot write '%s': %s\n", path,
                 std::strerror(errno));
    return 2;
  }
  std::fprintf(f, "{\n  \"format\": \"tp-mlir machine model 1\",\n");
  std::fprintf(f, "  \"name\": \"%s-%s-%lld\",\n", host, backend,
               static_cast<long long>(ranks));
  std::fprintf(f,
               "  \"source\": \"tprt-bench --calibrate on %s, %s: %lld ranks "
               "of the '%s' communicator\",\n",
               host, when, static_cast<long long>(ranks), backend);
  std::fprintf(f,
               "  \"gemm_flops_per_second\": {\"f32\": %.6g, \"f16\": "
               "%.6g},\n",
               flops / t32, flops / t16);
  std::fprintf(f, "  \"memory_bytes_per_second\": %.6g,\n",
               2.0 * static_cast<double>(copyBytes) / tCopy);
  std::fprintf(f, "  \"collectives\": {\n");
  for (int kind = 0; kind < 4; ++kind)
    std::fprintf(f,
                 "    \"%s\": {\"latency_seconds\": %.6g, "
                 "\"latency_per_device_seconds\": %.6g, "
                 "\"bus_bytes_per_second\": %.6g}%s\n",
                 kKinds[kind], latency[kind], perDevice[kind], bandwidth[kind],
                 kind < 3 ? "," : "");
  std::fprintf(f, "  }\n}\n");
  std::fclose(f);
  std::printf("tprt-bench: wrote %s (%lld ranks, '%s'): GEMM %.1f GFLOP/s "
              "f32, %.1f bf16; memory %.2f GB/s; all_reduce %.1f us + "
              "%.2f us per device + %.2f GB/s bus\n",
              path, static_cast<long long>(ranks), backend, flops / t32 / 1e9,
              flops / t16 / 1e9, 2.0 * copyBytes / tCopy / 1e9,
              latency[0] * 1e6, perDevice[0] * 1e6, bandwidth[0] / 1e9);
  return 0;
}
