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
// The ranks share the device's primary context, so a rank reads its peers'
// buffers directly. A collective, on every member's stream:
//   1. records the member's `ready` event after its input is written;
//   2. exchanges, through the `local` communicator (host memory: its
//      mismatch checks, timeouts and aborts), the members' input pointers,
//      their events and a signature of the call, which must agree;
//   3. waits on every peer's `ready`, then reads the peers' inputs: 2D
//      copies (all_gather, all_to_all) or the reduction kernel of
//      RuntimeKernels.cu (all_reduce, reduce_scatter), writing only its
//      own output;
//   4. records `done`, meets the group on the host, and waits on every
//      peer's `done` before it may overwrite its input.
// The host never waits for the GPU: every wait is a stream waiting on an
// event that was recorded before the exchange. An input that overlaps the
// output (in place) or must be packed (all_to_all) is first copied to the
// member's scratch buffer, which is what it publishes.
//
//===----------------------------------------------------------------------===//

#include "CudaRank.h"

#include "../Internal.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using namespace tprt;

#ifdef TPRT_HAS_CUDA_HEADERS

using namespace tprt::cuda;

namespace {

/// Must match kMaxMembers in RuntimeKernels.cu.
constexpr int kMaxMembers = 64;
struct Sources {
  const void *ptr[kMaxMembers];
};

/// The bytes of a tensor of `shape`.
size_t bytesOf(const int64_t *shape, int32_t rank, tprt_dtype dtype) {
  return static_cast<size_t>(product(shape, rank)) * tprt_dtype_size(dtype);
}

const char *reductionName(tprt_reduction reduction) {
  switch (reduction) {
  case TPRT_SUM:
    return "sum";
  case TPRT_MAX:
    return "max";
  case TPRT_MIN:
    return "min";
  case TPRT_PROD:
    return "prod";
  default:
    return nullptr;
  }
}

/// FNV-1a over the call's kind and arguments: the members of a collective
/// must agree on it.
class Signature {
public:
  Signature &add(int64_t v) {
    for (int i = 0; i < 8; ++i) {
      hash ^= static_cast<uint64_t>(v >> (8 * i)) & 0xff;
      hash *= 1099511628211ull;
    }
    return *this;
  }
  Signature &add(const int64_t *shape, int32_t rank) {
    add(rank);
    for (int32_t i = 0; i < rank; ++i)
      add(shape[i]);
    return *this;
  }
  int64_t value() const { return static_cast<int64_t>(hash); }

private:
  uint64_t hash = 14695981039346656037ull;
};

class DeviceCommunicator final : public tprt_communicator_s {
public:
  DeviceCommunicator(tprt_communicator *host, CudaRank *gpu)
      : host(host), gpu(gpu) {}
  ~DeviceCommunicator() override {
    const Driver *cu = gpu->cu;
    if (scratch)
      cu->cuMemFreeAsync(scratch, gpu->stream);
    for (CUevent event : {ready, done})
      if (event)
        cu->cuEventDestroy(event);
  }

  tprt_status init() {
    for (CUevent *event : {&ready, &done})
      if (tprt_status s =
              gpu->check(gpu->cu->cuEventCreate(event, CU_EVENT_DISABLE_TIMING),
                         "cuEventCreate"))
        return s;
    return nullptr;
  }

  int64_t rank() const override { return host->rank(); }
  const tprt_mesh &mesh() const override { return host->mesh(); }
  const char *backend() const override { return "device"; }

  tprt_status allReduce(const void *in, void *out, int64_t count,
                        tprt_dtype dtype, tprt_reduction reduction,
                        const tprt_axes &axes) override {
    size_t bytes = static_cast<size_t>(count) * tprt_dtype_size(dtype);
    Signature sig;
    sig.add(TPRT_ALL_REDUCE).add(dtype).add(reduction).add(count);
    return collective(in, bytes, out, bytes, axes, sig,
                      [&](const std::vector<const void *> &inputs, int64_t) {
                        return reduce(inputs, reduction, dtype, 0, out, count,
                                      1);
                      });
  }

