//===- WorldTest.cpp - Communicator backends by name ----------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tprt/tprt.h"

#include "gtest/gtest.h"

#include <cstddef>
#include <string>

namespace {

TEST(WorldTest, RegistryListsLocalFirst) {
  ASSERT_GE(tprt_num_backends(), 1);
  EXPECT_STREQ(tprt_backend_name(0), "local");
  EXPECT_EQ(tprt_backend_name(-1), nullptr);
  EXPECT_EQ(tprt_backend_name(tprt_num_backends()), nullptr);
}

// The targets (tprt_targets.def) and the backends that run them agree: each
// target's default backend runs it, and every backend runs a known target.
TEST(WorldTest, TargetsAndBackendsAgree) {
  ASSERT_GE(tprt_num_targets(), 2);
  EXPECT_STREQ(tprt_target_name(0), "cpu");
  EXPECT_EQ(tprt_target_name(-1), nullptr);
  EXPECT_EQ(tprt_target_name(tprt_num_targets()), nullptr);
  EXPECT_EQ(tprt_target_on_device("cpu"), 0);
  EXPECT_EQ(tprt_target_on_device("cuda"), 1);
  EXPECT_EQ(tprt_target_on_device("tpu"), -1);
  EXPECT_EQ(tprt_target_default_backend("tpu"), nullptr);
  for (int32_t t = 0; t < tprt_num_targets(); ++t) {
    const char *target = tprt_target_name(t);
    const char *backend = tprt_target_default_backend(target);
    ASSERT_NE(backend, nullptr) << target;
    EXPECT_STREQ(tprt_backend_target(backend), target);
    EXPECT_EQ(tprt_backend_processes(backend), 0) << target;
  }
  for (int32_t b = 0; b < tprt_num_backends(); ++b) {
    const char *target = tprt_backend_target(tprt_backend_name(b));
    ASSERT_NE(target, nullptr) << tprt_backend_name(b);
    EXPECT_GE(tprt_target_on_device(target), 0) << tprt_backend_name(b);
  }
  EXPECT_STREQ(tprt_backend_target(nullptr), "cpu"); // "local"
  EXPECT_EQ(tprt_backend_processes("mpi"), 1);
  EXPECT_EQ(tprt_backend_target("smoke-signals"), nullptr);
  EXPECT_EQ(tprt_backend_processes("smoke-signals"), -1);
}

TEST(WorldTest, DefaultIsLocalWithEveryRank) {
  tprt_mesh mesh{2, {2, 3}};
  tprt_world *world = nullptr;
  ASSERT_EQ(tprt_world_create(&mesh, nullptr, &world), nullptr);
  EXPECT_STREQ(tprt_world_backend(world), "local");
  EXPECT_EQ(tprt_world_mesh(world)->sizes[1], 3);
  ASSERT_EQ(tprt_world_num_local_ranks(world), 6);
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(tprt_world_local_rank(world, i), i);
    tprt_communicator *comm = nullptr;
    ASSERT_EQ(tprt_world_communicator(world, i, &comm), nullptr);
    EXPECT_EQ(tprt_communicator_rank(comm), i);
    EXPECT_STREQ(tprt_communicator_backend(comm), "local");
  }
  EXPECT_EQ(tprt_world_local_rank(world, 6), -1);
  tprt_communicator *comm = nullptr;
  tprt_status status = tprt_world_communicator(world, 6, &comm);
  EXPECT_EQ(tprt_status_code(status), TPRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tprt_status_message(status)).find("rank 6"),
            std::string::npos);
  tprt_status_free(status);
  tprt_world_destroy(world);
}

TEST(WorldTest, UnknownBackendNamesTheKnownOnes) {
  tprt_mesh mesh{1, {2}};
  tprt_world_options options = TPRT_WORLD_OPTIONS_INIT;
  options.backend = "carrier-pigeon";
  tprt_world *world = nullptr;
  tprt_status status = tprt_world_create(&mesh, &options, &world);
  ASSERT_EQ(tprt_status_code(status), TPRT_INVALID_ARGUMENT);
  EXPECT_EQ(world, nullptr);
  std::string message = tprt_status_message(status);
  EXPECT_NE(message.find("'carrier-pigeon'"), std::string::npos) << message;
  EXPECT_NE(message.find("local"), std::string::npos) << message;
  tprt_status_free(status);

  // Sessions pick their backend the same way, and refuse an unknown one
  // when they are made.
  tprt_session_options sessionOptions = TPRT_SESSION_OPTIONS_INIT;
  sessionOptions.backend = "carrier-pigeon";
  tprt_session *session = nullptr;
  status = tprt_session_create(&mesh, &sessionOptions, &session);
  EXPECT_EQ(tprt_status_code(status), TPRT_INVALID_ARGUMENT);
  EXPECT_EQ(session, nullptr);
  tprt_status_free(status);
}

