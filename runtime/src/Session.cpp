//===- Session.cpp - Running a program on every device of a mesh ----------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A run on the session's backend (every rank in this process):
//  1. checks the inputs and outputs against the manifest;
//  2. cuts each rank's shard of every input (tprt_scatter_shard) and gives it
//     a zeroed buffer per result;
//  3. starts one thread per rank on a fresh world, each calling the
//     function's entry point with its rank context;
//  4. waits for the ranks; one still computing `timeout_ms` after another
//     finished is abandoned (its thread owns a reference to the run's state,
//     so nothing it touches is freed under it);
//  5. reports the root cause if a rank failed (the first error that is not
//     another rank's abort), else gathers every result
//     (tprt_gather_shards) and keeps each rank's own copy for
//     tprt_session_local_result.
//
//===----------------------------------------------------------------------===//

#include "Program.h"
#include "RankContext.h"

#include <algorithm>
#include <cblas.h>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <type_traits>

using namespace tprt;

struct tprt_session_s {
  tprt_mesh mesh;
  int64_t timeoutMs = 0;
  std::string backend = "local";
  uint64_t partialSeed = 0;
  bool deviceTiming = false;
  std::vector<tprt_comm_stats> stats;
  std::vector<double> seconds;
  std::vector<tprt_rank_profile> profiles;
  /// Of the last run, when it was timed on a GPU world.
  std::vector<tprt_device_profile> deviceProfiles;
  /// Each rank's own result buffers of the last successful run.
  std::vector<std::vector<std::vector<char>>> localResults;
};

