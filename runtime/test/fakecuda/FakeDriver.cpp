//===- FakeDriver.cpp - A counting fake of libcuda.so.1 -------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The driver entry points libtprt uses (cuda/CudaLibraries.h), on host
// memory; see FakeCuda.h. TPRT_FAKE_CUDA_DEVICES sets how many GPUs it
// shows (8 by default), TPRT_FAKE_CUDA_MEMORY how many bytes each holds
// (an allocation past it is CUDA_ERROR_OUT_OF_MEMORY; no limit by default).
// The counter `bytes.live` is what is allocated and not yet freed.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"

#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

/// Device memory a capture allocated (a graph's memory node): it lives as
/// long as the graphs and executable graphs made from the capture.
struct GraphMemory {
  std::vector<uintptr_t> blocks;
  ~GraphMemory();
};

/// One piece of recorded work: the call that recorded it, the device ranges
/// it touches, and what a replay does (copies; nothing for the rest).
struct Node {
  std::string call;
  std::vector<FakeRange> ranges;
  std::function<void()> run;
};

/// A stream's capture in progress.
struct Capture {
  std::vector<Node> nodes;
  std::shared_ptr<GraphMemory> memory = std::make_shared<GraphMemory>();
  /// The first call that invalidated it (CUDA_SUCCESS while it is valid).
  CUresult broken = CUDA_SUCCESS;
  bool relaxed = false;
};

/// A CUgraph or a CUgraphExec.
struct Graph {
  int kind; // 3: a graph, 4: an executable graph
  std::vector<Node> nodes;
  std::shared_ptr<GraphMemory> memory;
};

struct Census {
  std::mutex mutex;
  std::map<std::string, long long> counts;
  /// Live device allocations: start -> bytes, and their device.
  std::map<uintptr_t, size_t> allocations;
  std::map<uintptr_t, CUdevice> owners;
  std::map<CUdevice, size_t> liveBytes;
  std::set<const void *> contexts, streams, events, modules;
  /// Each function handle and the module it came from.
  std::map<const void *, const void *> functions;
  /// Streams in capture, and the graphs and executable graphs made.
  std::map<const void *, Capture> captures;
  std::set<const void *> graphs;

  ~Census() {
    const char *path = std::getenv("TPRT_FAKE_CUDA_CENSUS");
    if (!path || !*path)
      return;
    std::string text;
    for (const auto &[name, n] : counts)
      text += name + " " + std::to_string(n) + "\n";
    text += "---\n";
    // One write: censuses of concurrent processes do not interleave.
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0)
      return;
    (void)!write(fd, text.data(), text.size());
    close(fd);
  }
};

Census &census() {
  static Census *c = new Census();
  return *c;
}

/// Writes the census when the process exits (after the runtime's own
/// static destructors, which may still free device memory).
struct CensusAtExit {
  CensusAtExit() { census(); }
  ~CensusAtExit() { delete &census(); }
} censusAtExit;

void count(const std::string &name, long long n = 1) {
  std::lock_guard<std::mutex> lock(census().mutex);
  census().counts[name] += n;
}

CUresult fail(const char *call, CUresult result) {
  count(std::string("error.") + call);
  return result;
}

thread_local CUcontext current = nullptr;

struct Object {
  int kind;
};
struct Context : Object {
  CUdevice device;
};

template <typename T> T make(std::set<const void *> &live) {
  auto *object = new Object{0};
  std::lock_guard<std::mutex> lock(census().mutex);
  live.insert(object);
  return reinterpret_cast<T>(object);
}

bool isLive(const std::set<const void *> &live, const void *handle) {
  std::lock_guard<std::mutex> lock(census().mutex);
  return live.count(handle) != 0;
}

bool drop(std::set<const void *> &live, const void *handle) {
  std::lock_guard<std::mutex> lock(census().mutex);
  if (!live.erase(handle))
    return false;
  delete static_cast<const Object *>(handle);
  return true;
}

int deviceCount() {
  if (const char *env = std::getenv("TPRT_FAKE_CUDA_DEVICES"))
    return std::atoi(env);
  return 8;
}

/// The stream argument of an async call: the legacy default (null) or one
/// of the live streams.
bool goodStream(CUstream stream) {
  return !stream || isLive(census().streams, stream);
}

