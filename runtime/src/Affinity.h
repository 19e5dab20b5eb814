//===- Affinity.h - Which core each rank thread runs on ---------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A local world's ranks are threads. When they outnumber the cores the
// process may run on, the kernel time-slices them and moves them from core
// to core, where a rank refills its cache. Pinning consecutive ranks to one
// core each (ranks 0-1 on the first core, 2-3 on the second, for 4 ranks on
// 2 cores) keeps each rank's data on its core: 1-4% faster on a GPT-2 block
// (bench/bench_cpu.py's 4 devices on 2 cores, in place, interleaved runs).
// Header-only: the tests include it.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_AFFINITY_H
#define TPRT_AFFINITY_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tprt {

/// The core of each of `ranks` rank threads given the cores the process may
/// run on (`allowed`, in order): rank r on allowed[r * |allowed| / ranks],
/// so every core gets an equal share of consecutive ranks. Empty (leave the
/// threads to the kernel) when the ranks fit on the cores, or no core is
/// known.
inline std::vector<int> rankCores(const std::vector<int> &allowed,
                                  int64_t ranks) {
  std::vector<int> cores;
  int64_t n = static_cast<int64_t>(allowed.size());
  if (n == 0 || ranks <= n)
    return cores;
  cores.reserve(static_cast<std::size_t>(ranks));
  for (int64_t r = 0; r < ranks; ++r)
    cores.push_back(allowed[static_cast<std::size_t>(r * n / ranks)]);
  return cores;
}

} // namespace tprt

#endif // TPRT_AFFINITY_H
