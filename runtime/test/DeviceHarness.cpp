//===- DeviceHarness.cpp - The conformance suite on GPU backends ----------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The `device` and `nccl` backends keep tensors in device memory; the suite
// passes host buffers. Each rank's body gets a proxy communicator that, per
// call, copies the inputs to device buffers of the rank, runs the backend's
// collective on them, waits for the rank's stream and copies the result back
// (an in-place call stays in place on the device). Everything else — ranks,
// mesh, statistics, aborts — is the backend's. Without a driver, or with
// fewer GPUs than a backend needs, the suite's tests skip for that backend.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include "Internal.h"

#include "gtest/gtest.h"

#include <thread>

namespace tprt::test {
namespace {

/// One device buffer of a rank, released when it goes out of scope.
class DeviceBuffer {
public:
  DeviceBuffer(DeviceRanks *device, int64_t rank)
      : device(device), rank(rank) {}
  ~DeviceBuffer() {
    if (ptr)
      device->release(rank, ptr);
  }
  tprt_status init(size_t bytes, const void *host) {
    this->bytes = bytes;
    if (tprt_status s = device->alloc(rank, bytes, &ptr))
      return s;
    return host && bytes ? device->copyToDevice(rank, ptr, host, bytes)
                         : nullptr;
  }
  void *get() const { return ptr; }

private:
  DeviceRanks *device;
  int64_t rank;
  void *ptr = nullptr;
  size_t bytes = 0;
};

class DeviceProxy final : public tprt_communicator_s {
public:
  DeviceProxy(tprt_communicator *inner, DeviceRanks *device)
      : inner(inner), device(device) {}

  int64_t rank() const override { return inner->rank(); }
  const tprt_mesh &mesh() const override { return inner->mesh(); }
  const char *backend() const override { return inner->backend(); }

  tprt_status allReduce(const void *in, void *out, int64_t count,
                        tprt_dtype dtype, tprt_reduction reduction,
                        const tprt_axes &axes) override {
    size_t bytes = static_cast<size_t>(count) * tprt_dtype_size(dtype);
    return onDevice(in, bytes, out, bytes, [&](const void *din, void *dout) {
      return inner->allReduce(din, dout, count, dtype, reduction, axes);
    });
  }
  tprt_status allGather(const void *in, void *out, const int64_t *inShape,
                        int32_t rank, int32_t dim, tprt_dtype dtype,
                        const tprt_axes &axes) override {
    size_t bytes = bytesOf(inShape, rank, dtype);
    return onDevice(
        in, bytes, out, bytes * static_cast<size_t>(groupSize(axes)),
        [&](const void *din, void *dout) {
          return inner->allGather(din, dout, inShape, rank, dim, dtype, axes);
        });
  }
  tprt_status reduceScatter(const void *in, void *out, const int64_t *inShape,
                            int32_t rank, int32_t dim, tprt_dtype dtype,
                            tprt_reduction reduction,
                            const tprt_axes &axes) override {
    size_t bytes = bytesOf(inShape, rank, dtype);
    return onDevice(in, bytes, out,
                    bytes / static_cast<size_t>(groupSize(axes)),
                    [&](const void *din, void *dout) {
                      return inner->reduceScatter(din, dout, inShape, rank, dim,
                                                  dtype, reduction, axes);
                    });
  }
  tprt_status allToAll(const void *in, void *out, const int64_t *inShape,
                       int32_t rank, int32_t splitDim, int32_t concatDim,
                       tprt_dtype dtype, const tprt_axes &axes) override {
    size_t bytes = bytesOf(inShape, rank, dtype);
    return onDevice(in, bytes, out, bytes, [&](const void *din, void *dout) {
      return inner->allToAll(din, dout, inShape, rank, splitDim, concatDim,
                             dtype, axes);
    });
  }
  tprt_status barrier(const tprt_axes &axes) override {
    if (tprt_status s = device->enter(rank()))
      return s;
    return inner->barrier(axes);
  }
  void abort(tprt_status status) override { inner->abort(status); }
  bool aborted() const override { return inner->aborted(); }

private:
  static size_t bytesOf(const int64_t *shape, int32_t rank, tprt_dtype dtype) {
    size_t n = tprt_dtype_size(dtype);
    for (int32_t i = 0; i < rank; ++i)
      n *= static_cast<size_t>(shape[i]);
    return n;
  }
  int64_t groupSize(const tprt_axes &axes) const {
    return tprt_group_size(&mesh(), &axes);
  }

  template <typename Call>
  tprt_status onDevice(const void *in, size_t inBytes, void *out,
                       size_t outBytes, Call call) {
    int64_t r = rank();
    if (tprt_status s = device->enter(r))
      return s;
    DeviceBuffer din(device, r), dout(device, r);
    if (tprt_status s = din.init(inBytes, in))
      return s;
    bool inPlace = in == out && inBytes == outBytes;
    if (!inPlace)
      if (tprt_status s = dout.init(outBytes, nullptr))
        return s;
    void *target = inPlace ? din.get() : dout.get();
    if (tprt_status s = call(din.get(), target))
      return s;
    if (tprt_status s = device->copyToHost(r, out, target, outBytes))
      return s;
    return device->synchronize(r);
  }

  tprt_communicator *inner;
  DeviceRanks *device;
};

class DeviceHarness : public Harness {
public:
  explicit DeviceHarness(std::string backend) : backend(std::move(backend)) {}
  std::string name() const override { return backend; }

  std::string unavailable(int64_t ranks) const override {
    tprt_mesh mesh{1, {ranks}};
    tprt_world *world = nullptr;
    tprt_status status = create(mesh, 1000, &world);
    if (!status) {
      tprt_world_destroy(world);
      return "";
    }
    std::string why = tprt_status_message(status);
    tprt_status_free(status);
    return "the '" + backend + "' backend: " + why;
  }

  void run(const tprt_mesh &mesh, int64_t timeoutMs,
           const std::function<void(tprt_communicator *)> &body) override {
    tprt_world *world = nullptr;
    tprt_status status = create(mesh, timeoutMs, &world);
    ASSERT_EQ(status, nullptr) << tprt_status_message(status);
    DeviceRanks *device = world->device();
    ASSERT_NE(device, nullptr);
    std::vector<std::unique_ptr<DeviceProxy>> proxies;
    for (int64_t rank = 0; rank < tprt_mesh_num_devices(&mesh); ++rank)
      proxies.push_back(
          std::make_unique<DeviceProxy>(world->communicator(rank), device));
    std::vector<std::thread> threads;
    for (auto &proxy : proxies)
      threads.emplace_back([&body, &proxy] { body(proxy.get()); });
    for (std::thread &t : threads)
      t.join();
    proxies.clear();
    tprt_world_destroy(world);
  }

private:
  tprt_status create(const tprt_mesh &mesh, int64_t timeoutMs,
                     tprt_world **world) const {
    tprt_world_options options = TPRT_WORLD_OPTIONS_INIT;
    options.backend = backend.c_str();
    options.timeout_ms = timeoutMs;
    return tprt_world_create(&mesh, &options, world);
  }

  std::string backend;
};

} // namespace

std::shared_ptr<Harness> makeDeviceHarness(const std::string &backend) {
  return std::make_shared<DeviceHarness>(backend);
}

} // namespace tprt::test