bool isDevice(CUdeviceptr ptr, size_t bytes) {
  return tprtFakeIsDevice(static_cast<uintptr_t>(ptr), bytes) != 0;
}

CUresult allocate(const char *call, CUdeviceptr *dptr, size_t bytes) {
  if (!current)
    return fail(call, CUDA_ERROR_INVALID_CONTEXT);
  if (!dptr)
    return fail(call, CUDA_ERROR_INVALID_VALUE);
  CUdevice device = reinterpret_cast<const Context *>(current)->device;
  if (const char *limit = std::getenv("TPRT_FAKE_CUDA_MEMORY")) {
    std::lock_guard<std::mutex> lock(census().mutex);
    if (census().liveBytes[device] + bytes >
        static_cast<size_t>(std::strtoull(limit, nullptr, 10))) {
      census().counts[std::string("error.") + call] += 1;
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
  }
  // Never 0 bytes: every allocation has an address of its own.
  void *memory = std::calloc(1, bytes ? bytes : 1);
  if (!memory)
    return fail(call, CUDA_ERROR_OUT_OF_MEMORY);
  std::lock_guard<std::mutex> lock(census().mutex);
  census().allocations[reinterpret_cast<uintptr_t>(memory)] = bytes;
  census().owners[reinterpret_cast<uintptr_t>(memory)] = device;
  census().liveBytes[device] += bytes;
  census().counts["bytes.live"] += static_cast<long long>(bytes);
  census().counts[call] += 1;
  census().counts["bytes.allocated"] += static_cast<long long>(bytes);
  *dptr = reinterpret_cast<CUdeviceptr>(memory);
  return CUDA_SUCCESS;
}

CUresult release(const char *call, CUdeviceptr ptr) {
  count(call);
  if (!ptr)
    return CUDA_SUCCESS;
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(census().mutex);
    auto it = census().allocations.find(static_cast<uintptr_t>(ptr));
    known = it != census().allocations.end();
    if (known) {
      CUdevice device = census().owners[it->first];
      census().liveBytes[device] -= it->second;
      census().counts["bytes.live"] -= static_cast<long long>(it->second);
      census().owners.erase(it->first);
      census().allocations.erase(it);
    }
  }
  if (!known)
    return fail(call, CUDA_ERROR_INVALID_VALUE);
  std::free(reinterpret_cast<void *>(ptr));
  return CUDA_SUCCESS;
}

GraphMemory::~GraphMemory() {
  for (uintptr_t block : blocks)
    release("graph.memory.free", static_cast<CUdeviceptr>(block));
}

/// Captures this thread began in a mode other than relaxed: the thread may
/// not make potentially unsafe calls (a synchronous allocation) meanwhile.
thread_local int strictCaptures = 0;

/// Whether `stream` is capturing.
bool capturing(CUstream stream) {
  if (!stream)
    return false;
  std::lock_guard<std::mutex> lock(census().mutex);
  return census().captures.count(stream) != 0;
}

/// Invalidates `stream`'s capture: the call is refused with `result`, and
/// so is the capture's end.
CUresult breakCapture(const char *call, CUstream stream, CUresult result) {
  {
    std::lock_guard<std::mutex> lock(census().mutex);
    auto it = census().captures.find(stream);
    if (it != census().captures.end() && it->second.broken == CUDA_SUCCESS)
      it->second.broken = result;
  }
  return fail(call, result);
}

/// Records `node` in `stream`'s capture; false when it is not capturing.
bool record(CUstream stream, Node node) {
  if (!stream)
    return false;
  std::lock_guard<std::mutex> lock(census().mutex);
  auto it = census().captures.find(stream);
  if (it == census().captures.end())
    return false;
  census().counts["graph.captured." + node.call] += 1;
  it->second.nodes.push_back(std::move(node));
  return true;
}

} // namespace

FAKE_CUDA_API int tprtFakeCapturing(const void *stream) {
  return capturing(reinterpret_cast<CUstream>(const_cast<void *>(stream))) ? 1
                                                                           : 0;
}

FAKE_CUDA_API int tprtFakeCapture(const void *stream, const char *call,
                                  const FakeRange *ranges, int count) {
  Node node{call, std::vector<FakeRange>(ranges, ranges + count), nullptr};
  return record(reinterpret_cast<CUstream>(const_cast<void *>(stream)),
                std::move(node))
             ? 1
             : 0;
}