  tprt_status allGather(const void *in, void *out, const int64_t *inShape,
                        int32_t rank, int32_t dim, tprt_dtype dtype,
                        const tprt_axes &axes) override {
    size_t bytes = bytesOf(inShape, rank, dtype);
    int64_t size = tprt_group_size(&mesh(), &axes);
    Rows b = rowsOf(inShape, rank, dim, tprt_dtype_size(dtype));
    Signature sig;
    sig.add(TPRT_ALL_GATHER).add(dtype).add(dim).add(inShape, rank);
    return collective(
        in, bytes, out, bytes * static_cast<size_t>(size), axes, sig,
        [&](const std::vector<const void *> &inputs, int64_t) -> tprt_status {
          // Member j's rows go to columns [j*width, (j+1)*width) of out's.
          for (size_t j = 0; j < inputs.size(); ++j)
            if (tprt_status s = gpu->copy2D(
                    inputs[j], b.width, static_cast<char *>(out) + j * b.width,
                    b.width * inputs.size(), b.width, b.rows))
              return s;
          return nullptr;
        });
  }

  tprt_status reduceScatter(const void *in, void *out, const int64_t *inShape,
                            int32_t rank, int32_t dim, tprt_dtype dtype,
                            tprt_reduction reduction,
                            const tprt_axes &axes) override {
    size_t bytes = bytesOf(inShape, rank, dtype);
    int64_t size = tprt_group_size(&mesh(), &axes);
    int64_t shape[TPRT_MAX_TENSOR_RANK];
    std::copy(inShape, inShape + rank, shape);
    shape[dim] /= size;
    Rows b = rowsOf(shape, rank, dim, tprt_dtype_size(dtype));
    size_t elem = tprt_dtype_size(dtype);
    Signature sig;
    sig.add(TPRT_REDUCE_SCATTER)
        .add(dtype)
        .add(reduction)
        .add(dim)
        .add(inShape, rank);
    return collective(
        in, bytes, out, bytes / static_cast<size_t>(size), axes, sig,
        [&](const std::vector<const void *> &inputs, int64_t me) {
          // Block `me` of every member: columns [me*width, (me+1)*width).
          std::vector<const void *> blocks;
          for (const void *input : inputs)
            blocks.push_back(static_cast<const char *>(input) + me * b.width);
          int64_t width = static_cast<int64_t>(b.width / elem);
          return reduce(blocks, reduction, dtype, width * size, out, width,
                        b.rows);
        });
  }

  tprt_status allToAll(const void *in, void *out, const int64_t *inShape,
                       int32_t rank, int32_t splitDim, int32_t concatDim,
                       tprt_dtype dtype, const tprt_axes &axes) override {
    size_t bytes = bytesOf(inShape, rank, dtype);
    int64_t size = tprt_group_size(&mesh(), &axes);
    // Every block has the input's shape split along splitDim.
    int64_t block[TPRT_MAX_TENSOR_RANK];
    std::copy(inShape, inShape + rank, block);
    block[splitDim] /= size;
    Rows send = rowsOf(block, rank, splitDim, tprt_dtype_size(dtype));
    Rows recv = rowsOf(block, rank, concatDim, tprt_dtype_size(dtype));
    size_t blockBytes = bytes / static_cast<size_t>(size);
    Signature sig;
    sig.add(TPRT_ALL_TO_ALL)
        .add(dtype)
        .add(splitDim)
        .add(concatDim)
        .add(inShape, rank);
    // The input packed: block j (along splitDim) contiguous at j*blockBytes.
    auto pack = [&](void *packed) -> tprt_status {
      for (int64_t j = 0; j < size; ++j)
        if (tprt_status s = gpu->copy2D(
                static_cast<const char *>(in) + j * send.width,
                send.width * size, static_cast<char *>(packed) + j * blockBytes,
                send.width, send.width, send.rows))
          return s;
      return nullptr;
    };
    return collective(
        in, bytes, out, bytes, axes, sig,
        [&](const std::vector<const void *> &inputs,
            int64_t me) -> tprt_status {
          // Member j's block `me` goes to block j along concatDim.
          for (size_t j = 0; j < inputs.size(); ++j)
            if (tprt_status s = gpu->copy2D(
                    static_cast<const char *>(inputs[j]) + me * blockBytes,
                    recv.width, static_cast<char *>(out) + j * recv.width,
                    recv.width * inputs.size(), recv.width, recv.rows))
              return s;
          return nullptr;
        },
        pack);
  }

