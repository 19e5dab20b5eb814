//===- Array.cpp - Arrays placed on a session's devices -------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// An array is a tensor whose shards live in the memory of a session's ranks
// (device memory on a GPU world, host memory on the CPU) between runs: placed
// from a global tensor or from shards, passed to runs, returned by runs
// (tprt_session_run_arrays, Session.cpp), fetched on demand. Each rank
// places, fetches and frees its own shard on its own thread, its device
// current.
//
// Handles are checked before they are read: every handle made and not yet
// freed is in a registry, so a freed one, or one never made, is an error and
// not a read of freed memory. A freed handle's memory is kept for a while (a
// quarantine of the last kQuarantine frees) so that a new handle does not
// reuse its address at once and pass for it.
//
//===----------------------------------------------------------------------===//

#include "Session.h"

#include <atomic>
#include <deque>
#include <unordered_set>

using namespace tprt;

namespace {

constexpr size_t kQuarantine = 1024;

struct Registry {
  std::mutex mutex;
  std::unordered_set<const tprt_array_s *> live;
  std::deque<tprt_array_s *> freed;
  std::atomic<uint64_t> nextId{1};
};

Registry &registry() {
  static Registry *r = new Registry();
  return *r;
}

bool isLive(const tprt_array_s *array) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  return registry().live.count(array) != 0;
}

std::string describe(const tprt_tensor_info &info) {
  return std::string(tprt_dtype_name(info.dtype)) +
         formatShape(info.shape, std::max(info.rank, 0));
}

std::string describeSharding(const tprt_sharding &sharding) {
  std::string s = "[";
  for (int32_t d = 0; d < sharding.rank; ++d)
    s += (d ? ", " : "") + formatAxes(sharding.dims[d]);
  s += "]";
  if (sharding.partial.count)
    s += " partial " + formatAxes(sharding.partial);
  return s;
}

bool sameAxes(const tprt_axes &a, const tprt_axes &b) {
  if (a.count != b.count)
    return false;
  for (int32_t i = 0; i < a.count; ++i)
    if (a.axes[i] != b.axes[i])
      return false;
  return true;
}

/// A session's arrays are used under its runMutex; a handle whose session
/// is gone says so.
tprt_status sessionOf(const tprt_array_s *array, const char *what,
                      tprt_session **session) {
  if (!array || !isLive(array))
    return error(TPRT_INVALID_ARGUMENT, what,
                 ": not an array (freed, or never made)");
  if (!array->link->session)
    return error(TPRT_INVALID_ARGUMENT, what, ": array #", array->id,
                 " was freed with its session");
  if (!array->donatedTo.empty())
    return error(TPRT_INVALID_ARGUMENT, what, ": array #", array->id,
                 " was donated to ", array->donatedTo,
                 " and holds nothing now");
  *session = array->link->session;
  return nullptr;
}

/// Checks `info` for an array on `session`'s mesh.
tprt_status checkInfo(const tprt_session *session,
                      const tprt_tensor_info *info) {
  if (!info)
    return error(TPRT_INVALID_ARGUMENT, "array: info is null");
  if (!tprt_dtype_size(info->dtype))
    return error(TPRT_INVALID_ARGUMENT, "array: unknown dtype ",
                 static_cast<int>(info->dtype));
  if (info->rank < 0 || info->rank > TPRT_MAX_TENSOR_RANK)
    return error(TPRT_INVALID_ARGUMENT, "array: rank ", info->rank,
                 " is not in [0, ", TPRT_MAX_TENSOR_RANK, "]");
  for (int32_t d = 0; d < info->rank; ++d)
    if (info->shape[d] < 0)
      return error(TPRT_INVALID_ARGUMENT, "array: dimension ", d, " is ",
                   info->shape[d]);
  if (tprt_status status =
          tprt_sharding_check(&session->mesh, &info->sharding, info->shape)) {
    tprt_status named =
        error(tprt_status_code(status), "array: ", tprt_status_message(status));
    tprt_status_free(status);
    return named;
  }
  return nullptr;
}

