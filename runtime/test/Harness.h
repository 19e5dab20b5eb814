//===- Harness.h - Runs a body on every rank of a mesh ----------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The conformance suite is written against the C API and a Harness, which
// starts one rank per device of a mesh with the backend under test: threads
// for `local`; processes under mpirun for the MPI and NCCL backends to come.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_TEST_HARNESS_H
#define TPRT_TEST_HARNESS_H

#include "tprt/tprt.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tprt::test {

class Harness {
public:
  virtual ~Harness() = default;
  virtual std::string name() const = 0;
  /// Runs `body` once per device of `mesh`, each with its rank's
  /// communicator, concurrently; returns when all have returned. Ranks wait
  /// at most `timeoutMs` for their groups.
  virtual void run(const tprt_mesh &mesh, int64_t timeoutMs,
                   const std::function<void(tprt_communicator *)> &body) = 0;
};

/// Every backend this build can test.
std::vector<std::shared_ptr<Harness>> allHarnesses();

} // namespace tprt::test

#endif // TPRT_TEST_HARNESS_H