  tprt_status barrier(const tprt_axes &axes) override {
    if (tprt_status s = gpu->wait(host))
      return s;
    return host->barrier(axes);
  }
  void abort(tprt_status status) override { host->abort(status); }
  bool aborted() const override { return host->aborted(); }

private:
  /// Steps 1-4 of the file comment. `publish` is the input the peers read:
  /// `in` itself, or a copy in the scratch buffer when `pack` is given or
  /// `in` overlaps `out`; `body(inputs, me)` enqueues the member's own part.
  template <typename Body>
  tprt_status collective(const void *in, size_t inBytes, void *out,
                         size_t outBytes, const tprt_axes &axes, Signature &sig,
                         Body body,
                         std::function<tprt_status(void *)> pack = nullptr) {
    const Driver *cu = gpu->cu;
    int64_t size = tprt_group_size(&mesh(), &axes);
    if (size > kMaxMembers)
      return error(TPRT_INVALID_ARGUMENT, "rank ", rank(),
                   ": the 'device' backend's collectives span at most ",
                   kMaxMembers, " ranks, this group ", size);
    const char *inBegin = static_cast<const char *>(in);
    const char *outBegin = static_cast<const char *>(out);
    bool overlaps = inBytes && outBytes && inBegin < outBegin + outBytes &&
                    outBegin < inBegin + inBytes;
    const void *published = in;
    if (pack || overlaps) {
      if (tprt_status s = reserveScratch(inBytes))
        return s;
      void *copy = reinterpret_cast<void *>(scratch);
      if (pack) {
        if (tprt_status s = pack(copy))
          return s;
      } else if (tprt_status s =
                     gpu->check(cu->cuMemcpyDtoDAsync(
                                    scratch, reinterpret_cast<CUdeviceptr>(in),
                                    inBytes, gpu->stream),
                                "cuMemcpyDtoDAsync")) {
        return s;
      }
      published = copy;
    }
    // 1-2. Publish the input once written; learn the peers'.
    if (tprt_status s =
            gpu->check(cu->cuEventRecord(ready, gpu->stream), "cuEventRecord"))
      return s;
    const int64_t mine[4] = {reinterpret_cast<int64_t>(published),
                             reinterpret_cast<int64_t>(ready),
                             reinterpret_cast<int64_t>(done), sig.value()};
    std::vector<int64_t> all(4 * static_cast<size_t>(size));
    const int64_t shape[] = {4};
    if (tprt_status s =
            host->allGather(mine, all.data(), shape, 1, 0, TPRT_I64, axes))
      return s;
    int64_t me = tprt_group_position(&mesh(), &axes, rank());
    std::vector<int64_t> members = groupMembers(mesh(), axes, rank());
    std::vector<const void *> inputs;
    for (int64_t j = 0; j < size; ++j) {
      const int64_t *peer = &all[4 * static_cast<size_t>(j)];
      if (peer[3] != sig.value()) {
        tprt_status mismatch =
            error(TPRT_MISMATCH, "rank ", rank(), ": its collective over ",
                  formatAxes(axes), " does not match rank ",
                  members[static_cast<size_t>(j)],
                  "'s (kind, dtype, reduction, shape or dimensions differ)");
        host->abort(mismatch);
        return mismatch;
      }
      inputs.push_back(reinterpret_cast<const void *>(peer[0]));
      if (j != me)
        if (tprt_status s = gpu->check(
                cu->cuStreamWaitEvent(gpu->stream,
                                      reinterpret_cast<CUevent>(peer[1]), 0),
                "cuStreamWaitEvent"))
          return s;
    }
    // 3. This member's part.
    if (tprt_status s = body(inputs, me))
      return s;
    // 4. Nobody overwrites its input before every peer has read it.
    if (tprt_status s =
            gpu->check(cu->cuEventRecord(done, gpu->stream), "cuEventRecord"))
      return s;
    if (tprt_status s = host->barrier(axes))
      return s;
    for (int64_t j = 0; j < size; ++j)
      if (j != me)
        if (tprt_status s = gpu->check(
                cu->cuStreamWaitEvent(gpu->stream,
                                      reinterpret_cast<CUevent>(
                                          all[4 * static_cast<size_t>(j) + 2]),
                                      0),
                "cuStreamWaitEvent"))
          return s;
    return nullptr;
  }