size_t shardBytesOf(const tprt_session *session, const tprt_tensor_info &info) {
  int64_t local[TPRT_MAX_TENSOR_RANK];
  tprt_shard_shape(&session->mesh, &info.sharding, info.shape, local);
  return static_cast<size_t>(product(local, info.rank)) *
         tprt_dtype_size(info.dtype);
}

/// Removes `array` from the registry and its session's list and frees its
/// memory; its handle goes to the quarantine.
void destroy(tprt_session *session, tprt_array_s *array) {
  if (session) {
    releaseArray(session, array);
    session->arrays.erase(array);
  }
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().live.erase(array);
  registry().freed.push_back(array);
  if (registry().freed.size() > kQuarantine) {
    delete registry().freed.front();
    registry().freed.pop_front();
  }
}

/// Makes an array of `info` on `session` whose k-th shard `fill` writes
/// into the rank's host buffer `shard` (CPU) or a host staging buffer that
/// is then uploaded (GPU); `fill` may instead return a host pointer to
/// upload from (a contiguous run of the caller's tensor), in `*source`.
tprt_status
place(tprt_session *session, const tprt_tensor_info *info,
      const std::function<tprt_status(int64_t rank, size_t k, void *shard,
                                      const void **source)> &fill,
      tprt_array **out) {
  if (tprt_status status = session->checkUsable())
    return status;
  if (tprt_status status = checkInfo(session, info))
    return status;
  tprt_array_s *array = newArray(session, *info);
  size_t bytes = shardBytesOf(session, *info);
  array->shardBytes = bytes;
  size_t local = session->localRanks.size();
  array->shards.assign(local, nullptr);
  DeviceRanks *device = session->world->world->device();
  if (!device)
    array->host.resize(local);
  tprt_status status =
      forEachLocalRank(session, [&](int64_t rank, size_t k) -> tprt_status {
        if (!device) {
          try {
            array->host[k].resize(bytes);
          } catch (const std::bad_alloc &) {
            return error(TPRT_INTERNAL, "rank ", rank, ": out of memory for ",
                         bytes, " bytes of array #", array->id);
          }
          array->shards[k] = array->host[k].data();
          const void *source = nullptr;
          if (tprt_status s = fill(rank, k, array->host[k].data(), &source))
            return s;
          if (source)
            copyBytes(array->host[k].data(), source, bytes);
          return nullptr;
        }
        void *ptr = nullptr;
        if (tprt_status s = device->alloc(rank, bytes, &ptr))
          return s;
        array->shards[k] = ptr;
        Bytes staging;
        const void *source = nullptr;
        if (tprt_status s = fill(rank, k, nullptr, &source))
          return s;
        if (!source) {
          try {
            staging.resize(bytes);
          } catch (const std::bad_alloc &) {
            return error(TPRT_INTERNAL, "rank ", rank, ": out of memory for ",
                         bytes, " bytes staging array #", array->id);
          }
          if (tprt_status s = fill(rank, k, staging.data(), &source))
            return s;
          source = staging.data();
        }
        if (tprt_status s = device->copyToDevice(rank, ptr, source, bytes))
          return s;
        // The staging buffer and the caller's data are free to go after.
        return device->synchronize(rank);
      });
  if (status) {
    destroy(session, array);
    return status;
  }
  *out = array;
  return nullptr;
}

/// Every local rank's shard of `array` in host memory: the rank's own
/// buffer on the CPU, else a copy into `staging`.
tprt_status shardsOnHost(tprt_session *session, const tprt_array_s *array,
                         std::vector<Bytes> &staging,
                         std::vector<const void *> &shards) {
  DeviceRanks *device = session->world->world->device();
  size_t local = session->localRanks.size();
  shards.assign(local, nullptr);
  if (!device) {
    for (size_t k = 0; k < local; ++k)
      shards[k] = array->shards[k];
    return nullptr;
  }
  staging.resize(local);
  for (Bytes &b : staging)
    b.resize(array->shardBytes);
  for (size_t k = 0; k < local; ++k)
    shards[k] = staging[k].data();
  return forEachLocalRank(session, [&](int64_t rank, size_t k) -> tprt_status {
    if (tprt_status s = device->copyToHost(rank, staging[k].data(),
                                           array->shards[k], array->shardBytes))
      return s;
    return device->synchronize(rank);
  });
}

} // namespace

