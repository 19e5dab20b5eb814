//===- CudaLibraries.cpp - The CUDA driver, cuBLAS and NCCL, opened late --===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaLibraries.h"

#include "Internal.h"

#include <dlfcn.h>
#include <mutex>

using namespace tprt;
using namespace tprt::cuda;

#ifndef TPRT_HAS_CUDA_HEADERS

namespace {
tprt_status builtWithoutCuda() {
  return error(TPRT_UNAVAILABLE,
               "this libtprt was built without the CUDA headers "
               "(TP_ENABLE_CUDA=OFF, or no CUDA toolkit at build time)");
}
} // namespace

tprt_status tprt::cuda::loadDriver(const Driver **) {
  return builtWithoutCuda();
}
tprt_status tprt::cuda::loadCublas(const Cublas **) {
  return builtWithoutCuda();
}
tprt_status tprt::cuda::loadCublasLt(const CublasLt **) {
  return builtWithoutCuda();
}
tprt_status tprt::cuda::loadNccl(const Nccl **) { return builtWithoutCuda(); }

#else

#define TPRT_STR(x) #x
#define TPRT_XSTR(x) TPRT_STR(x)

namespace {

/// One library, opened once: the table, or why it could not be had.
template <typename Table> struct Loaded {
  std::once_flag once;
  Table table;
  std::string failure;
  tprt_code code = TPRT_OK;
};

/// Opens the first of `names` that loads; its dlerror otherwise.
void *openLibrary(std::initializer_list<const char *> names, std::string &why) {
  for (const char *name : names) {
    if (void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL))
      return handle;
    const char *message = dlerror();
    why += (why.empty() ? "" : "; ") + std::string(message ? message : name);
  }
  return nullptr;
}

/// Resolves `symbol` into `slot`; false (with `missing` set) when absent.
template <typename Fn>
bool resolve(void *handle, const char *symbol, Fn &slot, std::string &missing) {
  slot = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (!slot && missing.empty())
    missing = symbol;
  return slot != nullptr;
}

/// Opens the first of `libraries` into `loaded`'s table: `resolveAll` fills
/// it (naming the first symbol it misses), `finish` reads the version or
/// starts the library. `absent` says what is missing when none opens.
template <typename Table, typename ResolveAll, typename Finish>
void openTable(Loaded<Table> &loaded,
               std::initializer_list<const char *> libraries,
               const char *absent, ResolveAll resolveAll, Finish finish) {
  std::string why;
  void *handle = openLibrary(libraries, why);
  if (!handle) {
    loaded.code = TPRT_UNAVAILABLE;
    loaded.failure = std::string(absent) + ": " + why;
    return;
  }
  std::string missing;
  resolveAll(handle, loaded.table, missing);
  if (!missing.empty()) {
    loaded.code = TPRT_UNAVAILABLE;
    loaded.failure = std::string(*libraries.begin()) + " has no '" + missing +
                     "': it is older than this runtime needs";
    return;
  }
  finish(loaded);
}

template <typename Table>
tprt_status result(const Loaded<Table> &loaded, const Table **table) {
  if (loaded.code != TPRT_OK)
    return error(loaded.code, loaded.failure);
  *table = &loaded.table;
  return nullptr;
}

} // namespace

tprt_status Driver::error(CUresult result, const std::string &call) const {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = "unknown CUresult";
  if (cuGetErrorString(result, &text) != CUDA_SUCCESS || !text)
    text = "no description";
  return tprt::error(result == CUDA_ERROR_OUT_OF_MEMORY ? TPRT_INTERNAL
                                                        : TPRT_UNAVAILABLE,
                     call, " failed: ", name, " (", text, ")");
}

tprt_status Cublas::error(cublasStatus_t status,
                          const std::string &call) const {
  return tprt::error(TPRT_INTERNAL, call,
                     " failed: ", cublasGetStatusName(status), " (",
                     cublasGetStatusString(status), ")");
}

tprt_status CublasLt::error(cublasStatus_t status,
                            const std::string &call) const {
  return tprt::error(TPRT_INTERNAL, call,
                     " failed: ", cublasLtGetStatusName(status), " (",
                     cublasLtGetStatusString(status), ")");
}

tprt_status Nccl::error(ncclResult_t result, const std::string &call) const {
  return tprt::error(TPRT_INTERNAL, call,
                     " failed: ", ncclGetErrorString(result));
}

tprt_status tprt::cuda::loadDriver(const Driver **driver) {
  static Loaded<Driver> loaded;
  std::call_once(loaded.once, [] {
    openTable(
        loaded, {"libcuda.so.1", "libcuda.so"}, "no CUDA driver found",
        [](void *handle, Driver &d, std::string &missing) {
#define TPRT_RESOLVE(name) resolve(handle, TPRT_XSTR(name), d.name, missing);
          TPRT_CUDA_DRIVER_FUNCTIONS(TPRT_RESOLVE)
#undef TPRT_RESOLVE
        },
        [](Loaded<Driver> &l) {
          Driver &d = l.table;
          if (CUresult r = d.cuInit(0); r != CUDA_SUCCESS) {
            tprt_status status = d.error(r, "cuInit");
            l.code = tprt_status_code(status);
            l.failure = std::string("the CUDA driver does not start: ") +
                        tprt_status_message(status);
            tprt_status_free(status);
            return;
          }
          d.cuDriverGetVersion(&d.version);
        });
  });
  return result(loaded, driver);
}