  /// out[r * width + c] = reduction over the sources of
  /// source[r * srcPitch + c] (pitches in elements; 0: `width`).
  tprt_status reduce(const std::vector<const void *> &sources,
                     tprt_reduction reduction, tprt_dtype dtype,
                     int64_t srcPitch, void *out, int64_t width, int64_t rows) {
    const char *op = reductionName(reduction);
    const char *type = isValidDtype(dtype) ? tprt_dtype_name(dtype) : nullptr;
    if (!op || !type)
      return error(TPRT_INVALID_ARGUMENT, "rank ", rank(), ": reduction ",
                   reduction, " of dtype ", dtype, " on the 'device' backend");
    std::string name = std::string("tprt_reduce_") + op + "_" + type;
    CUfunction function = nullptr;
    if (tprt_status s =
            gpu->kernel(0, runtimeKernels(), name.c_str(), &function))
      return s;
    Sources src = {};
    std::copy(sources.begin(), sources.end(), src.ptr);
    int32_t count = static_cast<int32_t>(sources.size());
    int64_t pitch = srcPitch ? srcPitch : width;
    int64_t dstPitch = width;
    int64_t total = width * rows;
    if (total == 0)
      return nullptr;
    constexpr int64_t threads = 256, maxBlocks = 4096;
    int64_t blocks = std::min((total + threads - 1) / threads, maxBlocks);
    void *params[] = {&src, &count, &pitch, &out, &dstPitch, &width, &rows};
    return gpu->check(
        gpu->cu->cuLaunchKernel(function, static_cast<unsigned>(blocks), 1, 1,
                                threads, 1, 1, 0, gpu->stream, params, nullptr),
        "cuLaunchKernel (tprt_reduce)");
  }

  /// A scratch buffer of at least `bytes`; a smaller one is freed in stream
  /// order (after the peers' last reads of it, which the stream waited on).
  tprt_status reserveScratch(size_t bytes) {
    if (scratchBytes >= bytes && scratch)
      return nullptr;
    if (scratch) {
      gpu->cu->cuMemFreeAsync(scratch, gpu->stream);
      gpu->generation += 1;
    }
    scratch = 0;
    scratchBytes = 0;
    if (tprt_status s =
            gpu->check(gpu->cu->cuMemAllocAsync(
                           &scratch, std::max<size_t>(bytes, 1), gpu->stream),
                       "cuMemAllocAsync (collective scratch)"))
      return s;
    scratchBytes = bytes;
    return nullptr;
  }

  tprt_communicator *host;
  CudaRank *gpu;
  CUevent ready = nullptr, done = nullptr;
  CUdeviceptr scratch = 0;
  size_t scratchBytes = 0;
};

class DeviceWorld final : public tprt_world_s, public CudaRanks {
public:
  ~DeviceWorld() override {
    for (size_t i = 0; i < communicators.size(); ++i)
      gpus[i].cu->cuCtxSetCurrent(gpus[i].context);
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
    for (size_t i = 0; i < ranks.size(); ++i) {
      communicators.push_back(std::make_unique<DeviceCommunicator>(
          hostWorld->communicator(ranks[i]), &gpus[i]));
      if (tprt_status s = communicators.back()->init())
        return s;
    }
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
  const char *graphRefusal() const override {
    // A collective meets its members on the host (their events and
    // pointers), which a replay would skip.
    return ranks.size() > 1 ? "the 'device' communicator meets its ranks on "
                              "the host in every collective"
                            : nullptr;
  }

private:
  tprt_communicator *rankCommunicator(int64_t rank) override {
    return communicator(rank);
  }
  tprt_communicator *hostCommunicator(int64_t rank) override {
    return hostWorld->communicator(rank);
  }

  tprt_world *hostWorld = nullptr;
  std::vector<int64_t> ranks;
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