std::string tprt::describeMismatch(const tprt_tensor_info &info,
                                   const tprt_tensor_info &expected) {
  bool same = info.dtype == expected.dtype && info.rank == expected.rank;
  for (int32_t d = 0; same && d < info.rank; ++d)
    same = info.shape[d] == expected.shape[d];
  if (!same)
    return "is " + describe(info) + "; the program expects " +
           describe(expected);
  bool sameSharding =
      info.sharding.rank == expected.sharding.rank &&
      sameAxes(info.sharding.partial, expected.sharding.partial);
  for (int32_t d = 0; sameSharding && d < info.sharding.rank; ++d)
    sameSharding = sameAxes(info.sharding.dims[d], expected.sharding.dims[d]);
  if (!sameSharding)
    return "is sharded " + describeSharding(info.sharding) +
           "; the program expects " + describeSharding(expected.sharding);
  return "";
}

tprt_status tprt::checkArray(const tprt_session *session,
                             const tprt_array_s *array,
                             const std::string &what) {
  if (!array || !isLive(array))
    return error(TPRT_INVALID_ARGUMENT, what,
                 ": not an array (freed, or never made)");
  if (array->link->session != session)
    return error(TPRT_INVALID_ARGUMENT, what, ": array #", array->id,
                 array->link->session ? " belongs to another session"
                                      : " was freed with its session");
  if (!array->donatedTo.empty())
    return error(TPRT_INVALID_ARGUMENT, what, ": array #", array->id,
                 " was donated to ", array->donatedTo,
                 " and holds nothing now");
  return nullptr;
}

tprt_array_s *tprt::newArray(tprt_session *session,
                             const tprt_tensor_info &info) {
  auto *array = new tprt_array_s();
  array->id = registry().nextId.fetch_add(1);
  array->link = session->link;
  array->info = info;
  array->info.name = "";
  session->arrays.insert(array);
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().live.insert(array);
  return array;
}

void tprt::releaseArray(tprt_session *session, tprt_array_s *array) {
  DeviceRanks *device = session->world->world->device();
  if (device && !array->shards.empty()) {
    // A rank abandoned in an endless loop takes no work: its world, and this
    // memory, are kept for it.
    if (!session->abandoned) {
      tprt_status status =
          forEachLocalRank(session, [&](int64_t rank, size_t k) -> tprt_status {
            if (array->shards[k])
              device->release(rank, array->shards[k]);
            return nullptr;
          });
      tprt_status_free(status);
    }
  }
  array->shards.clear();
  array->host.clear();
}