namespace {

bool sameMesh(const tprt_mesh &a, const tprt_mesh &b) {
  if (a.rank != b.rank)
    return false;
  for (int32_t i = 0; i < a.rank; ++i)
    if (a.sizes[i] != b.sizes[i])
      return false;
  return true;
}

tprt_status checkTensor(const char *what, int32_t index,
                        const tprt_tensor_info &expected,
                        const tprt_host_tensor &given) {
  bool same = given.dtype == expected.dtype && given.rank == expected.rank;
  for (int32_t d = 0; same && d < given.rank; ++d)
    same = given.shape[d] == expected.shape[d];
  if (!same)
    return error(TPRT_INVALID_ARGUMENT, what, " #", index, " is ",
                 tprt_dtype_name(given.dtype),
                 formatShape(given.shape, std::max(given.rank, 0)),
                 "; the program expects ", tprt_dtype_name(expected.dtype),
                 formatShape(expected.shape, expected.rank));
  if (!given.data)
    return error(TPRT_INVALID_ARGUMENT, what, " #", index, " has no data");
  return nullptr;
}

size_t bytesOf(const tprt_tensor_info &info, const int64_t *shape) {
  return static_cast<size_t>(product(shape, info.rank)) *
         tprt_dtype_size(info.dtype);
}

/// splitmix64: a small, good, seedable generator.
uint64_t nextRandom(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// splitTerm for one integer element: a term in [-8, 8], subtracted with
/// wrap-around (exact).
template <typename T>
void splitInteger(void *holder, void *term, int64_t i, uint64_t &state) {
  using U = std::make_unsigned_t<T>;
  T &v = static_cast<T *>(holder)[i];
  T t = static_cast<T>(static_cast<int64_t>(nextRandom(state) % 17) - 8);
  static_cast<T *>(term)[i] = t;
  v = static_cast<T>(static_cast<U>(v) - static_cast<U>(t));
}

/// Replaces `term` (zeros) by a random term and subtracts it from `holder`
/// (the member that holds the value), element by element: the terms keep
/// adding up to the value, exactly for integers, to rounding for floats.
void splitTerm(tprt_dtype dtype, void *holder, void *term, int64_t count,
               uint64_t &state) {
  auto uniform = [&] { // in [-1, 1)
    return static_cast<double>(nextRandom(state) >> 11) * 0x1.0p-52 - 1.0;
  };
  for (int64_t i = 0; i < count; ++i) {
    switch (dtype) {
    case TPRT_F32: {
      float &v = static_cast<float *>(holder)[i];
      float t = static_cast<float>(uniform() * (std::fabs(v) + 1.0));
      static_cast<float *>(term)[i] = t;
      v -= t;
      break;
    }
    case TPRT_F64: {
      double &v = static_cast<double *>(holder)[i];
      double t = uniform() * (std::fabs(v) + 1.0);
      static_cast<double *>(term)[i] = t;
      v -= t;
      break;
    }
    case TPRT_F16:
    case TPRT_BF16: {
      bool half = dtype == TPRT_F16;
      uint16_t &bits = static_cast<uint16_t *>(holder)[i];
      float v = half ? halfToFloat(bits) : bf16ToFloat(bits);
      // Multiples of 1/64 below 1 in magnitude are exact in both formats.
      float t = std::floor(static_cast<float>(uniform()) * 64.0f) / 64.0f;
      static_cast<uint16_t *>(term)[i] = half ? floatToHalf(t) : floatToBf16(t);
      bits = half ? floatToHalf(v - t) : floatToBf16(v - t);
      break;
    }
    case TPRT_I32:
      splitInteger<int32_t>(holder, term, i, state);
      break;
    case TPRT_I64:
      splitInteger<int64_t>(holder, term, i, state);
      break;
    default:
      return;
    }
  }
}

/// Everything the rank threads of one run touch. Each thread holds a
/// reference, so that a rank abandoned while still running (an endless loop)
/// never sees its buffers, world or statistics freed.
struct RunState {
  explicit RunState(int64_t numRanks)
      : buffers(numRanks), pointers(numRanks), statuses(numRanks, nullptr),
        stats(numRanks), seconds(numRanks, 0), profiles(numRanks),
        deviceProfiles(numRanks, TPRT_DEVICE_PROFILE_INIT),
        done(numRanks, false) {}
  ~RunState() {
    tprt_world_destroy(world);
    for (tprt_status status : statuses)
      tprt_status_free(status);
  }
  std::vector<std::vector<std::vector<char>>> buffers;
  std::vector<std::vector<void *>> pointers;
  std::vector<tprt_status> statuses;
  std::vector<tprt_comm_stats> stats;
  std::vector<double> seconds;
  std::vector<tprt_rank_profile> profiles;
  std::vector<tprt_device_profile> deviceProfiles;
  bool deviceTiming = false;
  tprt_world *world = nullptr;
  /// The buffers before this index are inputs (not copied back).
  size_t numInputs = 0;

  std::mutex mutex;
  std::condition_variable cv;
  std::vector<bool> done;
  int64_t finished = 0;
};

/// One rank's run on its thread: its context, its buffers (on a GPU world
/// copied to the device first and back after, on the rank's stream), the
/// program's entry, its statistics. Returns the rank's first error.
tprt_status runRank(RunState &s, EntryFn entry, int64_t rank) {
  tprt_communicator *comm = nullptr;
  if (tprt_status status = tprt_world_communicator(s.world, rank, &comm))
    return status;
  DeviceRanks *device = s.world->device();
  tprt_rank_context *ctx = nullptr;
  std::vector<void *> pointers = s.pointers[rank];
  auto releaseAll = [&] {
    if (device)
      for (void *ptr : pointers)
        if (ptr)
          device->release(rank, ptr);
  };
  if (device) {
    if (tprt_status status = device->enter(rank))
      return status;
    // Every buffer, results included (zeros), goes to the device.
    for (size_t i = 0; i < pointers.size(); ++i) {
      size_t bytes = s.buffers[rank][i].size();
      void *ptr = nullptr;
      tprt_status status = device->alloc(rank, bytes, &ptr);
      if (!status)
        status =
            device->copyToDevice(rank, ptr, s.buffers[rank][i].data(), bytes);
      pointers[i] = ptr;
      if (status) {
        for (size_t j = i + 1; j < pointers.size(); ++j)
          pointers[j] = nullptr;
        releaseAll();
        return status;
      }
    }
  }
  tprt_status status = device ? createRankContext(comm, device->table(),
                                                  device->rankState(rank), &ctx)
                              : tprt_rank_context_create(comm, &ctx);
  if (status) {
    releaseAll();
    return status;
  }
  if (device && s.deviceTiming)
    if (tprt_status timing = device->startTiming(rank)) {
      tprt_rank_context_destroy(ctx);
      releaseAll();
      return timing;
    }
  Clock::time_point start = Clock::now();
  entry(ctx, pointers.data());
  status = tprt_rank_context_take_status(ctx);
  if (device) {
    // The results back to the host: the run ends when they are there.
    for (size_t i = s.numInputs; i < pointers.size() && !status; ++i)
      status = device->copyToHost(rank, s.buffers[rank][i].data(), pointers[i],
                                  s.buffers[rank][i].size());
    if (tprt_status synced = device->synchronize(rank)) {
      if (status)
        tprt_status_free(synced);
      else
        status = synced;
    }
    if (s.deviceTiming) {
      tprt_status timed = device->takeTiming(rank, &s.deviceProfiles[rank]);
      if (status)
        tprt_status_free(timed);
      else
        status = timed;
    }
    releaseAll();
  }
  s.seconds[rank] = std::chrono::duration<double>(Clock::now() - start).count();
  tprt_communicator_stats(comm, &s.stats[rank]);
  tprt_rank_profile &profile = s.profiles[rank];
  profile.total_seconds = s.seconds[rank];
  profile.comm = s.stats[rank];
  tprt_rank_context_gemm_stats(ctx, &profile.gemm_calls, &profile.gemm_flops,
                               &profile.gemm_seconds);
  tprt_rank_context_destroy(ctx);
  return status;
}

} // namespace

extern "C" {

tprt_status tprt_session_create(const tprt_mesh *mesh,
                                const tprt_session_options *options,
                                tprt_session **session) {
  if (tprt_status status = tprt_mesh_check(mesh))
    return status;
  if (tprt_status status = checkOptionsSize(options, "tprt_session_options"))
    return status;
  std::unique_ptr<tprt_session_s> created;
  const char *backend = optionField(options, &tprt_session_options::backend,
                                    static_cast<const char *>(nullptr));
  try {
    created = std::make_unique<tprt_session_s>();
    if (backend && *backend)
      created->backend = backend;
  } catch (const std::exception &e) {
    return error(TPRT_INTERNAL, "session: ", e.what());
  }
  created->mesh = *mesh;
  created->timeoutMs =
      optionField(options, &tprt_session_options::timeout_ms, int64_t{0});
  created->partialSeed =
      optionField(options, &tprt_session_options::partial_seed, uint64_t{0});
  created->deviceTiming =
      optionField(options, &tprt_session_options::device_timing, int32_t{0}) !=
      0;
  // An unknown backend fails here, not at the first run.
  tprt_world_options worldOptions = TPRT_WORLD_OPTIONS_INIT;
  worldOptions.backend = created->backend.c_str();
  worldOptions.timeout_ms = created->timeoutMs;
  tprt_world *world = nullptr;
  if (tprt_status status = tprt_world_create(mesh, &worldOptions, &world))
    return status;
  tprt_world_destroy(world);
  *session = created.release();
  return nullptr;
}

void tprt_session_destroy(tprt_session *session) { delete session; }

} // extern "C"

namespace {

tprt_status runSession(tprt_session *session, const tprt_program *program,
                       int32_t function, const tprt_host_tensor *inputs,
                       int32_t num_inputs, tprt_host_tensor *outputs,
                       int32_t num_outputs) {
  if (!session || !program)
    return error(TPRT_INVALID_ARGUMENT, "session or program is null");
  if (function < 0 || function >= tprt_program_num_functions(program))
    return error(TPRT_INVALID_ARGUMENT, "no function #", function);
  const Function &f = program->functions[function];
  // 1. Target, inputs, outputs, mesh.
  if (!sameMesh(f.mesh, session->mesh))
    return error(TPRT_INVALID_ARGUMENT, "function '", f.name,
                 "' runs on a mesh of shape ",
                 formatShape(f.mesh.sizes, f.mesh.rank),
                 "; the session's mesh is ",
                 formatShape(session->mesh.sizes, session->mesh.rank));
  if (num_inputs != f.numArgs)
    return error(TPRT_INVALID_ARGUMENT, "function '", f.name, "' takes ",
                 f.numArgs, " inputs, got ", num_inputs);
  if (num_outputs != f.numResults)
    return error(TPRT_INVALID_ARGUMENT, "function '", f.name, "' returns ",
                 f.numResults, " results, got room for ", num_outputs);
  for (int32_t i = 0; i < num_inputs; ++i)
    if (tprt_status status = checkTensor("input", i, f.args[i], inputs[i]))
      return status;
  for (int32_t i = 0; i < num_outputs; ++i)
    if (tprt_status status = checkTensor("output", i, f.results[i], outputs[i]))
      return status;

  // 2. Each rank's buffers.
  int64_t numRanks = tprt_mesh_num_devices(&f.mesh);
  auto state = std::make_shared<RunState>(numRanks);
  state->numInputs = static_cast<size_t>(num_inputs);
  state->deviceTiming = session->deviceTiming;
  auto &buffers = state->buffers;
  for (int64_t rank = 0; rank < numRanks; ++rank) {
    for (int32_t i = 0; i < num_inputs; ++i) {
      const tprt_tensor_info &info = f.args[i];
      int64_t local[TPRT_MAX_TENSOR_RANK];
      tprt_shard_shape(&f.mesh, &info.sharding, info.shape, local);
      buffers[rank].emplace_back(bytesOf(info, local));
      if (tprt_status status = tprt_scatter_shard(
              &f.mesh, &info.sharding, info.shape, info.dtype, inputs[i].data,
              rank, buffers[rank].back().data()))
        return status;
    }
    for (int32_t i = 0; i < num_outputs; ++i) {
      const tprt_tensor_info &info = f.results[i];
      int64_t local[TPRT_MAX_TENSOR_RANK];
      tprt_shard_shape(&f.mesh, &info.sharding, info.shape, local);
      buffers[rank].emplace_back(bytesOf(info, local));
    }
  }
  // Pending sums as random terms: every member but the first of each partial
  // group gets a random term, which the first member's value gives up.
  if (session->partialSeed) {
    for (int32_t i = 0; i < num_inputs; ++i) {
      const tprt_tensor_info &info = f.args[i];
      if (info.sharding.partial.count == 0)
        continue;
      int64_t local[TPRT_MAX_TENSOR_RANK];
      tprt_shard_shape(&f.mesh, &info.sharding, info.shape, local);
      int64_t count = product(local, info.rank);
      for (int64_t rank = 0; rank < numRanks; ++rank) {
        std::vector<int64_t> members =
            groupMembers(f.mesh, info.sharding.partial, rank);
        if (members[0] == rank)
          continue;
        // Replicas (along axes the tensor does not use) get the same term.
        int64_t leader = tprt_replica_leader(&f.mesh, &info.sharding, rank);
        uint64_t seed = session->partialSeed ^
                        (static_cast<uint64_t>(i) << 32) ^
                        static_cast<uint64_t>(leader) * 0x9e3779b97f4a7c15ull;
        splitTerm(info.dtype, buffers[members[0]][i].data(),
                  buffers[rank][i].data(), count, seed);
      }
    }
  }

  // 3. Every rank on a fresh world. The ranks share the machine's cores:
  // OpenBLAS gets its share per rank instead of every core per rank (unless
  // OPENBLAS_NUM_THREADS says otherwise).
  if (!std::getenv("OPENBLAS_NUM_THREADS")) {
    int cores =
        static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    openblas_set_num_threads(std::max(
        1, cores / static_cast<int>(std::min<int64_t>(numRanks, cores))));
  }
  tprt_world_options options = TPRT_WORLD_OPTIONS_INIT;
  options.backend = session->backend.c_str();
  options.timeout_ms = session->timeoutMs;
  if (tprt_status status = tprt_world_create(&f.mesh, &options, &state->world))
    return status;
  if (tprt_world_num_local_ranks(state->world) != numRanks)
    return error(TPRT_INVALID_ARGUMENT, "backend '", session->backend,
                 "' drives ", tprt_world_num_local_ranks(state->world), " of ",
                 numRanks, " ranks in this process; sessions run every rank");
  DeviceRanks *device = state->world->device();
  const char *worldTarget = device ? device->target() : "cpu";
  if (std::strcmp(worldTarget, targetName(program->target)) != 0)
    return error(TPRT_INVALID_ARGUMENT, "function '", f.name,
                 "' was compiled for ", targetName(program->target),
                 " (tp-compile --target ", targetName(program->target),
                 "); the session's '", session->backend,
                 "' backend runs programs compiled for ", worldTarget);
  // Everything a rank needs is allocated here: nothing in a rank's thread
  // can throw.
  for (int64_t rank = 0; rank < numRanks; ++rank)
    for (std::vector<char> &buffer : buffers[rank])
      state->pointers[rank].push_back(buffer.data());
  EntryFn entry = f.entry;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(numRanks));
  for (int64_t rank = 0; rank < numRanks; ++rank) {
    threads.emplace_back([state, entry, rank] {
      RunState &s = *state;
      s.statuses[rank] = runRank(s, entry, rank);
      std::lock_guard<std::mutex> lock(s.mutex);
      s.done[rank] = true;
      ++s.finished;
      s.cv.notify_all();
    });
  }

