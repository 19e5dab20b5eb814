//===- LocalHarness.cpp - Ranks as threads --------------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include "gtest/gtest.h"

#include <thread>

namespace tprt::test {
namespace {

class LocalHarness : public Harness {
public:
  std::string name() const override { return "local"; }
  void run(const tprt_mesh &mesh, int64_t timeoutMs,
           const std::function<void(tprt_communicator *)> &body) override {
    tprt_world_options options = TPRT_WORLD_OPTIONS_INIT;
    options.backend = "local";
    options.timeout_ms = timeoutMs;
    tprt_world *world = nullptr;
    tprt_status status = tprt_world_create(&mesh, &options, &world);
    ASSERT_EQ(status, nullptr) << tprt_status_message(status);
    std::vector<std::thread> threads;
    for (int64_t rank = 0; rank < tprt_mesh_num_devices(&mesh); ++rank) {
      tprt_communicator *comm = nullptr;
      status = tprt_world_communicator(world, rank, &comm);
      ASSERT_EQ(status, nullptr) << tprt_status_message(status);
      threads.emplace_back([&body, comm] { body(comm); });
    }
    for (std::thread &t : threads)
      t.join();
    tprt_world_destroy(world);
  }
};

} // namespace

std::vector<std::shared_ptr<Harness>> hostHarnesses() {
  return {std::make_shared<LocalHarness>()};
}

std::vector<std::shared_ptr<Harness>> allHarnesses() {
  return {std::make_shared<LocalHarness>(), makeDeviceHarness("device"),
          makeDeviceHarness("nccl")};
}

} // namespace tprt::test
