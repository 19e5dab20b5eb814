//===- DeviceWorld.cpp - The `device` backend: ranks sharing one GPU ------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// NCCL refuses two ranks on one GPU; the `device` backend runs every rank of
// a mesh on one GPU (TPRT_CUDA_DEVICE, default 0), each with its own stream,
// buffers and cuBLAS handle, so that an N-rank CUDA program runs, and is
// verified, on a single GPU.
//
// Its collectives stage through host memory: the rank's stream is drained,
// its input copied to the host, the collective run by the `local`
// communicator between the ranks' host copies (with its mismatch checks,
// timeouts and aborts), and the result copied back. That is correct on any
// GPU; it is not fast, and device-to-device copy/reduce kernels between the
// ranks' buffers, ordered with events, are to replace it.
//
//===----------------------------------------------------------------------===//

#include "CudaRank.h"

#include "../Internal.h"

#include <cstdlib>
#include <memory>
#include <vector>

using namespace tprt;

#ifdef TPRT_HAS_CUDA_HEADERS

using namespace tprt::cuda;

namespace {

/// The bytes of a tensor of `shape`.
size_t bytesOf(const int64_t *shape, int32_t rank, tprt_dtype dtype) {
  return static_cast<size_t>(product(shape, rank)) * tprt_dtype_size(dtype);
}

class DeviceCommunicator final : public tprt_communicator_s {
public:
  DeviceCommunicator(tprt_communicator *host, CudaRank *gpu)
      : host(host), gpu(gpu) {}

  int64_t rank() const override { return host->rank(); }
  const tprt_mesh &mesh() const override { return host->mesh(); }
  const char *backend() const override { return "device"; }

  tprt_status allReduce(const void *in, void *out, int64_t count,
                        tprt_dtype dtype, tprt_reduction reduction,
                        const tprt_axes &axes) override {
    size_t bytes = static_cast<size_t>(count) * tprt_dtype_size(dtype);
    return staged(in, bytes, out, bytes, [&](const void *hin, void *hout) {
      return host->allReduce(hin, hout, count, dtype, reduction, axes);
    });
  }
  tprt_status allGather(const void *in, void *out, const int64_t *inShape,
                        int32_t rank, int32_t dim, tprt_dtype dtype,
                        const tprt_axes &axes) override {
    size_t bytes = bytesOf(inShape, rank, dtype);
    size_t outBytes =
        bytes * static_cast<size_t>(tprt_group_size(&mesh(), &axes));
    return staged(in, bytes, out, outBytes, [&](const void *hin, void *hout) {
      return host->allGather(hin, hout, inShape, rank, dim, dtype, axes);
    });
  }
  tprt_status reduceScatter(const void *in, void *out, const int64_t *inShape,
                            int32_t rank, int32_t dim, tprt_dtype dtype,
                            tprt_reduction reduction,
                            const tprt_axes &axes) override {
    size_t bytes = bytesOf(inShape, rank, dtype);
    int64_t size = tprt_group_size(&mesh(), &axes);
    size_t outBytes = size > 0 ? bytes / static_cast<size_t>(size) : 0;
    return staged(in, bytes, out, outBytes, [&](const void *hin, void *hout) {
      return host->reduceScatter(hin, hout, inShape, rank, dim, dtype,
                                 reduction, axes);
    });
  }
  tprt_status allToAll(const void *in, void *out, const int64_t *inShape,
                       int32_t rank, int32_t splitDim, int32_t concatDim,
                       tprt_dtype dtype, const tprt_axes &axes) override {
    size_t bytes = bytesOf(inShape, rank, dtype);
    return staged(in, bytes, out, bytes, [&](const void *hin, void *hout) {
      return host->allToAll(hin, hout, inShape, rank, splitDim, concatDim,
                            dtype, axes);
    });
  }
  tprt_status barrier(const tprt_axes &axes) override {
    if (tprt_status s = gpu->check(gpu->cu->cuStreamSynchronize(gpu->stream),
                                   "cuStreamSynchronize"))
      return s;
    return host->barrier(axes);
  }
  void abort(tprt_status status) override { host->abort(status); }

private:
  /// Drains the stream, copies `in` to the host, runs `collective` there
  /// and copies its result to `out`.
  template <typename Collective>
  tprt_status staged(const void *in, size_t inBytes, void *out, size_t outBytes,
                     Collective collective) {
    stagingIn.resize(inBytes);
    stagingOut.resize(outBytes);
    const Driver *cu = gpu->cu;
    if (inBytes)
      if (tprt_status s = gpu->check(
              cu->cuMemcpyDtoHAsync(stagingIn.data(),
                                    reinterpret_cast<CUdeviceptr>(in), inBytes,
                                    gpu->stream),
              "cuMemcpyDtoHAsync"))
        return s;
    if (tprt_status s = gpu->check(cu->cuStreamSynchronize(gpu->stream),
                                   "cuStreamSynchronize"))
      return s;
    tprt_status status = collective(stagingIn.data(), stagingOut.data());
    stats = host->stats;
    if (status)
      return status;
    if (outBytes)
      if (tprt_status s = gpu->check(
              cu->cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(out),
                                    stagingOut.data(), outBytes, gpu->stream),
              "cuMemcpyHtoDAsync"))
        return s;
    // The staging buffer is reused by the next collective.
    return gpu->check(cu->cuStreamSynchronize(gpu->stream),
                      "cuStreamSynchronize");
  }

