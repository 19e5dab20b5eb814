//===- CudaTest.cpp - CUDA libraries opened at run time -------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// libtprt opens the CUDA driver, cuBLAS and NCCL with dlopen: on a machine
// without a driver (this one, CI) tprt_cuda_query says so with a status, and
// still reports the libraries it could open; with a driver and a GPU it is
// OK. What is expected is decided by what the test itself can open.
//
//===----------------------------------------------------------------------===//

#include "tprt/tprt.h"

#include "gtest/gtest.h"

#include <cstddef>
#include <dlfcn.h>
#include <string>

namespace {

bool canOpen(const char *library) {
  void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle)
    dlclose(handle);
  return handle != nullptr;
}

TEST(CudaTest, QueryReportsWhatThisMachineHas) {
  tprt_cuda_info info = TPRT_CUDA_INFO_INIT;
  tprt_status status = tprt_cuda_query(&info);
#ifndef TPRT_TEST_HAS_CUDA_HEADERS
  ASSERT_EQ(tprt_status_code(status), TPRT_UNAVAILABLE);
  EXPECT_NE(std::string(tprt_status_message(status))
                .find("built without the CUDA headers"),
            std::string::npos);
  tprt_status_free(status);
  GTEST_SKIP() << "libtprt built without CUDA";
#else
  if (!canOpen("libcuda.so.1")) {
    ASSERT_EQ(tprt_status_code(status), TPRT_UNAVAILABLE);
    std::string message = tprt_status_message(status);
    EXPECT_EQ(message.rfind("no CUDA driver found: ", 0), 0u) << message;
    EXPECT_NE(message.find("libcuda.so.1"), std::string::npos) << message;
    EXPECT_EQ(info.driver_version, 0);
    EXPECT_EQ(info.device_count, 0);
  }
  // The libraries are opened whether or not there is a driver.
  if (canOpen("libcublas.so.13"))
    EXPECT_GE(info.cublas_version, 130000);
  else
    EXPECT_EQ(info.cublas_version, 0);
  if (canOpen("libnccl.so.2"))
    EXPECT_GT(info.nccl_version, 20000);
  else
    EXPECT_EQ(info.nccl_version, 0);
  if (status == nullptr) {
    EXPECT_GE(info.driver_version, 13000);
    EXPECT_GE(info.device_count, 1);
  }
  tprt_status_free(status);
#endif
}

TEST(CudaTest, QueryFillsOnlyWhatTheCallersStructHolds) {
  // A caller built against a tprt.h whose struct ended after device_count.
  tprt_cuda_info info = TPRT_CUDA_INFO_INIT;
  info.struct_size = offsetof(tprt_cuda_info, cublas_version);
  info.cublas_version = -7;
  info.nccl_version = -7;
  tprt_status_free(tprt_cuda_query(&info));
  EXPECT_EQ(info.cublas_version, -7);
  EXPECT_EQ(info.nccl_version, -7);

  tprt_cuda_info zeroed{};
  tprt_status status = tprt_cuda_query(&zeroed);
  EXPECT_EQ(tprt_status_code(status), TPRT_INVALID_ARGUMENT);
  tprt_status_free(status);
  status = tprt_cuda_query(nullptr);
  EXPECT_EQ(tprt_status_code(status), TPRT_INVALID_ARGUMENT);
  tprt_status_free(status);
}

} // namespace

namespace {

TEST(CudaTest, DeviceWorldNeedsTheDriver) {
  // The `device` backend is in every build's registry; without the driver
  // (or without CUDA in the build) making its world is TPRT_UNAVAILABLE with
  // the reason, never a crash.
  tprt_mesh mesh{1, {2}};
  tprt_world_options options = TPRT_WORLD_OPTIONS_INIT;
  options.backend = "device";
  tprt_world *world = nullptr;
  tprt_status status = tprt_world_create(&mesh, &options, &world);
#ifdef TPRT_TEST_HAS_CUDA_HEADERS
  if (canOpen("libcuda.so.1")) {
    // A machine with a driver: the world is made when it has a GPU.
    if (!status) {
      EXPECT_STREQ(tprt_world_backend(world), "device");
      tprt_world_destroy(world);
    }
    tprt_status_free(status);
    GTEST_SKIP() << "a CUDA driver is present";
  }
  const char *expected = "no CUDA driver found";
#else
  const char *expected = "built without the CUDA headers";
#endif
  ASSERT_EQ(tprt_status_code(status), TPRT_UNAVAILABLE);
  EXPECT_NE(std::string(tprt_status_message(status)).find(expected),
            std::string::npos)
      << tprt_status_message(status);
  EXPECT_EQ(world, nullptr);
  tprt_status_free(status);
}

} // namespace