  // 4. Wait; a rank still computing `timeoutMs` after another finished is
  // stuck (it is in no collective, or that would have ended it).
  std::vector<int64_t> stuck;
  int64_t timeoutMs = 0;
  {
    std::unique_lock<std::mutex> lock(state->mutex);
    int64_t seen = 0;
    auto timeout = session->timeoutMs > 0
                       ? std::chrono::milliseconds(session->timeoutMs)
                       : defaultTimeout();
    timeoutMs = timeout.count();
    while (state->finished < numRanks) {
      seen = state->finished;
      bool moved = state->cv.wait_for(lock, timeout,
                                      [&] { return state->finished != seen; });
      if (!moved && seen > 0)
        break;
    }
    for (int64_t rank = 0; rank < numRanks; ++rank)
      if (!state->done[rank])
        stuck.push_back(rank);
  }
  for (int64_t rank = 0; rank < numRanks; ++rank) {
    if (std::find(stuck.begin(), stuck.end(), rank) != stuck.end()) {
      threads[rank].detach();
      ++const_cast<tprt_program *>(program)->abandonedRanks;
    } else {
      threads[rank].join();
    }
  }
  if (!stuck.empty()) {
    std::ostringstream os;
    os << (stuck.size() == 1 ? "rank " : "ranks ");
    for (size_t i = 0; i < stuck.size(); ++i)
      os << (i ? ", " : "") << stuck[i];
    os << " of '" << f.name << "' did not return within " << timeoutMs
       << " ms after the other ranks stopped: stuck in computation (in no "
          "collective); abandoned, still running";
    return error(TPRT_TIMEOUT, os.str());
  }
  session->stats = state->stats;
  session->seconds = state->seconds;
  session->profiles = state->profiles;
  if (state->deviceTiming && state->world->device())
    session->deviceProfiles = state->deviceProfiles;
  else
    session->deviceProfiles.clear();