TEST(WorldTest, OptionsAreReadUpToTheirStructSize) {
  tprt_mesh mesh{1, {2}};
  // A zeroed struct (no _INIT macro) is an error naming the field.
  tprt_world_options zeroed{};
  tprt_world *world = nullptr;
  tprt_status status = tprt_world_create(&mesh, &zeroed, &world);
  ASSERT_EQ(tprt_status_code(status), TPRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tprt_status_message(status))
                .find("tprt_world_options.struct_size is 0"),
            std::string::npos)
      << tprt_status_message(status);
  tprt_status_free(status);
  tprt_session_options zeroedSession{};
  tprt_session *session = nullptr;
  status = tprt_session_create(&mesh, &zeroedSession, &session);
  ASSERT_EQ(tprt_status_code(status), TPRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tprt_status_message(status))
                .find("tprt_session_options.struct_size is 0"),
            std::string::npos);
  tprt_status_free(status);

  // A caller whose struct ends before `backend` (an older tprt.h): the field
  // is not read, and the default backend is used.
  tprt_world_options older = TPRT_WORLD_OPTIONS_INIT;
  older.struct_size = offsetof(tprt_world_options, backend);
  older.backend = "carrier-pigeon";
  status = tprt_world_create(&mesh, &older, &world);
  ASSERT_EQ(status, nullptr) << tprt_status_message(status);
  EXPECT_STREQ(tprt_world_backend(world), "local");
  tprt_world_destroy(world);

  tprt_session_options olderSession = TPRT_SESSION_OPTIONS_INIT;
  olderSession.struct_size = offsetof(tprt_session_options, backend);
  olderSession.backend = "carrier-pigeon";
  status = tprt_session_create(&mesh, &olderSession, &session);
  ASSERT_EQ(status, nullptr) << tprt_status_message(status);
  tprt_session_destroy(session);
}

TEST(WorldTest, DeviceProfilesComeOnlyFromTimedGpuRuns) {
  tprt_mesh mesh{1, {2}};
  tprt_session_options options = TPRT_SESSION_OPTIONS_INIT;
  options.device_timing = 1; // accepted on the CPU, where it times nothing
  tprt_session *session = nullptr;
  tprt_status status = tprt_session_create(&mesh, &options, &session);
  ASSERT_EQ(status, nullptr) << tprt_status_message(status);
  tprt_device_profile profile = TPRT_DEVICE_PROFILE_INIT;
  status = tprt_session_device_profile(session, 0, &profile);
  ASSERT_EQ(tprt_status_code(status), TPRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tprt_status_message(status))
                .find("not on a GPU world with "
                      "tprt_session_options.device_timing"),
            std::string::npos)
      << tprt_status_message(status);
  tprt_status_free(status);
  tprt_session_destroy(session);
}

TEST(WorldTest, BadMeshIsAnError) {
  tprt_mesh mesh{1, {0}};
  tprt_world *world = nullptr;
  tprt_status status = tprt_world_create(&mesh, nullptr, &world);
  EXPECT_EQ(tprt_status_code(status), TPRT_INVALID_ARGUMENT);
  tprt_status_free(status);
  status = tprt_world_create(nullptr, nullptr, &world);
  EXPECT_EQ(tprt_status_code(status), TPRT_INVALID_ARGUMENT);
  tprt_status_free(status);
}

TEST(WorldTest, RankContextStartsWithTheTable) {
  // Compiled code reads the table pointer at offset 0 of the context.
  tprt_mesh mesh{1, {1}};
  tprt_world *world = nullptr;
  ASSERT_EQ(tprt_world_create(&mesh, nullptr, &world), nullptr);
  tprt_communicator *comm = nullptr;
  ASSERT_EQ(tprt_world_communicator(world, 0, &comm), nullptr);
  tprt_rank_context *ctx = nullptr;
  ASSERT_EQ(tprt_rank_context_create(comm, &ctx), nullptr);
  const tprt_rt_table *table = *reinterpret_cast<const tprt_rt_table **>(ctx);
  EXPECT_EQ(table, tprt_rt_functions());
  EXPECT_EQ(table->abi_version, TPRT_RT_ABI_VERSION);
  EXPECT_EQ(table->gemm, &tprt_rt_gemm);
  EXPECT_EQ(table->axis_index, &tprt_rt_axis_index);
  // A bad axis list is an error kept in the context, not a crash.
  EXPECT_EQ(table->axis_index(ctx, 1 | (3 << 4)), 0);
  tprt_status status = tprt_rank_context_take_status(ctx);
  EXPECT_EQ(tprt_status_code(status), TPRT_INVALID_ARGUMENT);
  tprt_status_free(status);
  tprt_rank_context_destroy(ctx);
  tprt_world_destroy(world);
}