tprt_status tprt::cuda::loadCublas(const Cublas **cublas) {
  static Loaded<Cublas> loaded;
  std::call_once(loaded.once, [] {
    openTable(
        loaded, {"libcublas.so.13"}, "cuBLAS 13 not found",
        [](void *handle, Cublas &c, std::string &missing) {
#define TPRT_RESOLVE(name) resolve(handle, TPRT_XSTR(name), c.name, missing);
          TPRT_CUBLAS_FUNCTIONS(TPRT_RESOLVE)
#undef TPRT_RESOLVE
          // The types must be those of the header's C declarations: these
          // casts pick an overload of that type or fail to compile.
          (void)static_cast<Cublas::GemmExFn>(&::cublasGemmEx);
          (void)static_cast<Cublas::GemmStridedBatchedExFn>(
              &::cublasGemmStridedBatchedEx);
          (void)static_cast<Cublas::GemmBatchedExFn>(&::cublasGemmBatchedEx);
          resolve(handle, "cublasGemmEx", c.cublasGemmEx, missing);
          resolve(handle, "cublasGemmStridedBatchedEx",
                  c.cublasGemmStridedBatchedEx, missing);
          resolve(handle, "cublasGemmBatchedEx", c.cublasGemmBatchedEx,
                  missing);
        },
        [](Loaded<Cublas> &l) {
          int major = 0, minor = 0, patch = 0;
          l.table.cublasGetProperty(MAJOR_VERSION, &major);
          l.table.cublasGetProperty(MINOR_VERSION, &minor);
          l.table.cublasGetProperty(PATCH_LEVEL, &patch);
          l.table.version = major * 10000 + minor * 100 + patch;
        });
  });
  return result(loaded, cublas);
}

tprt_status tprt::cuda::loadCublasLt(const CublasLt **cublasLt) {
  static Loaded<CublasLt> loaded;
  std::call_once(loaded.once, [] {
    openTable(
        loaded, {"libcublasLt.so.13"}, "cuBLASLt 13 not found",
        [](void *handle, CublasLt &c, std::string &missing) {
#define TPRT_RESOLVE(name) resolve(handle, TPRT_XSTR(name), c.name, missing);
          TPRT_CUBLASLT_FUNCTIONS(TPRT_RESOLVE)
#undef TPRT_RESOLVE
        },
        [](Loaded<CublasLt> &) {});
  });
  return result(loaded, cublasLt);
}

tprt_status tprt::cuda::loadNccl(const Nccl **nccl) {
  static Loaded<Nccl> loaded;
  std::call_once(loaded.once, [] {
    openTable(
        loaded, {"libnccl.so.2"}, "NCCL 2 not found",
        [](void *handle, Nccl &n, std::string &missing) {
#define TPRT_RESOLVE(name) resolve(handle, TPRT_XSTR(name), n.name, missing);
          TPRT_NCCL_FUNCTIONS(TPRT_RESOLVE)
#undef TPRT_RESOLVE
        },
        [](Loaded<Nccl> &l) { l.table.ncclGetVersion(&l.table.version); });
  });
  return result(loaded, nccl);
}

#endif // TPRT_HAS_CUDA_HEADERS

extern "C" tprt_status tprt_cuda_query(tprt_cuda_info *info) {
  if (!info)
    return error(TPRT_INVALID_ARGUMENT, "tprt_cuda_query: info is null");
  if (tprt_status status = checkOptionsSize(info, "tprt_cuda_info"))
    return status;
  // What the caller's struct has room for, filled field by field.
  tprt_cuda_info found = TPRT_CUDA_INFO_INIT;
  tprt_status first = nullptr;
  auto keep = [&](tprt_status status) {
    if (!first)
      first = status;
    else if (status)
      tprt_status_free(status);
  };
#ifdef TPRT_HAS_CUDA_HEADERS
  const Cublas *cublas = nullptr;
  if (tprt_status status = loadCublas(&cublas))
    keep(status);
  else
    found.cublas_version = cublas->version;
  const Nccl *nccl = nullptr;
  if (tprt_status status = loadNccl(&nccl))
    keep(status);
  else
    found.nccl_version = nccl->version;
  const Driver *driver = nullptr;
  tprt_status driverStatus = loadDriver(&driver);
  if (!driverStatus) {
    found.driver_version = driver->version;
    int count = 0;
    if (CUresult r = driver->cuDeviceGetCount(&count); r != CUDA_SUCCESS)
      driverStatus = driver->error(r, "cuDeviceGetCount");
    else if (count == 0)
      driverStatus =
          error(TPRT_UNAVAILABLE, "the CUDA driver is there but sees no GPU");
    found.device_count = count;
  }
  // The driver's absence is the first thing to say.
  if (driverStatus) {
    if (first)
      tprt_status_free(first);
    first = driverStatus;
  }
#else
  keep(loadDriver(nullptr));
#endif
  uint32_t size = info->struct_size;
  std::memcpy(reinterpret_cast<char *>(info) + sizeof(uint32_t),
              reinterpret_cast<const char *>(&found) + sizeof(uint32_t),
              std::min<size_t>(size, sizeof(found)) - sizeof(uint32_t));
  return first;
}