FAKE_CUDA_API void tprtFakeCount(const char *name, long long n) {
  count(name, n);
}

FAKE_CUDA_API long long tprtFakeCounter(const char *name) {
  std::lock_guard<std::mutex> lock(census().mutex);
  auto it = census().counts.find(name);
  return it == census().counts.end() ? 0 : it->second;
}

FAKE_CUDA_API int tprtFakeIsDevice(uintptr_t ptr, size_t bytes) {
  std::lock_guard<std::mutex> lock(census().mutex);
  auto &live = census().allocations;
  auto it = live.upper_bound(ptr);
  if (it == live.begin())
    return 0;
  --it;
  return ptr >= it->first &&
         ptr - it->first + bytes <= std::max<size_t>(it->second, 1);
}

extern "C" {

CUresult cuInit(unsigned int) {
  count("cuInit");
  return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *version) {
  *version = 13000;
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char **str) {
  switch (error) {
  case CUDA_SUCCESS:
    *str = "CUDA_SUCCESS";
    break;
  case CUDA_ERROR_INVALID_VALUE:
    *str = "CUDA_ERROR_INVALID_VALUE";
    break;
  case CUDA_ERROR_OUT_OF_MEMORY:
    *str = "CUDA_ERROR_OUT_OF_MEMORY";
    break;
  case CUDA_ERROR_INVALID_CONTEXT:
    *str = "CUDA_ERROR_INVALID_CONTEXT";
    break;
  case CUDA_ERROR_INVALID_HANDLE:
    *str = "CUDA_ERROR_INVALID_HANDLE";
    break;
  case CUDA_ERROR_INVALID_DEVICE:
    *str = "CUDA_ERROR_INVALID_DEVICE";
    break;
  case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
    *str = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    break;
  case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
    *str = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
    break;
  case CUDA_ERROR_ILLEGAL_STATE:
    *str = "CUDA_ERROR_ILLEGAL_STATE";
    break;
  case CUDA_ERROR_ILLEGAL_ADDRESS:
    *str = "CUDA_ERROR_ILLEGAL_ADDRESS";
    break;
  case CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE:
    *str = "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE";
    break;
  default:
    *str = "CUDA_ERROR_UNKNOWN";
  }
  return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult, const char **str) {
  *str = "reported by the counting fake of the CUDA driver";
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *n) {
  *n = deviceCount();
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  if (ordinal < 0 || ordinal >= deviceCount())
    return fail("cuDeviceGet", CUDA_ERROR_INVALID_DEVICE);
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev) {
  std::snprintf(name, static_cast<size_t>(len), "tprt counting fake GPU %d",
                dev);
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                              CUdevice) {
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = 9;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = 132;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *value = 1024;
    break;
  default:
    *value = 0;
  }
  return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(size_t *bytes, CUdevice) {
  *bytes = size_t{80} << 30;
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev) {
  count("cuDevicePrimaryCtxRetain");
  if (dev < 0 || dev >= deviceCount())
    return fail("cuDevicePrimaryCtxRetain", CUDA_ERROR_INVALID_DEVICE);
  // One primary context per device, for the life of the process.
  static std::mutex mutex;
  static std::map<CUdevice, Context *> primary;
  std::lock_guard<std::mutex> lock(mutex);
  Context *&c = primary[dev];
  if (!c) {
    c = new Context{{1}, dev};
    std::lock_guard<std::mutex> censusLock(census().mutex);
    census().contexts.insert(c);
  }
  *ctx = reinterpret_cast<CUcontext>(c);
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice) {
  count("cuDevicePrimaryCtxRelease");
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
  if (ctx && !isLive(census().contexts, ctx))
    return fail("cuCtxSetCurrent", CUDA_ERROR_INVALID_CONTEXT);
  current = ctx;
  return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream *stream, unsigned int) {
  if (!current)
    return fail("cuStreamCreate", CUDA_ERROR_INVALID_CONTEXT);
  count("cuStreamCreate");
  *stream = make<CUstream>(census().streams);
  return CUDA_SUCCESS;
}

CUresult cuStreamDestroy(CUstream stream) {
  count("cuStreamDestroy");
  if (!drop(census().streams, stream))
    return fail("cuStreamDestroy", CUDA_ERROR_INVALID_HANDLE);
  return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream stream) {
  count("cuStreamSynchronize");
  if (capturing(stream))
    return breakCapture("cuStreamSynchronize", stream,
                        CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  return goodStream(stream)
             ? CUDA_SUCCESS
             : fail("cuStreamSynchronize", CUDA_ERROR_INVALID_HANDLE);
}

CUresult cuStreamQuery(CUstream stream) {
  count("cuStreamQuery");
  if (capturing(stream))
    return breakCapture("cuStreamQuery", stream,
                        CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  return goodStream(stream) ? CUDA_SUCCESS
                            : fail("cuStreamQuery", CUDA_ERROR_INVALID_HANDLE);
}

CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int) {
  count("cuStreamWaitEvent");
  if (!goodStream(stream) || !isLive(census().events, event))
    return fail("cuStreamWaitEvent", CUDA_ERROR_INVALID_HANDLE);
  return CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent *event, unsigned int) {
  if (!current)
    return fail("cuEventCreate", CUDA_ERROR_INVALID_CONTEXT);
  count("cuEventCreate");
  *event = make<CUevent>(census().events);
  return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent event, CUstream stream) {
  count("cuEventRecord");
  if (!goodStream(stream) || !isLive(census().events, event))
    return fail("cuEventRecord", CUDA_ERROR_INVALID_HANDLE);
  return CUDA_SUCCESS;
}

CUresult cuEventSynchronize(CUevent event) {
  count("cuEventSynchronize");
  return isLive(census().events, event)
             ? CUDA_SUCCESS
             : fail("cuEventSynchronize", CUDA_ERROR_INVALID_HANDLE);
}

CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
  count("cuEventElapsedTime");
  if (!isLive(census().events, start) || !isLive(census().events, end))
    return fail("cuEventElapsedTime", CUDA_ERROR_INVALID_HANDLE);
  // Nothing ran: no time passed.
  *ms = 0;
  return CUDA_SUCCESS;
}

CUresult cuEventDestroy(CUevent event) {
  count("cuEventDestroy");
  if (!drop(census().events, event))
    return fail("cuEventDestroy", CUDA_ERROR_INVALID_HANDLE);
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytes) {
  if (strictCaptures)
    return fail("cuMemAlloc", CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  return allocate("cuMemAlloc", dptr, bytes);
}

CUresult cuMemFree(CUdeviceptr dptr) {
  if (strictCaptures)
    return fail("cuMemFree", CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  return release("cuMemFree", dptr);
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream stream) {
  if (!goodStream(stream))
    return fail("cuMemAllocAsync", CUDA_ERROR_INVALID_HANDLE);
  CUresult result = allocate("cuMemAllocAsync", dptr, bytes);
  if (result == CUDA_SUCCESS && capturing(stream)) {
    // A memory node: the graph owns the block, at the same address in
    // every replay.
    std::lock_guard<std::mutex> lock(census().mutex);
    Capture &c = census().captures[stream];
    c.memory->blocks.push_back(static_cast<uintptr_t>(*dptr));
    c.nodes.push_back({"cuMemAllocAsync", {}, nullptr});
    census().counts["graph.captured.cuMemAllocAsync"] += 1;
  }
  return result;
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream) {
  if (!goodStream(stream))
    return fail("cuMemFreeAsync", CUDA_ERROR_INVALID_HANDLE);
  if (capturing(stream)) {
    std::lock_guard<std::mutex> lock(census().mutex);
    Capture &c = census().captures[stream];
    auto &blocks = c.memory->blocks;
    if (std::find(blocks.begin(), blocks.end(), static_cast<uintptr_t>(dptr)) ==
        blocks.end()) {
      if (c.broken == CUDA_SUCCESS)
        c.broken = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
      census().counts["error.cuMemFreeAsync"] += 1;
      return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    // Freed with the graph's memory.
    c.nodes.push_back({"cuMemFreeAsync", {}, nullptr});
    census().counts["graph.captured.cuMemFreeAsync"] += 1;
    return CUDA_SUCCESS;
  }
  return release("cuMemFreeAsync", dptr);
}

CUresult cuMemcpy2DAsync(const CUDA_MEMCPY2D *copy, CUstream stream) {
  count("cuMemcpy2DAsync");
  if (!copy || !goodStream(stream))
    return fail("cuMemcpy2DAsync", CUDA_ERROR_INVALID_VALUE);
  size_t rows = copy->Height, width = copy->WidthInBytes;
  if (rows == 0 || width == 0)
    return CUDA_SUCCESS;
  auto base = [&](CUmemorytype type, const void *host, CUdeviceptr device,
                  size_t x, size_t y, size_t pitch) -> char * {
    size_t extent = (y + rows - 1) * pitch + x + width;
    if (type == CU_MEMORYTYPE_HOST)
      return const_cast<char *>(static_cast<const char *>(host));
    if (type == CU_MEMORYTYPE_DEVICE && isDevice(device, extent))
      return reinterpret_cast<char *>(device);
    return nullptr;
  };
  char *src = base(copy->srcMemoryType, copy->srcHost, copy->srcDevice,
                   copy->srcXInBytes, copy->srcY, copy->srcPitch);
  char *dst = base(copy->dstMemoryType, copy->dstHost, copy->dstDevice,
                   copy->dstXInBytes, copy->dstY, copy->dstPitch);
  if (!src || !dst || copy->srcPitch < width || copy->dstPitch < width)
    return fail("cuMemcpy2DAsync", CUDA_ERROR_INVALID_VALUE);
  CUDA_MEMCPY2D c = *copy;
  auto run = [c, src, dst, rows, width] {
    for (size_t r = 0; r < rows; ++r)
      std::memmove(dst + (c.dstY + r) * c.dstPitch + c.dstXInBytes,
                   src + (c.srcY + r) * c.srcPitch + c.srcXInBytes, width);
    count("bytes.copy2d", static_cast<long long>(rows * width));
  };
  if (capturing(stream)) {
    if (copy->srcMemoryType != CU_MEMORYTYPE_DEVICE ||
        copy->dstMemoryType != CU_MEMORYTYPE_DEVICE)
      return breakCapture("cuMemcpy2DAsync", stream,
                          CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    size_t srcExtent =
        (copy->srcY + rows - 1) * copy->srcPitch + copy->srcXInBytes + width;
    size_t dstExtent =
        (copy->dstY + rows - 1) * copy->dstPitch + copy->dstXInBytes + width;
    record(stream, {"cuMemcpy2DAsync",
                    {{static_cast<uintptr_t>(copy->srcDevice), srcExtent},
                     {static_cast<uintptr_t>(copy->dstDevice), dstExtent}},
                    run});
    return CUDA_SUCCESS;
  }
  run();
  return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t bytes,
                           CUstream stream) {
  count("cuMemcpyHtoDAsync");
  if (capturing(stream))
    return breakCapture("cuMemcpyHtoDAsync", stream,
                        CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  if (!goodStream(stream) || (bytes && (!src || !isDevice(dst, bytes))))
    return fail("cuMemcpyHtoDAsync", CUDA_ERROR_INVALID_VALUE);
  if (bytes)
    std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  count("bytes.htod", static_cast<long long>(bytes));
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes,
                           CUstream stream) {
  count("cuMemcpyDtoHAsync");
  if (capturing(stream))
    return breakCapture("cuMemcpyDtoHAsync", stream,
                        CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  if (!goodStream(stream) || (bytes && (!dst || !isDevice(src, bytes))))
    return fail("cuMemcpyDtoHAsync", CUDA_ERROR_INVALID_VALUE);
  if (bytes)
    std::memcpy(dst, reinterpret_cast<const void *>(src), bytes);
  count("bytes.dtoh", static_cast<long long>(bytes));
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                           CUstream stream) {
  count("cuMemcpyDtoDAsync");
  if (!goodStream(stream) ||
      (bytes && (!isDevice(src, bytes) || !isDevice(dst, bytes))))
    return fail("cuMemcpyDtoDAsync", CUDA_ERROR_INVALID_VALUE);
  auto run = [dst, src, bytes] {
    if (bytes)
      std::memmove(reinterpret_cast<void *>(dst),
                   reinterpret_cast<const void *>(src), bytes);
    count("bytes.dtod", static_cast<long long>(bytes));
  };
  if (!record(stream, {"cuMemcpyDtoDAsync",
                       {{static_cast<uintptr_t>(src), bytes},
                        {static_cast<uintptr_t>(dst), bytes}},
                       run}))
    run();
  return CUDA_SUCCESS;
}

CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t bytes,
                         CUstream stream) {
  count("cuMemsetD8Async");
  if (!goodStream(stream) || (bytes && !isDevice(dst, bytes)))
    return fail("cuMemsetD8Async", CUDA_ERROR_INVALID_VALUE);
  auto run = [dst, value, bytes] {
    if (bytes)
      std::memset(reinterpret_cast<void *>(dst), value, bytes);
  };
  if (!record(stream,
              {"cuMemsetD8Async", {{static_cast<uintptr_t>(dst), bytes}}, run}))
    run();
  return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  if (!current)
    return fail("cuModuleLoadData", CUDA_ERROR_INVALID_CONTEXT);
  count("cuModuleLoadData");
  if (!module || !image)
    return fail("cuModuleLoadData", CUDA_ERROR_INVALID_VALUE);
  *module = make<CUmodule>(census().modules);
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *function, CUmodule module,
                             const char *name) {
  count("cuModuleGetFunction");
  if (!isLive(census().modules, module))
    return fail("cuModuleGetFunction", CUDA_ERROR_INVALID_HANDLE);
  if (!name || !*name)
    return fail("cuModuleGetFunction", CUDA_ERROR_INVALID_VALUE);
  auto *handle = new Object{2};
  std::lock_guard<std::mutex> lock(census().mutex);
  census().functions[handle] = module;
  *function = reinterpret_cast<CUfunction>(handle);
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule module) {
  count("cuModuleUnload");
  if (!drop(census().modules, module))
    return fail("cuModuleUnload", CUDA_ERROR_INVALID_HANDLE);
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction function, unsigned int gx, unsigned int gy,
                        unsigned int gz, unsigned int bx, unsigned int by,
                        unsigned int bz, unsigned int, CUstream stream,
                        void **params, void **extra) {
  count("cuLaunchKernel");
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(census().mutex);
    auto it = census().functions.find(function);
    // A function of an unloaded module is gone with it.
    known =
        it != census().functions.end() && census().modules.count(it->second);
  }
  if (!known || !goodStream(stream))
    return fail("cuLaunchKernel", CUDA_ERROR_INVALID_HANDLE);
  if (!gx || !gy || !gz || !bx || !by || !bz ||
      static_cast<unsigned long long>(bx) * by * bz > 1024 || (params && extra))
    return fail("cuLaunchKernel", CUDA_ERROR_INVALID_VALUE);
  record(stream, {"cuLaunchKernel", {}, nullptr});
  return CUDA_SUCCESS;
}

CUresult cuStreamBeginCapture_v2(CUstream stream, CUstreamCaptureMode mode) {
  count("cuStreamBeginCapture");
  // The legacy default stream cannot be captured.
  if (!stream)
    return fail("cuStreamBeginCapture", CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  if (!goodStream(stream))
    return fail("cuStreamBeginCapture", CUDA_ERROR_INVALID_HANDLE);
  std::lock_guard<std::mutex> lock(census().mutex);
  if (census().captures.count(stream)) {
    census().counts["error.cuStreamBeginCapture"] += 1;
    return CUDA_ERROR_ILLEGAL_STATE;
  }
  Capture &c = census().captures[stream];
  c.relaxed = mode == CU_STREAM_CAPTURE_MODE_RELAXED;
  if (!c.relaxed)
    ++strictCaptures;
  return CUDA_SUCCESS;
}

CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph) {
  count("cuStreamEndCapture");
  if (!graph)
    return fail("cuStreamEndCapture", CUDA_ERROR_INVALID_VALUE);
  *graph = nullptr;
  Capture c;
  {
    std::lock_guard<std::mutex> lock(census().mutex);
    auto it = census().captures.find(stream);
    if (it == census().captures.end()) {
      census().counts["error.cuStreamEndCapture"] += 1;
      return CUDA_ERROR_ILLEGAL_STATE;
    }
    c = std::move(it->second);
    census().captures.erase(it);
  }
  if (!c.relaxed)
    --strictCaptures;
  if (c.broken != CUDA_SUCCESS)
    return fail("cuStreamEndCapture", CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  auto *made = new Graph{3, std::move(c.nodes), std::move(c.memory)};
  std::lock_guard<std::mutex> lock(census().mutex);
  census().graphs.insert(made);
  *graph = reinterpret_cast<CUgraph>(made);
  return CUDA_SUCCESS;
}

CUresult cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus *status) {
  if (!status || !goodStream(stream))
    return fail("cuStreamIsCapturing", CUDA_ERROR_INVALID_VALUE);
  std::lock_guard<std::mutex> lock(census().mutex);
  auto it = census().captures.find(stream);
  *status = it == census().captures.end() ? CU_STREAM_CAPTURE_STATUS_NONE
            : it->second.broken == CUDA_SUCCESS
                ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                : CU_STREAM_CAPTURE_STATUS_INVALIDATED;
  return CUDA_SUCCESS;
}

/// The live graph (kind 3) or executable graph (kind 4) `handle`, or null.
Graph *findGraph(const void *handle, int kind) {
  std::lock_guard<std::mutex> lock(census().mutex);
  if (!census().graphs.count(handle))
    return nullptr;
  auto *g = static_cast<Graph *>(const_cast<void *>(handle));
  return g->kind == kind ? g : nullptr;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph,
                                     unsigned long long) {
  count("cuGraphInstantiate");
  Graph *g = findGraph(graph, 3);
  if (!exec || !g)
    return fail("cuGraphInstantiate", CUDA_ERROR_INVALID_VALUE);
  auto *made = new Graph{4, g->nodes, g->memory};
  std::lock_guard<std::mutex> lock(census().mutex);
  census().graphs.insert(made);
  *exec = reinterpret_cast<CUgraphExec>(made);
  return CUDA_SUCCESS;
}

CUresult cuGraphExecUpdate_v2(CUgraphExec exec, CUgraph graph,
                              CUgraphExecUpdateResultInfo *info) {
  count("cuGraphExecUpdate");
  Graph *e = findGraph(exec, 4), *g = findGraph(graph, 3);
  if (!e || !g || !info)
    return fail("cuGraphExecUpdate", CUDA_ERROR_INVALID_VALUE);
  *info = {};
  // The same topology: the same calls in the same order; their parameters
  // (addresses, sizes) may differ.
  bool same = e->nodes.size() == g->nodes.size();
  for (size_t i = 0; same && i < e->nodes.size(); ++i)
    same = e->nodes[i].call == g->nodes[i].call;
  if (!same) {
    info->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    return fail("cuGraphExecUpdate", CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
  }
  e->nodes = g->nodes;
  e->memory = g->memory;
  info->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
  return CUDA_SUCCESS;
}

CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  count("cuGraphLaunch");
  Graph *e = findGraph(exec, 4);
  if (!e || !goodStream(stream))
    return fail("cuGraphLaunch", CUDA_ERROR_INVALID_HANDLE);
  if (capturing(stream))
    return breakCapture("cuGraphLaunch", stream,
                        CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  for (const Node &node : e->nodes)
    for (const FakeRange &range : node.ranges)
      if (range.bytes && !tprtFakeIsDevice(range.ptr, range.bytes))
        return fail("cuGraphLaunch", CUDA_ERROR_ILLEGAL_ADDRESS);
  for (const Node &node : e->nodes) {
    count("graph.replayed." + node.call);
    if (node.run)
      node.run();
  }
  return CUDA_SUCCESS;
}

/// Destroys a live graph (kind 3) or executable graph (kind 4).
static CUresult destroyGraph(const char *call, const void *handle, int kind) {
  count(call);
  Graph *g = findGraph(handle, kind);
  if (!g)
    return fail(call, CUDA_ERROR_INVALID_VALUE);
  {
    std::lock_guard<std::mutex> lock(census().mutex);
    census().graphs.erase(g);
  }
  delete g;
  return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph graph) {
  return destroyGraph("cuGraphDestroy", graph, 3);
}

CUresult cuGraphExecDestroy(CUgraphExec exec) {
  return destroyGraph("cuGraphExecDestroy", exec, 4);
}

} // extern "C"