extern "C" {

tprt_status tprt_array_place(tprt_session *session,
                             const tprt_tensor_info *info, const void *global,
                             tprt_array **array) {
  if (!session || !array)
    return error(TPRT_INVALID_ARGUMENT,
                 "tprt_array_place: session or output pointer is null");
  *array = nullptr;
  if (!global)
    return error(TPRT_INVALID_ARGUMENT, "tprt_array_place: global is null");
  try {
    std::lock_guard<std::mutex> turn(session->runMutex);
    const tprt_mesh *mesh = &session->mesh;
    return place(
        session, info,
        [&](int64_t rank, size_t, void *shard,
            const void **source) -> tprt_status {
          int64_t offset = 0;
          if (info->sharding.partial.count == 0 &&
              tprt_shard_contiguous(mesh, &info->sharding, info->shape, rank,
                                    &offset)) {
            *source =
                static_cast<const char *>(global) +
                offset * static_cast<int64_t>(tprt_dtype_size(info->dtype));
            return nullptr;
          }
          if (!shard)
            return nullptr; // a staging buffer first
          return tprt_scatter_shard(mesh, &info->sharding, info->shape,
                                    info->dtype, global, rank, shard);
        },
        array);
  } catch (const std::exception &e) {
    return error(TPRT_INTERNAL, "tprt_array_place: ", e.what());
  }
}

tprt_status tprt_array_write(tprt_array *array, const void *global) {
  if (!array || !global)
    return error(TPRT_INVALID_ARGUMENT,
                 "tprt_array_write: array or global is null");
  if (!isLive(array))
    return error(TPRT_INVALID_ARGUMENT,
                 "tprt_array_write: not an array (freed, or never made)");
  tprt_session *session = array->link->session;
  if (!session)
    return error(TPRT_INVALID_ARGUMENT, "tprt_array_write: array #", array->id,
                 " was freed with its session");
  try {
    std::lock_guard<std::mutex> turn(session->runMutex);
    if (tprt_status status = session->checkUsable())
      return status;
    if (tprt_status status = checkArray(session, array, "tprt_array_write"))
      return status;
    const tprt_mesh *mesh = &session->mesh;
    const tprt_tensor_info &info = array->info;
    DeviceRanks *device = session->world->world->device();
    size_t bytes = array->shardBytes;
    return forEachLocalRank(
        session, [&](int64_t rank, size_t k) -> tprt_status {
          // A contiguous run of the tensor is read where it is; another
          // shard is cut into the rank's memory (CPU) or a staging buffer.
          const void *source = nullptr;
          int64_t offset = 0;
          if (info.sharding.partial.count == 0 &&
              tprt_shard_contiguous(mesh, &info.sharding, info.shape, rank,
                                    &offset))
            source = static_cast<const char *>(global) +
                     offset * static_cast<int64_t>(tprt_dtype_size(info.dtype));
          if (!device) {
            if (source) {
              copyBytes(array->shards[k], source, bytes);
              return nullptr;
            }
            return tprt_scatter_shard(mesh, &info.sharding, info.shape,
                                      info.dtype, global, rank,
                                      array->shards[k]);
          }
          Bytes staging;
          if (!source) {
            staging.resize(bytes);
            if (tprt_status s = tprt_scatter_shard(
                    mesh, &info.sharding, info.shape, info.dtype, global, rank,
                    staging.data()))
              return s;
            source = staging.data();
          }
          if (tprt_status s =
                  device->copyToDevice(rank, array->shards[k], source, bytes))
            return s;
          return device->synchronize(rank);
        });
  } catch (const std::exception &e) {
    return error(TPRT_INTERNAL, "tprt_array_write: ", e.what());
  }
}

tprt_status tprt_array_place_shards(tprt_session *session,
                                    const tprt_tensor_info *info,
                                    const void *const *shards,
                                    int64_t num_shards, tprt_array **array) {
  if (!session || !array)
    return error(TPRT_INVALID_ARGUMENT,
                 "tprt_array_place_shards: session or output pointer is null");
  *array = nullptr;
  int64_t local = static_cast<int64_t>(session->localRanks.size());
  if (num_shards != local || !shards)
    return error(TPRT_INVALID_ARGUMENT, "tprt_array_place_shards: ", num_shards,
                 " shard(s)", shards ? "" : " (null)", " for ", local,
                 " local rank(s)");
  for (int64_t k = 0; k < local; ++k)
    if (!shards[k])
      return error(TPRT_INVALID_ARGUMENT, "tprt_array_place_shards: rank ",
                   session->localRanks[static_cast<size_t>(k)],
                   "'s shard is null");
  try {
    std::lock_guard<std::mutex> turn(session->runMutex);
    return place(
        session, info,
        [&](int64_t, size_t k, void *, const void **source) -> tprt_status {
          *source = shards[k];
          return nullptr;
        },
        array);
  } catch (const std::exception &e) {
    return error(TPRT_INTERNAL, "tprt_array_place_shards: ", e.what());
  }
}

tprt_status tprt_array_fetch(const tprt_array *array, void *global) {
  tprt_session *session = nullptr;
  if (tprt_status status = sessionOf(array, "tprt_array_fetch", &session))
    return status;
  if (!global)
    return error(TPRT_INVALID_ARGUMENT, "tprt_array_fetch: global is null");
  try {
    std::lock_guard<std::mutex> turn(session->runMutex);
    if (tprt_status status = session->checkUsable())
      return status;
    std::vector<Bytes> staging;
    std::vector<const void *> mine;
    if (tprt_status status = shardsOnHost(session, array, staging, mine))
      return status;
    const tprt_tensor_info &info = array->info;
    int64_t numRanks = tprt_mesh_num_devices(&session->mesh);
    std::vector<const void *> shards(static_cast<size_t>(numRanks), nullptr);
    Bytes all;
    if (Processes *procs = session->world->world->processes()) {
      // Every process calls this: each one's shard to every process.
      all.resize(array->shardBytes * static_cast<size_t>(numRanks));
      if (tprt_status status =
              procs->allGather(mine[0], array->shardBytes, all.data()))
        return status;
      for (int64_t r = 0; r < numRanks; ++r)
        shards[r] = all.data() + array->shardBytes * static_cast<size_t>(r);
    } else {
      for (int64_t r = 0; r < numRanks; ++r)
        shards[r] = mine[static_cast<size_t>(r)];
    }
    // Replicas must agree: a device whose copy differs from its replica
    // leader's is a program that broke its sharding.
    std::string what = "tprt_array_fetch: array #" + std::to_string(array->id) +
                       " (" + describe(info) + " sharded " +
                       describeSharding(info.sharding) + ")";
    if (tprt_status status =
            tprt_check_replicas(&session->mesh, &info.sharding, info.dtype,
                                shards.data(), array->shardBytes, what.c_str()))
      return status;
    return tprt_gather_shards(&session->mesh, &info.sharding, info.shape,
                              info.dtype, shards.data(), global);
  } catch (const std::exception &e) {
    return error(TPRT_INTERNAL, "tprt_array_fetch: ", e.what());
  }
}

tprt_status tprt_array_fetch_shard(const tprt_array *array, int64_t rank,
                                   void *shard) {
  tprt_session *session = nullptr;
  if (tprt_status status = sessionOf(array, "tprt_array_fetch_shard", &session))
    return status;
  if (!shard)
    return error(TPRT_INVALID_ARGUMENT,
                 "tprt_array_fetch_shard: shard is null");
  const std::vector<int64_t> &ranks = session->localRanks;
  auto it = std::find(ranks.begin(), ranks.end(), rank);
  if (it == ranks.end())
    return error(TPRT_INVALID_ARGUMENT, "tprt_array_fetch_shard: rank ", rank,
                 " is not one of this process's ranks");
  size_t index = static_cast<size_t>(it - ranks.begin());
  try {
    std::lock_guard<std::mutex> turn(session->runMutex);
    if (tprt_status status = session->checkUsable())
      return status;
    DeviceRanks *device = session->world->world->device();
    if (!device) {
      copyBytes(shard, array->shards[index], array->shardBytes);
      return nullptr;
    }
    return forEachLocalRank(session, [&](int64_t r, size_t k) -> tprt_status {
      if (k != index)
        return nullptr;
      if (tprt_status s =
              device->copyToHost(r, shard, array->shards[k], array->shardBytes))
        return s;
      return device->synchronize(r);
    });
  } catch (const std::exception &e) {
    return error(TPRT_INTERNAL, "tprt_array_fetch_shard: ", e.what());
  }
}

const tprt_tensor_info *tprt_array_info(const tprt_array *array) {
  return array && isLive(array) ? &array->info : nullptr;
}

uint64_t tprt_array_id(const tprt_array *array) {
  return array && isLive(array) ? array->id : 0;
}

void tprt_array_free(tprt_array *array) {
  if (!array || !isLive(array))
    return;
  tprt_session *session = array->link->session;
  if (!session) {
    destroy(nullptr, array);
    return;
  }
  std::lock_guard<std::mutex> turn(session->runMutex);
  destroy(session, array);
}

} // extern "C"
