//===- Harness.h - Runs a body on every rank of a mesh ----------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The conformance suite is written against the C API and a Harness, which
// starts one rank per device of a mesh with the backend under test: threads
// for `local`; threads on GPUs for `device` and `nccl`, through a proxy that
// moves the suite's host buffers to device memory and back
// (DeviceHarness.cpp); processes under mpirun for `mpi` (MpiHarness.cpp, a
// binary of its own).
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
  /// Why this machine cannot run meshes of up to `ranks` ranks on the
  /// backend (no driver, too few GPUs); empty when it can.
  virtual std::string unavailable(int64_t ranks) const {
    (void)ranks;
    return "";
  }
  /// Whether a run on `mesh` is possible (an MPI job has a fixed number of
  /// processes); tests skip the meshes that are not.
  virtual bool fits(const tprt_mesh &mesh) const {
    (void)mesh;
    return true;
  }
  /// Whether ranks waiting in different groups (not SPMD) are found as a
  /// mismatch at once; the `mpi` backend finds them only at the timeout.
  virtual bool findsCrossGroupWaits() const { return true; }
  /// After a run: every rank's entry of the statuses a test recorded, where
  /// ranks are processes (each filled in only its own).
  virtual void share(std::vector<tprt_code> &codes,
                     std::vector<std::string> &messages) {
    (void)codes;
    (void)messages;
  }
  /// Runs `body` once per device of `mesh`, each with its rank's
  /// communicator, concurrently; returns when all have returned. Ranks wait
  /// at most `timeoutMs` for their groups.
  virtual void run(const tprt_mesh &mesh, int64_t timeoutMs,
                   const std::function<void(tprt_communicator *)> &body) = 0;
};

/// Every backend this build can test.
std::vector<std::shared_ptr<Harness>> allHarnesses();
/// The backends whose ranks keep tensors in host memory (CPU programs' entry
/// points run on them).
std::vector<std::shared_ptr<Harness>> hostHarnesses();

/// The harness of a backend whose ranks keep tensors in device memory.
std::shared_ptr<Harness> makeDeviceHarness(const std::string &backend);

} // namespace tprt::test

#endif // TPRT_TEST_HARNESS_H