  // 5. The root cause of a failure, or the results.
  tprt_status failure = nullptr;
  for (tprt_status &status : state->statuses)
    if (status && (!failure || (tprt_status_code(failure) == TPRT_ABORTED &&
                                tprt_status_code(status) != TPRT_ABORTED)))
      std::swap(failure, status);
  if (failure)
    return failure;
  for (int32_t i = 0; i < num_outputs; ++i) {
    std::vector<const void *> shards;
    for (int64_t rank = 0; rank < numRanks; ++rank)
      shards.push_back(buffers[rank][num_inputs + i].data());
    const tprt_tensor_info &info = f.results[i];
    if (tprt_status status =
            tprt_gather_shards(&f.mesh, &info.sharding, info.shape, info.dtype,
                               shards.data(), outputs[i].data))
      return status;
  }
  session->localResults.assign(numRanks, {});
  for (int64_t rank = 0; rank < numRanks; ++rank)
    for (int32_t i = 0; i < num_outputs; ++i)
      session->localResults[rank].push_back(
          std::move(buffers[rank][num_inputs + i]));
  return nullptr;
}

} // namespace

extern "C" {

tprt_status tprt_session_run(tprt_session *session, const tprt_program *program,
                             int32_t function, const tprt_host_tensor *inputs,
                             int32_t num_inputs, tprt_host_tensor *outputs,
                             int32_t num_outputs) {
  // No C++ exception crosses the C API (out of memory for the shards, a
  // thread that cannot start): it becomes TPRT_INTERNAL with its message.
  try {
    return runSession(session, program, function, inputs, num_inputs, outputs,
                      num_outputs);
  } catch (const std::exception &e) {
    return error(TPRT_INTERNAL, "run: ", e.what());
  }
}

tprt_status tprt_session_local_result(const tprt_session *session, int64_t rank,
                                      int32_t index, const void **data) {
  if (!session || !data)
    return error(TPRT_INVALID_ARGUMENT, "session or data is null");
  if (rank < 0 || rank >= static_cast<int64_t>(session->localResults.size()))
    return error(TPRT_INVALID_ARGUMENT, "no results for rank ", rank,
                 " (has the session run successfully?)");
  const auto &results = session->localResults[rank];
  if (index < 0 || index >= static_cast<int32_t>(results.size()))
    return error(TPRT_INVALID_ARGUMENT, "no result #", index, "; the run had ",
                 results.size());
  *data = results[index].data();
  return nullptr;
}

tprt_status tprt_session_stats(const tprt_session *session, int64_t rank,
                               tprt_comm_stats *stats, double *seconds) {
  if (rank < 0 || rank >= static_cast<int64_t>(session->stats.size()))
    return error(TPRT_INVALID_ARGUMENT, "no statistics for rank ", rank,
                 " (has the session run?)");
  *stats = session->stats[rank];
  if (seconds)
    *seconds = session->seconds[rank];
  return nullptr;
}

tprt_status tprt_session_profile(const tprt_session *session, int64_t rank,
                                 tprt_rank_profile *profile) {
  if (rank < 0 || rank >= static_cast<int64_t>(session->profiles.size()))
    return error(TPRT_INVALID_ARGUMENT, "no profile for rank ", rank,
                 " (has the session run?)");
  *profile = session->profiles[rank];
  return nullptr;
}

tprt_status tprt_session_device_profile(const tprt_session *session,
                                        int64_t rank,
                                        tprt_device_profile *profile) {
  if (session->deviceProfiles.empty())
    return error(TPRT_INVALID_ARGUMENT,
                 "no device profile: the session's last run was not on a GPU "
                 "world with tprt_session_options.device_timing");
  if (rank < 0 || rank >= static_cast<int64_t>(session->deviceProfiles.size()))
    return error(TPRT_INVALID_ARGUMENT, "no device profile for rank ", rank,
                 " of ", session->deviceProfiles.size());
  if (tprt_status s = checkOptionsSize(profile, "tprt_device_profile"))
    return s;
  // Only the fields the caller's struct has.
  tprt_device_profile copy = session->deviceProfiles[rank];
  uint32_t size = std::min<uint32_t>(profile->struct_size, sizeof(copy));
  copy.struct_size = profile->struct_size;
  std::memcpy(profile, &copy, size);
  return nullptr;
}

} // extern "C"
