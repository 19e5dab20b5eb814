//===- World.cpp - Communicator backends by name --------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The registry of communicator backends and the C API of worlds. A backend
// is a name and a factory of worlds; sessions and embedders pick one by name
// (tprt_world_options.backend, tprt_session_options.backend). A new backend
// (mpi, nccl) is one more entry here, compiled in when its library is found.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

using namespace tprt;

const std::vector<Backend> &tprt::backends() {
  static const std::vector<Backend> registry = {
      {"local", "every rank a thread of this process, shared memory", "cpu",
       false, createLocalWorld},
      {"device",
       "every rank a thread of this process on one GPU (CUDA programs; "
       "collectives read the peers' device buffers)",
       "cuda", false, createDeviceWorld},
      {"mpi",
       "every rank a process of an MPI job (mpirun -np N), MPI's "
       "collectives",
       "cpu", true, createMpiWorld},
      {"nccl",
       "every rank a thread of this process on its own GPU (CUDA programs; "
       "NCCL collectives)",
       "cuda", false, createNcclWorld},
      {"nccl-mpi",
       "every rank a process of an MPI job on its own GPU (CUDA programs; "
       "NCCL bootstrapped by MPI)",
       "cuda", true, createNcclMpiWorld},
  };
  return registry;
}

const Backend *tprt::findBackend(const char *name) {
  if (!name)
    return nullptr;
  for (const Backend &b : backends())
    if (std::strcmp(b.name, name) == 0)
      return &b;
  return nullptr;
}

std::chrono::milliseconds tprt::defaultTimeout() {
  if (const char *env = std::getenv("TPRT_TIMEOUT_MS")) {
    char *end = nullptr;
    errno = 0;
    long long ms = std::strtoll(env, &end, 10);
    if (errno == 0 && end != env && *end == '\0' && ms > 0)
      return std::chrono::milliseconds(ms);
  }
  return std::chrono::milliseconds(60000);
}

extern "C" {

int32_t tprt_num_backends(void) {
  return static_cast<int32_t>(backends().size());
}

const char *tprt_backend_name(int32_t index) {
  if (index < 0 || index >= tprt_num_backends())
    return nullptr;
  return backends()[static_cast<size_t>(index)].name;
}

const char *tprt_backend_target(const char *backend) {
  const Backend *b = findBackend(backend && *backend ? backend : "local");
  return b ? b->target : nullptr;
}

int32_t tprt_backend_processes(const char *backend) {
  const Backend *b = findBackend(backend && *backend ? backend : "local");
  return b ? (b->processes ? 1 : 0) : -1;
}

tprt_status tprt_world_create(const tprt_mesh *mesh,
                              const tprt_world_options *options,
                              tprt_world **world) {
  if (!world)
    return error(TPRT_INVALID_ARGUMENT, "world: output pointer is null");
  *world = nullptr;
  if (!mesh)
    return error(TPRT_INVALID_ARGUMENT, "world: mesh is null");
  if (tprt_status status = tprt_mesh_check(mesh))
    return status;
  if (tprt_status status = checkOptionsSize(options, "tprt_world_options"))
    return status;
  const char *backend = optionField(options, &tprt_world_options::backend,
                                    static_cast<const char *>(nullptr));
  const char *name = backend && *backend ? backend : "local";
  const Backend *it = findBackend(name);
  if (!it) {
    std::string known;
    for (const Backend &b : backends())
      known += (known.empty() ? "" : ", ") + std::string(b.name);
    return error(TPRT_INVALID_ARGUMENT, "unknown communicator backend '", name,
                 "'; this build has: ", known);
  }
  int64_t timeoutMs =
      optionField(options, &tprt_world_options::timeout_ms, int64_t{0});
  std::chrono::milliseconds timeout =
      timeoutMs > 0 ? std::chrono::milliseconds(timeoutMs) : defaultTimeout();
  try {
    return it->create(*mesh, timeout, world);
  } catch (const std::exception &e) {
    return error(TPRT_INTERNAL, "world '", name, "': ", e.what());
  }
}

const char *tprt_world_backend(const tprt_world *world) {
  return world->backend();
}

const tprt_mesh *tprt_world_mesh(const tprt_world *world) {
  return &world->mesh();
}

int64_t tprt_world_num_local_ranks(const tprt_world *world) {
  return static_cast<int64_t>(world->localRanks().size());
}

int64_t tprt_world_local_rank(const tprt_world *world, int64_t index) {
  const std::vector<int64_t> &ranks = world->localRanks();
  if (index < 0 || index >= static_cast<int64_t>(ranks.size()))
    return -1;
  return ranks[static_cast<size_t>(index)];
}

tprt_status tprt_world_communicator(tprt_world *world, int64_t rank,
                                    tprt_communicator **comm) {
  if (!world || !comm)
    return error(TPRT_INVALID_ARGUMENT, "world or output pointer is null");
  const std::vector<int64_t> &ranks = world->localRanks();
  if (!std::binary_search(ranks.begin(), ranks.end(), rank))
    return error(TPRT_INVALID_ARGUMENT, "rank ", rank,
                 " is not a rank of this process in a '", world->backend(),
                 "' world of ", tprt_mesh_num_devices(&world->mesh()),
                 " ranks");
  *comm = world->communicator(rank);
  return nullptr;
}

void tprt_world_destroy(tprt_world *world) { delete world; }

} // extern "C"