TEST(WorldTest, CpuMemoryEntriesAndNoKernels) {
  // ABI 2: a CPU rank's buffers are host memory; a kernel launch (GPU code)
  // is an error kept in the context, naming the kernel and the backend.
  tprt_mesh mesh{1, {1}};
  tprt_world *world = nullptr;
  ASSERT_EQ(tprt_world_create(&mesh, nullptr, &world), nullptr);
  tprt_communicator *comm = nullptr;
  ASSERT_EQ(tprt_world_communicator(world, 0, &comm), nullptr);
  tprt_rank_context *ctx = nullptr;
  ASSERT_EQ(tprt_rank_context_create(comm, &ctx), nullptr);
  const tprt_rt_table *table = tprt_rt_functions();
  EXPECT_EQ(table->alloc, &tprt_rt_alloc);
  EXPECT_EQ(table->launch, &tprt_rt_launch);
  const float host[3] = {1.0f, 2.0f, 3.0f};
  auto *buffer = static_cast<float *>(table->alloc(ctx, sizeof(host)));
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer) % 64, 0u);
  table->upload(ctx, buffer, host, sizeof(host));
  EXPECT_EQ(buffer[2], 3.0f);
  table->free(ctx, buffer);
  EXPECT_EQ(tprt_rank_context_take_status(ctx), nullptr);

  table->launch(ctx, host, sizeof(host), "main_kernel", 1, 1, 1, 1, 1, 1, 0,
                nullptr, 0);
  tprt_status status = tprt_rank_context_take_status(ctx);
  EXPECT_EQ(tprt_status_code(status), TPRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tprt_status_message(status))
                .find("kernel 'main_kernel' is GPU code"),
            std::string::npos)
      << tprt_status_message(status);
  tprt_status_free(status);
  // After a failure, allocation returns NULL at once.
  table->launch(ctx, host, 0, "k", 1, 1, 1, 1, 1, 1, 0, nullptr, 0);
  EXPECT_EQ(table->alloc(ctx, 16), nullptr);
  tprt_status_free(tprt_rank_context_take_status(ctx));
  tprt_rank_context_destroy(ctx);
  tprt_world_destroy(world);
}

} // namespace

namespace {

TEST(WorldTest, OverlappingBuffersAreRefused) {
  // A collective into its own input would read what it already overwrote;
  // only all_reduce exactly in place is allowed.
  tprt_mesh mesh{1, {1}};
  tprt_world *world = nullptr;
  ASSERT_EQ(tprt_world_create(&mesh, nullptr, &world), nullptr);
  tprt_communicator *comm = nullptr;
  ASSERT_EQ(tprt_world_communicator(world, 0, &comm), nullptr);
  tprt_axes axes{1, {0}};
  float data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  int64_t shape[1] = {4};
  auto expectRefused = [](tprt_status status) {
    EXPECT_EQ(tprt_status_code(status), TPRT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(tprt_status_message(status)).find("overlaps"),
              std::string::npos)
        << tprt_status_message(status);
    tprt_status_free(status);
  };
  expectRefused(
      tprt_all_gather(comm, data, data, shape, 1, 0, TPRT_F32, &axes));
  expectRefused(
      tprt_all_gather(comm, data, data + 2, shape, 1, 0, TPRT_F32, &axes));
  expectRefused(
      tprt_all_to_all(comm, data, data + 1, shape, 1, 0, 0, TPRT_F32, &axes));
  expectRefused(tprt_reduce_scatter(comm, data, data + 3, shape, 1, 0, TPRT_F32,
                                    TPRT_SUM, &axes));
  expectRefused(
      tprt_all_reduce(comm, data, data + 1, 4, TPRT_F32, TPRT_SUM, &axes));
  // Exactly in place, and disjoint, are fine.
  EXPECT_EQ(tprt_all_reduce(comm, data, data, 4, TPRT_F32, TPRT_SUM, &axes),
            nullptr);
  EXPECT_EQ(tprt_all_gather(comm, data, data + 4, shape, 1, 0, TPRT_F32, &axes),
            nullptr);
  EXPECT_EQ(data[5], 2.0f);
  tprt_world_destroy(world);
}

} // namespace