  tprt_communicator *host;
  CudaRank *gpu;
  std::vector<char> stagingIn, stagingOut;
};

class DeviceWorld final : public tprt_world_s, public DeviceRanks {
public:
  ~DeviceWorld() override {
    communicators.clear();
    for (CudaRank &rank : gpus)
      destroyRank(rank);
    tprt_world_destroy(hostWorld);
  }

  tprt_status init(const tprt_mesh &mesh, std::chrono::milliseconds timeout) {
    const Driver *cu = nullptr;
    const Cublas *blas = nullptr;
    if (tprt_status s = loadDriver(&cu))
      return s;
    if (tprt_status s = loadCublas(&blas))
      return s;
    int count = 0;
    if (CUresult r = cu->cuDeviceGetCount(&count); r != CUDA_SUCCESS)
      return cu->error(r, "cuDeviceGetCount");
    int ordinal = 0;
    if (const char *env = std::getenv("TPRT_CUDA_DEVICE")) {
      char *end = nullptr;
      long value = std::strtol(env, &end, 10);
      if (end == env || *end || value < 0 || value >= count)
        return error(TPRT_INVALID_ARGUMENT, "TPRT_CUDA_DEVICE is '", env,
                     "'; this machine has GPUs 0 to ", count - 1);
      ordinal = static_cast<int>(value);
    }
    if (count == 0)
      return error(TPRT_UNAVAILABLE,
                   "the CUDA driver found no GPU (cuDeviceGetCount is 0)");
    if (tprt_status s = createLocalWorld(mesh, timeout, &hostWorld))
      return s;
    ranks = hostWorld->localRanks();
    gpus.resize(ranks.size());
    for (size_t i = 0; i < ranks.size(); ++i)
      if (tprt_status s = createRank(cu, blas, ranks[i], ordinal, gpus[i]))
        return s;
    for (size_t i = 0; i < ranks.size(); ++i)
      communicators.push_back(std::make_unique<DeviceCommunicator>(
          hostWorld->communicator(ranks[i]), &gpus[i]));
    return nullptr;
  }

  // tprt_world_s
  const char *backend() const override { return "device"; }
  const tprt_mesh &mesh() const override { return hostWorld->mesh(); }
  const std::vector<int64_t> &localRanks() const override { return ranks; }
  tprt_communicator *communicator(int64_t rank) override {
    return communicators[static_cast<size_t>(rank)].get();
  }
  DeviceRanks *device() override { return this; }

  // DeviceRanks
  const char *target() const override { return "cuda"; }
  tprt_status enter(int64_t rank) override {
    CudaRank &r = gpu(rank);
    return r.check(r.cu->cuCtxSetCurrent(r.context), "cuCtxSetCurrent");
  }
  tprt_status alloc(int64_t rank, size_t bytes, void **ptr) override {
    CudaRank &r = gpu(rank);
    CUdeviceptr p = 0;
    tprt_status s =
        r.check(r.cu->cuMemAllocAsync(&p, bytes ? bytes : 1, r.stream),
                "cuMemAllocAsync");
    *ptr = s ? nullptr : reinterpret_cast<void *>(p);
    return s;
  }
  void release(int64_t rank, void *ptr) override {
    CudaRank &r = gpu(rank);
    r.cu->cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(ptr), r.stream);
  }
  tprt_status copyToDevice(int64_t rank, void *dst, const void *src,
                           size_t bytes) override {
    CudaRank &r = gpu(rank);
    return r.check(r.cu->cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst),
                                           src, bytes, r.stream),
                   "cuMemcpyHtoDAsync");
  }
  tprt_status copyToHost(int64_t rank, void *dst, const void *src,
                         size_t bytes) override {
    CudaRank &r = gpu(rank);
    return r.check(r.cu->cuMemcpyDtoHAsync(dst,
                                           reinterpret_cast<CUdeviceptr>(src),
                                           bytes, r.stream),
                   "cuMemcpyDtoHAsync");
  }
  tprt_status synchronize(int64_t rank) override {
    CudaRank &r = gpu(rank);
    return r.check(r.cu->cuStreamSynchronize(r.stream), "cuStreamSynchronize");
  }
  const tprt_rt_table *table() const override { return cudaFunctions(); }
  void *rankState(int64_t rank) override { return &gpu(rank); }

private:
  CudaRank &gpu(int64_t rank) { return gpus[static_cast<size_t>(rank)]; }

  tprt_world *hostWorld = nullptr;
  std::vector<int64_t> ranks;
  std::vector<CudaRank> gpus;
  std::vector<std::unique_ptr<DeviceCommunicator>> communicators;
};

} // namespace

tprt_status tprt::createDeviceWorld(const tprt_mesh &mesh,
                                    std::chrono::milliseconds timeout,
                                    tprt_world **world) {
  auto created = std::make_unique<DeviceWorld>();
  if (tprt_status s = created->init(mesh, timeout))
    return s;
  *world = created.release();
  return nullptr;
}

#else

tprt_status tprt::createDeviceWorld(const tprt_mesh &,
                                    std::chrono::milliseconds, tprt_world **) {
  return error(TPRT_UNAVAILABLE,
               "the 'device' backend needs CUDA: this libtprt was built "
               "without the CUDA headers");
}

#endif // TPRT_HAS_CUDA_HEADERS
