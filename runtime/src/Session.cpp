//===- Session.cpp - Running a program on every device of a mesh ----------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A session makes its world once (tprt_session_create): the backend's
// communicators (and, on a GPU world, each rank's context, stream, cuBLAS
// handle and NCCL communicators), and, where every rank lives in this
// process, one thread per rank (RankThreads.h), with the CPU GEMM library
// (CpuGemm.h) given its share of the cores per rank. It keeps them until it is
// destroyed; a program's GPU kernels, loaded on a rank's first launch, stay
// loaded with the world. A run on a world whose ranks are all here:
//  1. checks the inputs and outputs against the manifest;
//  2. gives each rank a buffer per input shard and a zeroed buffer per
//     result; a shard that is one contiguous run of the caller's tensor
//     (whole, or split along its leading dimension) is read there instead,
//     for the program never writes its inputs (manifest version 4: its
//     arguments are bufferized read-only). Each rank cuts its other shards
//     (tprt_scatter_shard) on its own thread before it runs, in parallel
//     with the others (here, before the threads wake, when pending sums
//     are split into random terms: that needs every member's shard);
//  3. wakes each rank's thread, which calls the function's entry point with
//     a fresh rank context;
//  4. waits for the ranks; one still computing `timeout_ms` after another
//     finished is abandoned (its thread holds a reference to the run's
//     state and to the world, so nothing it touches is freed under it);
//  5. reports the root cause if a rank failed (the first error that is not
//     another rank's abort), else gathers every result
//     (tprt_gather_shards) and keeps each rank's own copy for
//     tprt_session_local_result.
// A rank that fails aborts the world's communicators, and a rank abandoned
// still holds its thread: either way the world cannot run again, and the
// session refuses every later run with the first run's cause (TPRT_ABORTED).
// On a world spread over processes (`mpi`, one rank a process; every process
// calls tprt_session_run with the same program) runDistributed does the same
// with messages: the processes first check they loaded the same program
// (checksum and function), rank 0 checks the inputs (only its own are read)
// and sends every process its shards or its refusal, each process runs its
// rank, and every process sends rank 0 its status, statistics, profile and
// results; rank 0 alone returns the gathered results, the root cause of a
// failure, and every rank's figures and local results.
//
//===----------------------------------------------------------------------===//

#include "Session.h"
#include "Affinity.h"
#include "CpuGemm.h"
#include "Program.h"
#include "RankContext.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <pthread.h>
#include <sched.h>
#include <sstream>
#include <thread>
#include <type_traits>

using namespace tprt;

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
  std::string named = expected.name && *expected.name
                          ? std::string(" ('") + expected.name + "')"
                          : std::string();
  if (!same)
    return error(TPRT_INVALID_ARGUMENT, what, " #", index, named, " is ",
                 tprt_dtype_name(given.dtype),
                 formatShape(given.shape, std::max(given.rank, 0)),
                 "; the program expects ", tprt_dtype_name(expected.dtype),
                 formatShape(expected.shape, expected.rank));
  if (!given.data)
    return error(TPRT_INVALID_ARGUMENT, what, " #", index, named,
                 " has no data");
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
/// never sees its buffers, world (`keep`) or statistics freed.
struct RunState {
  explicit RunState(int64_t numRanks)
      : buffers(numRanks), pointers(numRanks), sizes(numRanks),
        statuses(numRanks, nullptr), stats(numRanks), seconds(numRanks, 0),
        profiles(numRanks), deviceProfiles(numRanks, TPRT_DEVICE_PROFILE_INIT),
        done(numRanks, false) {}
  ~RunState() {
    for (tprt_status status : statuses)
      tprt_status_free(status);
  }
  /// Each rank's own copies of its inputs and results; an input it reads
  /// from the caller's tensor (contiguous shards of programs that never
  /// write their inputs: manifest version 4) has none.
  std::vector<std::vector<Bytes>> buffers;
  /// Where each rank's inputs and results are on the host, and their bytes.
  std::vector<std::vector<void *>> pointers;
  std::vector<std::vector<size_t>> sizes;
  std::vector<tprt_status> statuses;
  std::vector<tprt_comm_stats> stats;
  std::vector<double> seconds;
  std::vector<tprt_rank_profile> profiles;
  std::vector<tprt_device_profile> deviceProfiles;
  bool deviceTiming = false;
  /// The session's world, which `keep` keeps alive.
  tprt_world *world = nullptr;
  std::shared_ptr<SessionWorld> keep;
  EntryFn entry = nullptr;
  /// The program's checksum (its kernels' key on a GPU world) and the
  /// function's index.
  uint64_t program = 0;
  int32_t functionIndex = 0;
  MatmulPrecision precision = MatmulPrecision::Highest;
  /// On a GPU world, runs on arrays: how the ranks run the entry
  /// (GraphMode, decided for every rank before they run).
  bool graphed = false;
  GraphMode graphMode = GraphMode::Plain;
  /// Each rank's slot for the function's arena and constants' buffer
  /// (SessionWorld::arenas), when it has them.
  std::vector<void *> *arenas = nullptr;
  std::vector<void *> *constants = nullptr;
  /// tprt_session_run_arrays: per rank and buffer, whether it is an array
  /// already in the rank's memory (read there; empty: none is), and whether
  /// the results stay in the rank's memory (on a GPU world allocated and
  /// zeroed there, not copied back, and handed over in `kept`).
  std::vector<std::vector<char>> resident;
  bool resultsStay = false;
  std::vector<std::vector<void *>> kept;
  /// The buffers before this index are inputs (not copied back).
  size_t numInputs = 0;
  /// The results are the caller's shards (tprt_session_run_shards): each
  /// rank zeroes its own before it runs, as makeShards does for its buffers.
  bool zeroResults = false;
  /// Inputs each rank cuts from the caller's tensors itself, on its thread,
  /// before it runs (tprt_scatter_shard into its buffer): the ranks' copies
  /// proceed in parallel. Empty where makeShards cut them.
  std::vector<std::vector<int32_t>> rankScatters;
  const Function *function = nullptr;
  const tprt_host_tensor *inputs = nullptr;

  std::mutex mutex;
  std::condition_variable cv;
  std::vector<bool> done;
  /// Updated under `mutex`; read without it while the caller spins.
  std::atomic<int64_t> finished{0};
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
  if (!s.rankScatters.empty())
    for (int32_t i : s.rankScatters[rank]) {
      const tprt_tensor_info &info = s.function->args[i];
      if (tprt_status status = tprt_scatter_shard(
              &s.function->mesh, &info.sharding, info.shape, info.dtype,
              s.inputs[i].data, rank, s.pointers[rank][i])) {
        // The others must not wait for this rank in their collectives.
        comm->abort(status);
        return status;
      }
    }
  // The run's own figures: the world's communicators live across runs.
  tprt_communicator_reset_stats(comm);
  std::vector<void *> pointers = s.pointers[rank];
  const Function &fn = *s.function;
  // A result written in a donated argument's buffer (its donor) has none of
  // its own: on the host the caller set its pointer to the argument's own
  // copy, on a device it is the argument's device buffer.
  auto donor = [&](size_t i) {
    return i < s.numInputs ? -1
                           : fn.donor(static_cast<int32_t>(i - s.numInputs));
  };
  if (s.zeroResults)
    for (size_t i = s.numInputs; i < pointers.size(); ++i)
      if (donor(i) < 0)
        std::memset(pointers[i], 0, s.sizes[rank][i]);
  // Arrays (tprt_session_run_arrays) are already in the rank's memory.
  auto resident = [&](size_t i) {
    return !s.resident.empty() && s.resident[rank][i];
  };
  // Arguments the host code reads (manifest `hostread`): on a GPU, a copy in
  // host memory, which is not the device's to release.
  std::vector<Bytes> hostCopies;
  auto onHost = [&](size_t i) {
    return device && i < s.numInputs && fn.readOnHost(static_cast<int32_t>(i));
  };
  auto releaseAll = [&] {
    if (device)
      for (size_t i = 0; i < pointers.size(); ++i)
        if (pointers[i] && !resident(i) && donor(i) < 0 && !onHost(i))
          device->release(rank, pointers[i]);
  };
  if (device) {
    if (tprt_status status = device->enter(rank))
      return status;
    device->useProgram(rank, s.program);
    // Every buffer, results included (zeros), goes to the device, but for
    // arrays already there; results that stay are zeroed there, by the
    // entry's body below (in its graph), in the buffers of the function's
    // last results where their arrays were freed (DeviceRanks::idleOutput).
    for (size_t i = 0; i < pointers.size(); ++i) {
      if (donor(i) >= 0) {
        pointers[i] = pointers[static_cast<size_t>(donor(i))];
        continue;
      }
      if (onHost(i)) {
        if (!resident(i)) {
          pointers[i] = s.pointers[rank][i]; // the caller's host shard
          continue;
        }
        // An array on the device: its bytes, read back before the run.
        Bytes &copy = hostCopies.emplace_back(s.sizes[rank][i]);
        tprt_status status =
            device->copyToHost(rank, copy.data(), pointers[i], copy.size());
        if (!status)
          status = device->synchronize(rank);
        pointers[i] = copy.data();
        if (status) {
          for (size_t j = i + 1; j < pointers.size(); ++j)
            pointers[j] = nullptr;
          releaseAll();
          return status;
        }
        continue;
      }
      bool stays = s.resultsStay && i >= s.numInputs;
      if (resident(i) || (stays && pointers[i]))
        continue;
      size_t bytes = s.sizes[rank][i];
      void *ptr = nullptr;
      tprt_status status = device->alloc(rank, bytes, &ptr);
      if (!status && !stays)
        status = device->copyToDevice(rank, ptr, s.pointers[rank][i], bytes);
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
  ctx->matmulPrecision = static_cast<int32_t>(s.precision);
  if (device && s.deviceTiming)
    if (tprt_status timing = device->startTiming(rank)) {
      tprt_rank_context_destroy(ctx);
      releaseAll();
      return timing;
    }
  // The entry point takes the arguments' buffers, then those of the results
  // that are not written in a donated argument's, then its constants' buffer
  // and its arena (made by the rank's first run of the function, kept by the
  // session).
  std::vector<void *> entryBuffers;
  void **buffers = pointers.data();
  if (!fn.donatedFrom.empty() || s.arenas || s.constants) {
    entryBuffers.assign(pointers.begin(), pointers.begin() + s.numInputs);
    for (size_t i = s.numInputs; i < pointers.size(); ++i)
      if (donor(i) < 0)
        entryBuffers.push_back(pointers[i]);
    auto kept = [&](std::vector<void *> *slots, int64_t size,
                    const char *what) -> tprt_status {
      if (!slots)
        return nullptr;
      void *&buffer = (*slots)[static_cast<size_t>(rank)];
      if (!buffer) {
        size_t bytes = static_cast<size_t>(size);
        tprt_status made = nullptr;
        if (device)
          made = device->alloc(rank, bytes, &buffer);
        else if (!(buffer = std::aligned_alloc(64, (bytes + 63) / 64 * 64)))
          made = error(TPRT_INTERNAL, "rank ", rank, ": out of memory for the ",
                       bytes, "-byte ", what, " of '", fn.name, "'");
        if (made) {
          buffer = nullptr;
          return made;
        }
      }
      entryBuffers.push_back(buffer);
      return nullptr;
    };
    tprt_status made = kept(s.constants, fn.constantsBytes, "constants");
    if (!made)
      made = kept(s.arenas, fn.arenaBytes, "arena");
    if (made) {
      comm->abort(made);
      tprt_rank_context_destroy(ctx);
      releaseAll();
      return made;
    }
    buffers = entryBuffers.data();
  }
  Clock::time_point start = Clock::now();
  if (device) {
    EntryCall call;
    call.function = {s.program, s.functionIndex};
    call.name = fn.name.c_str();
    call.graphed = s.graphed;
    call.mode = s.graphMode;
    call.buffers.assign(buffers,
                        buffers + (entryBuffers.empty() ? pointers.size()
                                                        : entryBuffers.size()));
    for (size_t i = s.numInputs; i < pointers.size() && s.resultsStay; ++i)
      if (donor(i) < 0) {
        call.outputs.push_back(pointers[i]);
        call.outputBytes.push_back(s.sizes[rank][i]);
      }
    auto body = [&]() -> tprt_status {
      for (size_t i = 0; i < call.outputs.size(); ++i)
        if (tprt_status zeroed =
                device->zero(rank, call.outputs[i], call.outputBytes[i]))
          return zeroed;
      entry(ctx, buffers);
      return nullptr;
    };
    if (tprt_status failed = device->runEntry(rank, call, ctx, body))
      fail(ctx, failed);
  } else {
    entry(ctx, buffers);
  }
  if (device && s.deviceTiming)
    device->endRun(rank);
  status = tprt_rank_context_take_status(ctx);
  if (device) {
    // The results back to the host (unless they stay on the device as
    // arrays): the run ends when they are there.
    for (size_t i = s.numInputs;
         i < pointers.size() && !status && !s.resultsStay; ++i)
      status = device->copyToHost(rank, s.pointers[rank][i], pointers[i],
                                  s.sizes[rank][i]);
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
    if (s.resultsStay && !status) {
      // The results become arrays: the inputs alone were borrowed.
      s.kept[rank].assign(pointers.begin() + s.numInputs, pointers.end());
      pointers.resize(s.numInputs);
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

/// The core each rank thread is pinned to (Affinity.h), from the cores this
/// process may run on; none when the ranks fit, or TPRT_PIN_RANKS=0.
std::vector<int> pinnedCores(int64_t numRanks) {
  if (const char *pin = std::getenv("TPRT_PIN_RANKS"))
    if (std::strcmp(pin, "0") == 0)
      return {};
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    return {};
  std::vector<int> allowed;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set))
      allowed.push_back(cpu);
  return rankCores(allowed, numRanks);
}

/// Makes the session's world once: its communicators (tprt_world_create or
/// the session's maker), and, where every rank is in this process, a thread
/// per rank.
tprt_status makeSessionWorld(tprt_session *session,
                             std::shared_ptr<SessionWorld> &out) {
  auto made = std::make_shared<SessionWorld>();
  if (tprt_status status = session->createWorld(session->mesh, &made->world))
    return status;
  int64_t here = tprt_world_num_local_ranks(made->world);
  made->blasThreads = cpuGemmThreadsPerRank(here);
  if (!made->world->processes()) {
    int64_t numRanks = tprt_mesh_num_devices(&session->mesh);
    if (tprt_status status =
            RankThreads::start(numRanks, pinnedCores(numRanks), made->threads))
      return status;
  }
  out = std::move(made);
  return nullptr;
}

} // namespace

tprt_session_s::~tprt_session_s() {
  // Arrays still placed: their memory goes with the session, their handles
  // stay the caller's and say so.
  for (tprt_array_s *array : arrays)
    releaseArray(this, array);
  arrays.clear();
  // The functions' arenas, each freed by its rank (a rank abandoned in an
  // endless loop may still use its own: all are kept then).
  if (world && !abandoned) {
    DeviceRanks *device = world->world->device();
    for (auto &[key, slots] : world->arenas) {
      if (!device) {
        for (void *&arena : slots)
          std::free(arena);
        continue;
      }
      std::vector<void *> &mine = slots;
      tprt_status status =
          forEachLocalRank(this, [&](int64_t rank, size_t) -> tprt_status {
            if (mine[static_cast<size_t>(rank)])
              device->release(rank, mine[static_cast<size_t>(rank)]);
            return nullptr;
          });
      tprt_status_free(status);
    }
    world->arenas.clear();
  }
  if (link)
    link->session = nullptr;
  // The rank threads stop now, even where a rank abandoned in an endless
  // loop keeps the world alive: the others are joined, it is detached.
  if (world)
    world->threads.reset();
}

tprt_status tprt_session_check(tprt_session *session) {
  if (!session)
    return error(TPRT_INVALID_ARGUMENT, "tprt_session_check: session is null");
  std::lock_guard<std::mutex> lock(session->runMutex);
  return session->checkUsable();
}

tprt_status tprt_session_s::checkUsable() const {
  if (failureCode == TPRT_OK)
    return nullptr;
  return error(TPRT_ABORTED,
               "the session cannot run again: an earlier run failed (",
               tprt_code_name(failureCode), ": ", failure,
               ") and left its world aborted; destroy the session and "
               "create another");
}

namespace {

/// forEachLocalRank's work on every rank thread.
struct RankJob {
  const std::function<tprt_status(int64_t, size_t)> *work = nullptr;
  DeviceRanks *device = nullptr;
  std::vector<tprt_status> statuses;
  std::mutex mutex;
  std::condition_variable cv;
  int64_t done = 0;
};

void rankJob(void *arg, int64_t rank) {
  RankJob &job = *static_cast<RankJob *>(arg);
  tprt_status status = job.device ? job.device->enter(rank) : nullptr;
  if (!status)
    status = (*job.work)(rank, static_cast<size_t>(rank));
  std::lock_guard<std::mutex> lock(job.mutex);
  job.statuses[static_cast<size_t>(rank)] = status;
  ++job.done;
  job.cv.notify_all();
}

} // namespace

tprt_status tprt::forEachLocalRank(
    tprt_session *session,
    const std::function<tprt_status(int64_t rank, size_t k)> &work) {
  if (session->abandoned)
    return error(TPRT_ABORTED, "the session's rank threads are not all "
                               "there: an earlier run abandoned a rank");
  DeviceRanks *device = session->world->world->device();
  RankThreads *threads = session->world->threads.get();
  if (!threads) {
    // One rank a process: this process's rank, on this thread.
    int64_t rank = session->localRanks.front();
    if (device)
      if (tprt_status status = device->enter(rank))
        return status;
    return work(rank, 0);
  }
  auto job = std::make_shared<RankJob>();
  job->work = &work;
  job->device = device;
  job->statuses.assign(static_cast<size_t>(threads->size()), nullptr);
  threads->dispatch(rankJob, job);
  {
    std::unique_lock<std::mutex> lock(job->mutex);
    job->cv.wait(lock, [&] { return job->done == threads->size(); });
  }
  threads->release();
  tprt_status first = nullptr;
  for (tprt_status status : job->statuses)
    if (!first)
      first = status;
    else
      tprt_status_free(status);
  return first;
}

tprt_status tprt::createSession(const tprt_mesh *mesh,
                                const tprt_session_options *options,
                                WorldMaker makeWorld, const char *backendName,
                                tprt_session **session) {
  if (tprt_status status = tprt_mesh_check(mesh))
    return status;
  if (tprt_status status = checkOptionsSize(options, "tprt_session_options"))
    return status;
  if (tprt_status status = checkCpuGemmChoice())
    return status;
  std::unique_ptr<tprt_session_s> created;
  const char *backend =
      backendName ? backendName
                  : optionField(options, &tprt_session_options::backend,
                                static_cast<const char *>(nullptr));
  try {
    created = std::make_unique<tprt_session_s>();
    if (backend && *backend)
      created->backend = backend;
  } catch (const std::exception &e) {
    return error(TPRT_INTERNAL, "session: ", e.what());
  }
  created->mesh = *mesh;
  created->makeWorld = std::move(makeWorld);
  created->timeoutMs =
      optionField(options, &tprt_session_options::timeout_ms, int64_t{0});
  created->partialSeed =
      optionField(options, &tprt_session_options::partial_seed, uint64_t{0});
  created->deviceTiming =
      optionField(options, &tprt_session_options::device_timing, int32_t{0}) !=
      0;
  created->noGraphs =
      optionField(options, &tprt_session_options::no_graphs, int32_t{0}) != 0;
  created->skipReplicaCheck =
      optionField(options, &tprt_session_options::skip_replica_check,
                  int32_t{0}) != 0;
  // The world lives as long as the session (an unknown backend fails here).
  try {
    if (tprt_status status = makeSessionWorld(created.get(), created->world))
      return status;
  } catch (const std::exception &e) {
    return error(TPRT_INTERNAL, "session: ", e.what());
  }
  created->link = std::make_shared<SessionLink>();
  created->link->session = created.get();
  tprt_world *world = created->world->world;
  for (int64_t i = 0; i < tprt_world_num_local_ranks(world); ++i)
    created->localRanks.push_back(tprt_world_local_rank(world, i));
  *session = created.release();
  return nullptr;
}

extern "C" {

tprt_status tprt_session_create(const tprt_mesh *mesh,
                                const tprt_session_options *options,
                                tprt_session **session) {
  return createSession(mesh, options, nullptr, nullptr, session);
}

void tprt_session_destroy(tprt_session *session) { delete session; }

} // extern "C"

namespace {

/// The caller's arrays of tensors exist where they have entries.
tprt_status checkArrays(const tprt_host_tensor *inputs, int32_t num_inputs,
                        const tprt_host_tensor *outputs, int32_t num_outputs) {
  if (num_inputs > 0 && !inputs)
    return error(TPRT_INVALID_ARGUMENT, "inputs is null but num_inputs is ",
                 num_inputs);
  if (num_outputs > 0 && !outputs)
    return error(TPRT_INVALID_ARGUMENT, "outputs is null but num_outputs is ",
                 num_outputs);
  return nullptr;
}

/// Checks the inputs and outputs against `f` and makes every rank's buffers
/// (`state`'s buffers, pointers and sizes): inputs scattered by their
/// shardings (where `borrow` and a shard is one contiguous run of the
/// caller's tensor, the rank reads it there: the program never writes its
/// inputs; with `borrow` the other shards are cut by each rank on its own
/// thread, `state.rankScatters`), results zeroed.
tprt_status makeShards(const tprt_session *session, const Function &f,
                       const tprt_host_tensor *inputs, int32_t num_inputs,
                       const tprt_host_tensor *outputs, int32_t num_outputs,
                       bool borrow, RunState &state) {
  if (tprt_status status =
          checkArrays(inputs, num_inputs, outputs, num_outputs))
    return status;
  for (int32_t i = 0; i < num_inputs; ++i)
    if (tprt_status status = checkTensor("input", i, f.args[i], inputs[i]))
      return status;
  for (int32_t i = 0; i < num_outputs; ++i)
    if (tprt_status status = checkTensor("output", i, f.results[i], outputs[i]))
      return status;
  int64_t numRanks = tprt_mesh_num_devices(&f.mesh);
  auto &buffers = state.buffers;
  // The ranks cut their own shards in parallel, unless pending sums are to
  // be split into random terms below (that needs every member's shard).
  bool splitsTerms = false;
  for (int32_t i = 0; i < num_inputs; ++i)
    splitsTerms |= session->partialSeed && f.args[i].sharding.partial.count;
  if (borrow && !splitsTerms) {
    state.rankScatters.assign(static_cast<size_t>(numRanks), {});
    state.function = &f;
    state.inputs = inputs;
  }
  for (int64_t rank = 0; rank < numRanks; ++rank) {
    for (int32_t i = 0; i < num_inputs; ++i) {
      const tprt_tensor_info &info = f.args[i];
      int64_t local[TPRT_MAX_TENSOR_RANK], offset = 0;
      tprt_shard_shape(&f.mesh, &info.sharding, info.shape, local);
      size_t bytes = bytesOf(info, local);
      state.sizes[rank].push_back(bytes);
      // A donated argument is written: each rank has its own copy.
      if (borrow && info.sharding.partial.count == 0 && !f.donated(i) &&
          tprt_shard_contiguous(&f.mesh, &info.sharding, info.shape, rank,
                                &offset)) {
        buffers[rank].emplace_back();
        state.pointers[rank].push_back(
            static_cast<char *>(inputs[i].data) +
            offset * static_cast<int64_t>(tprt_dtype_size(info.dtype)));
        continue;
      }
      buffers[rank].emplace_back(bytes);
      state.pointers[rank].push_back(buffers[rank].back().data());
      if (!state.rankScatters.empty()) {
        state.rankScatters[rank].push_back(i);
        continue;
      }
      if (tprt_status status = tprt_scatter_shard(
              &f.mesh, &info.sharding, info.shape, info.dtype, inputs[i].data,
              rank, buffers[rank].back().data()))
        return status;
    }
    for (int32_t i = 0; i < num_outputs; ++i) {
      const tprt_tensor_info &info = f.results[i];
      int64_t local[TPRT_MAX_TENSOR_RANK];
      tprt_shard_shape(&f.mesh, &info.sharding, info.shape, local);
      size_t bytes = bytesOf(info, local);
      state.sizes[rank].push_back(bytes);
      int32_t donor = f.donor(i);
      if (donor >= 0 && !state.world->device()) {
        // Written in the donated argument's copy, which gatherResults takes.
        buffers[rank].emplace_back();
        state.pointers[rank].push_back(state.pointers[rank][donor]);
        continue;
      }
      buffers[rank].emplace_back(bytes, 0);
      state.pointers[rank].push_back(buffers[rank].back().data());
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
  return nullptr;
}

/// The root cause of a failed run: the first rank's own failure over the
/// aborts it caused in the others (`first`, if any, is a candidate too).
/// Taken out of `statuses`; the others stay there.
tprt_status takeRootCause(std::vector<tprt_status> &statuses,
                          tprt_status first) {
  tprt_status failure = first;
  for (tprt_status &status : statuses)
    if (status && (!failure || (tprt_status_code(failure) == TPRT_ABORTED &&
                                tprt_status_code(status) != TPRT_ABORTED)))
      std::swap(failure, status);
  return failure;
}

/// A result written in a donated argument's copy (on the host) takes that
/// copy as its buffer once the run is over.
void takeDonatedBuffers(const Function &f,
                        std::vector<std::vector<Bytes>> &buffers,
                        int32_t num_inputs) {
  for (int32_t i = 0; i < f.numResults; ++i) {
    int32_t donor = f.donor(i);
    if (donor < 0)
      continue;
    for (std::vector<Bytes> &rank : buffers)
      if (static_cast<int32_t>(rank.size()) > num_inputs + i &&
          rank[num_inputs + i].empty() && !rank[donor].empty())
        rank[num_inputs + i] = std::move(rank[donor]);
  }
}

/// After a successful run: the replicas of every result compared (unless
/// the session skips it), then every result gathered from the ranks' shards,
/// and each rank's own copies kept for tprt_session_local_result.
tprt_status gatherResults(tprt_session *session, const Function &f,
                          std::vector<std::vector<Bytes>> &buffers,
                          int32_t num_inputs, tprt_host_tensor *outputs,
                          int32_t num_outputs) {
  int64_t numRanks = static_cast<int64_t>(buffers.size());
  takeDonatedBuffers(f, buffers, num_inputs);
  for (int32_t i = 0; i < num_outputs && !session->skipReplicaCheck; ++i) {
    std::vector<const void *> shards;
    for (int64_t rank = 0; rank < numRanks; ++rank)
      shards.push_back(buffers[rank][num_inputs + i].data());
    const tprt_tensor_info &info = f.results[i];
    std::string what =
        "result #" + std::to_string(i) +
        (f.resultNames[i].empty() ? std::string()
                                  : " ('" + f.resultNames[i] + "')") +
        " of '" + f.name + "'";
    if (tprt_status status = tprt_check_replicas(
            &f.mesh, &info.sharding, info.dtype, shards.data(),
            buffers[0][num_inputs + i].size(), what.c_str())) {
      tprt_status named =
          error(TPRT_MISMATCH, tprt_status_message(status),
                " (tprt_session_options.skip_replica_check gathers the first "
                "replica without comparing)");
      tprt_status_free(status);
      return named;
    }
  }
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
  session->localResults.assign(static_cast<size_t>(numRanks), {});
  for (int64_t rank = 0; rank < numRanks; ++rank)
    for (int32_t i = 0; i < num_outputs; ++i)
      session->localResults[rank].push_back(
          std::move(buffers[rank][num_inputs + i]));
  return nullptr;
}

tprt_status runDistributed(tprt_session *session, const tprt_program *program,
                           int32_t function, const tprt_host_tensor *inputs,
                           int32_t num_inputs, tprt_host_tensor *outputs,
                           int32_t num_outputs,
                           const std::shared_ptr<RunState> &state);

/// Steps 1 and 2 of a run: the function, its mesh and counts (with
/// `shards`, `num_inputs` and `num_outputs` count every local rank's shards),
/// a fresh world for `state`, OpenBLAS's threads, the target.
tprt_status prepareRun(tprt_session *session, const tprt_program *program,
                       int32_t function, int32_t num_inputs,
                       int32_t num_outputs, bool shards,
                       std::shared_ptr<RunState> &state) {
  if (!session || !program)
    return error(TPRT_INVALID_ARGUMENT, "session or program is null");
  if (function < 0 || function >= tprt_program_num_functions(program))
    return error(TPRT_INVALID_ARGUMENT, "no function #", function);
  const Function &f = program->functions[function];
  // 1. Target, mesh, counts.
  if (!sameMesh(f.mesh, session->mesh))
    return error(TPRT_INVALID_ARGUMENT, "function '", f.name,
                 "' runs on a mesh of shape ",
                 formatShape(f.mesh.sizes, f.mesh.rank),
                 "; the session's mesh is ",
                 formatShape(session->mesh.sizes, session->mesh.rank));
  if (!shards && num_inputs != f.numArgs)
    return error(TPRT_INVALID_ARGUMENT, "function '", f.name, "' takes ",
                 f.numArgs, " inputs, got ", num_inputs);
  if (!shards && num_outputs != f.numResults)
    return error(TPRT_INVALID_ARGUMENT, "function '", f.name, "' returns ",
                 f.numResults, " results, got room for ", num_outputs);
  int64_t local = static_cast<int64_t>(session->localRanks.size());
  if (shards && num_inputs != local * f.numArgs)
    return error(TPRT_INVALID_ARGUMENT, "function '", f.name, "' takes ",
                 f.numArgs, " inputs: ", local * f.numArgs, " shards for ",
                 local, " local rank(s), got ", num_inputs);
  if (shards && num_outputs != local * f.numResults)
    return error(TPRT_INVALID_ARGUMENT, "function '", f.name, "' returns ",
                 f.numResults, " results: room for ", local * f.numResults,
                 " shards for ", local, " local rank(s), got ", num_outputs);

  // 2. The session's world, unless a run already broke it; its ranks share
  // the machine's cores: the CPU GEMM library gets its share per rank instead
  // of every core per rank (unless its own variable says otherwise).
  if (tprt_status status = session->checkUsable())
    return status;
  int64_t numRanks = tprt_mesh_num_devices(&f.mesh);
  state = std::make_shared<RunState>(numRanks);
  state->numInputs = static_cast<size_t>(f.numArgs);
  state->deviceTiming = session->deviceTiming;
  state->keep = session->world;
  state->world = session->world->world;
  state->entry = f.entry;
  state->function = &f;
  if (f.arenaBytes > 0) {
    auto &slots = session->world->arenas[{program->checksum, function}];
    slots.resize(static_cast<size_t>(numRanks), nullptr);
    state->arenas = &slots;
  }
  if (f.constantsBytes > 0) {
    auto &slots = session->world->arenas[{program->checksum, -1 - function}];
    slots.resize(static_cast<size_t>(numRanks), nullptr);
    state->constants = &slots;
  }
  state->program = program->checksum;
  state->precision = program->precision;
  state->functionIndex = function;
  int64_t here = tprt_world_num_local_ranks(state->world);
  int blas = session->world->blasThreads;
  setCpuGemmThreads(blas);
  DeviceRanks *device = state->world->device();
  const Backend *backend = findBackend(session->backend.c_str());
  const char *worldTarget = backend ? backend->target : "cpu";
  if (std::strcmp(worldTarget, targetName(program->target)) != 0)
    return error(TPRT_INVALID_ARGUMENT, "function '", f.name,
                 "' was compiled for ", targetName(program->target),
                 " (tp-compile --target ", targetName(program->target),
                 "); the session's '", session->backend,
                 "' backend runs programs compiled for ", worldTarget);
  if (!state->world->processes() && here != numRanks)
    return error(TPRT_INVALID_ARGUMENT, "backend '", session->backend,
                 "' drives ", here, " of ", numRanks,
                 " ranks in this process and offers no exchange between "
                 "processes");
  return nullptr;
}

/// The run's figures (every rank's statistics, seconds and profile, and
/// with `device` the GPU ranks' device profiles) become the session's.
void keepFigures(tprt_session *session, const RunState &state, bool device) {
  session->stats = state.stats;
  session->seconds = state.seconds;
  session->profiles = state.profiles;
  if (device)
    session->deviceProfiles = state.deviceProfiles;
  else
    session->deviceProfiles.clear();
}

/// What each rank's thread runs: its rank of the run, then it says so.
void rankWork(void *arg, int64_t rank) {
  RunState &s = *static_cast<RunState *>(arg);
  s.statuses[rank] = runRank(s, s.entry, rank);
  std::lock_guard<std::mutex> lock(s.mutex);
  s.done[rank] = true;
  ++s.finished;
  s.cv.notify_all();
}

/// A run that failed inside the ranks (`failure`, which stays the caller's)
/// leaves the world's communicators aborted: the session keeps the cause
/// and refuses later runs.
void markFailed(tprt_session *session, tprt_status failure) {
  // A rank's own failure is a better cause than the abort it caused.
  if (!failure || (session->failureCode != TPRT_OK &&
                   (session->failureCode != TPRT_ABORTED ||
                    tprt_status_code(failure) == TPRT_ABORTED)))
    return;
  session->failureCode = tprt_status_code(failure);
  session->failure = tprt_status_message(failure);
}

/// Steps 3 and 4 with every rank in this process, its buffers made: each
/// rank's thread woken to run it, then the wait, the session's figures, and
/// the root cause of a failure (null when every rank succeeded).
tprt_status runRankThreads(tprt_session *session, const tprt_program *program,
                           const Function &f,
                           const std::shared_ptr<RunState> &state) {
  int64_t numRanks = tprt_mesh_num_devices(&f.mesh);
  RankThreads &threads = *session->world->threads;
  // Everything a rank needs is allocated here: nothing in a rank's thread
  // can throw.
  threads.dispatch(rankWork, state);
  // A short run ends within microseconds: watched for a while, it needs no
  // system call to wake this thread.
  spinUntil([&] {
    return state->finished.load(std::memory_order_acquire) == numRanks;
  });

  // A rank still computing `timeoutMs` after another finished is stuck (it
  // is in no collective, or that would have ended it).
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
  for (int64_t rank : stuck) {
    threads.abandon(rank);
    ++session->abandoned;
    ++const_cast<tprt_program *>(program)->abandonedRanks;
  }
  threads.release();
  if (!stuck.empty()) {
    std::ostringstream os;
    os << (stuck.size() == 1 ? "rank " : "ranks ");
    for (size_t i = 0; i < stuck.size(); ++i)
      os << (i ? ", " : "") << stuck[i];
    os << " of '" << f.name << "' did not return within " << timeoutMs
       << " ms after the other ranks stopped: stuck in computation (in no "
          "collective); abandoned, still running";
    tprt_status timedOut = error(TPRT_TIMEOUT, os.str());
    markFailed(session, timedOut);
    return timedOut;
  }
  keepFigures(session, *state, state->deviceTiming && state->world->device());
  tprt_status failure = takeRootCause(state->statuses, nullptr);
  markFailed(session, failure);
  return failure;
}

tprt_status runSession(tprt_session *session, const tprt_program *program,
                       int32_t function, const tprt_host_tensor *inputs,
                       int32_t num_inputs, tprt_host_tensor *outputs,
                       int32_t num_outputs) {
  std::shared_ptr<RunState> state;
  if (tprt_status status = prepareRun(session, program, function, num_inputs,
                                      num_outputs, /*shards=*/false, state))
    return status;
  const Function &f = program->functions[function];
  if (state->world->processes())
    return runDistributed(session, program, function, inputs, num_inputs,
                          outputs, num_outputs, state);
  // 3. Each rank's buffers.
  if (tprt_status status = makeShards(session, f, inputs, num_inputs, outputs,
                                      num_outputs, /*borrow=*/true, *state))
    return status;
  // 4-5. Every rank on its thread; the root cause of a failure, or the
  // results.
  if (tprt_status failure = runRankThreads(session, program, f, state))
    return failure;
  return gatherResults(session, f, state->buffers, num_inputs, outputs,
                       num_outputs);
}

/// The same program and function in every process of a world spread over
/// processes, checked before any collective.
tprt_status checkSameProgram(Processes &procs, const tprt_program *program,
                             int32_t function) {
  struct Identity {
    uint64_t checksum;
    int64_t function;
  };
  Identity mine{tprt_program_checksum(program), function};
  std::vector<Identity> all(static_cast<size_t>(procs.size()));
  if (tprt_status s = procs.allGather(&mine, sizeof(Identity), all.data()))
    return s;
  for (int64_t r = 1; r < procs.size(); ++r)
    if (all[r].checksum != all[0].checksum ||
        all[r].function != all[0].function) {
      std::ostringstream os;
      os << std::hex << "the processes run different programs: rank "
         << std::dec << r << " loaded checksum " << std::hex << all[r].checksum
         << std::dec << " function #" << all[r].function << ", rank 0 "
         << std::hex << "checksum " << all[0].checksum << std::dec
         << " function #" << all[0].function
         << " (every process must load the same library)";
      return error(TPRT_MISMATCH, os.str());
    }
  return nullptr;
}

/// What rank 0 tells each process before a distributed run, and what each
/// process tells rank 0 after it: a status, then (when OK) the data.
struct Header {
  int32_t code = TPRT_OK;
  char message[1000] = {};
  void set(tprt_status status) {
    code = tprt_status_code(status);
    if (status)
      std::strncpy(message, tprt_status_message(status), sizeof(message) - 1);
  }
  /// The status it carries, its message after `prefix`; null when OK.
  tprt_status get(const std::string &prefix = std::string()) {
    if (code == TPRT_OK)
      return nullptr;
    message[sizeof(message) - 1] = 0;
    return error(static_cast<tprt_code>(code), prefix, message);
  }
};
struct ResultHeader {
  Header status;
  tprt_rank_profile profile = {};
  tprt_comm_stats stats = {};
  double seconds = 0;
};

/// One rank a process (an MPI world): the processes check they run the same
/// program, rank 0 checks the inputs and sends every process its shards,
/// each runs its rank, and rank 0 receives every rank's results, statistics
/// and status, and gathers. Only rank 0 returns the results (and the
/// session's statistics, profiles and local results of every rank).
tprt_status runDistributed(tprt_session *session, const tprt_program *program,
                           int32_t function, const tprt_host_tensor *inputs,
                           int32_t num_inputs, tprt_host_tensor *outputs,
                           int32_t num_outputs,
                           const std::shared_ptr<RunState> &state) {
  const Function &f = program->functions[function];
  Processes &procs = *state->world->processes();
  int64_t me = procs.rank(), numRanks = procs.size();
  // 1. The same program and function everywhere, before any collective.
  if (tprt_status s = checkSameProgram(procs, program, function))
    return s;

  // 2. Inputs: rank 0 makes every rank's shards and sends them.
  auto &buffers = state->buffers;
  if (me == 0) {
    tprt_status bad = makeShards(session, f, inputs, num_inputs, outputs,
                                 num_outputs, /*borrow=*/false, *state);
    Header header;
    header.set(bad);
    for (int64_t r = 1; r < numRanks; ++r) {
      if (tprt_status s = procs.send(r, &header, sizeof(header))) {
        tprt_status_free(bad);
        return s;
      }
      if (bad)
        continue;
      for (int32_t i = 0; i < num_inputs; ++i)
        if (tprt_status s =
                procs.send(r, buffers[r][i].data(), buffers[r][i].size()))
          return s;
      // Only rank 0 keeps its own buffers.
      buffers[r].clear();
      buffers[r].shrink_to_fit();
      state->pointers[r].clear();
      state->sizes[r].clear();
    }
    if (bad)
      return bad;
  } else {
    Header header;
    if (tprt_status s = procs.receive(0, &header, sizeof(header)))
      return s;
    if (tprt_status refused = header.get("rank 0 refused the run: "))
      return refused;
    for (int32_t i = 0; i < num_inputs; ++i) {
      const tprt_tensor_info &info = f.args[i];
      int64_t local[TPRT_MAX_TENSOR_RANK];
      tprt_shard_shape(&f.mesh, &info.sharding, info.shape, local);
      buffers[me].emplace_back(bytesOf(info, local));
      if (tprt_status s = procs.receive(0, buffers[me].back().data(),
                                        buffers[me].back().size()))
        return s;
    }
    for (int32_t i = 0; i < num_outputs; ++i) {
      const tprt_tensor_info &info = f.results[i];
      int64_t local[TPRT_MAX_TENSOR_RANK];
      tprt_shard_shape(&f.mesh, &info.sharding, info.shape, local);
      // A result written in a donated argument's buffer (on the host) has
      // none of its own until the run is over.
      if (f.donor(i) >= 0 && !state->world->device())
        buffers[me].emplace_back();
      else
        buffers[me].emplace_back(bytesOf(info, local), 0);
    }
    for (size_t i = 0; i < buffers[me].size(); ++i) {
      int32_t donor = i < static_cast<size_t>(num_inputs)
                          ? -1
                          : f.donor(static_cast<int32_t>(i - num_inputs));
      const Bytes &buffer = donor >= 0 && buffers[me][i].empty()
                                ? buffers[me][donor]
                                : buffers[me][i];
      state->pointers[me].push_back(const_cast<char *>(buffer.data()));
      state->sizes[me].push_back(buffer.size());
    }
  }

  // 3. This process's rank, on this thread.
  tprt_status status = runRank(*state, f.entry, me);
  markFailed(session, status);

  // 4. Every rank's status, figures and results to rank 0.
  if (me != 0) {
    ResultHeader result;
    result.status.set(status);
    result.profile = state->profiles[me];
    result.stats = state->stats[me];
    result.seconds = state->seconds[me];
    if (tprt_status s = procs.send(0, &result, sizeof(result))) {
      tprt_status_free(status);
      return s;
    }
    if (!status)
      takeDonatedBuffers(f, buffers, num_inputs);
    if (!status)
      for (int32_t i = 0; i < num_outputs; ++i) {
        const Bytes &out = buffers[me][num_inputs + i];
        if (tprt_status s = procs.send(0, out.data(), out.size()))
          return s;
      }
    return status;
  }
  std::vector<tprt_status> statuses(static_cast<size_t>(numRanks), nullptr);
  statuses[0] = status;
  tprt_status lost = nullptr;
  for (int64_t r = 1; r < numRanks && !lost; ++r) {
    ResultHeader result;
    if ((lost = procs.receive(r, &result, sizeof(result))))
      break;
    state->profiles[r] = result.profile;
    state->stats[r] = result.stats;
    state->seconds[r] = result.seconds;
    if ((statuses[r] = result.status.get()))
      continue;
    buffers[r].assign(static_cast<size_t>(num_inputs), {});
    for (int32_t i = 0; i < num_outputs; ++i) {
      const tprt_tensor_info &info = f.results[i];
      int64_t local[TPRT_MAX_TENSOR_RANK];
      tprt_shard_shape(&f.mesh, &info.sharding, info.shape, local);
      buffers[r].emplace_back(bytesOf(info, local));
      if ((lost = procs.receive(r, buffers[r].back().data(),
                                buffers[r].back().size())))
        break;
    }
  }
  keepFigures(session, *state, /*device=*/false);
  tprt_status failure = takeRootCause(statuses, lost);
  markFailed(session, failure);
  for (tprt_status st : statuses)
    tprt_status_free(st);
  if (failure)
    return failure;
  return gatherResults(session, f, buffers, num_inputs, outputs, num_outputs);
}

/// Checks the caller's shards (tprt_session_run_shards) against `f`: each
/// local rank's shard of every input and result has the tensor's dtype and
/// its shard shape, and data. Then they are the ranks' buffers in `state`.
tprt_status takeShards(const tprt_session *session, const Function &f,
                       const tprt_host_tensor *inputs,
                       const tprt_host_tensor *outputs, RunState &state) {
  auto take = [&](const char *what, int64_t rank, int32_t index,
                  const tprt_tensor_info &info,
                  const tprt_host_tensor &given) -> tprt_status {
    tprt_tensor_info shard = info;
    tprt_shard_shape(&f.mesh, &info.sharding, info.shape, shard.shape);
    std::string named = "rank " + std::to_string(rank) + "'s shard of " + what;
    if (tprt_status status = checkTensor(named.c_str(), index, shard, given))
      return status;
    state.pointers[rank].push_back(given.data);
    state.sizes[rank].push_back(bytesOf(shard, shard.shape));
    return nullptr;
  };
  size_t local = session->localRanks.size();
  if (tprt_status status =
          checkArrays(inputs, static_cast<int32_t>(local * f.numArgs), outputs,
                      static_cast<int32_t>(local * f.numResults)))
    return status;
  for (size_t k = 0; k < local; ++k) {
    int64_t rank = session->localRanks[k];
    for (int32_t i = 0; i < f.numArgs; ++i)
      if (tprt_status status =
              take("input", rank, i, f.args[i], inputs[k * f.numArgs + i]))
        return status;
    for (int32_t i = 0; i < f.numResults; ++i)
      if (tprt_status status = take("result", rank, i, f.results[i],
                                    outputs[k * f.numResults + i]))
        return status;
    // A donated input is written: the rank runs on a copy of the caller's
    // shard (kept in `buffers`), and on the host the result is copied into
    // the caller's result shard after the run (copyDonatedShards).
    state.buffers[rank].resize(static_cast<size_t>(f.numArgs));
    for (int32_t i = 0; i < f.numArgs; ++i) {
      if (!f.donated(i))
        continue;
      const char *given = static_cast<const char *>(state.pointers[rank][i]);
      state.buffers[rank][i].assign(given, given + state.sizes[rank][i]);
      state.pointers[rank][i] = state.buffers[rank][i].data();
    }
  }
  return nullptr;
}

/// After a successful run on the caller's shards: each result written in a
/// donated input's copy (on the host) goes into the caller's result shard.
void copyDonatedShards(const tprt_session *session, const Function &f,
                       RunState &state) {
  if (f.donatedFrom.empty() || state.world->device())
    return;
  for (int64_t rank : session->localRanks)
    for (int32_t i = 0; i < f.numResults; ++i)
      if (int32_t donor = f.donor(i); donor >= 0)
        copyBytes(state.pointers[rank][f.numArgs + i],
                  state.buffers[rank][donor].data(),
                  state.sizes[rank][f.numArgs + i]);
}

tprt_status runOnProcesses(tprt_session *session, const tprt_program *program,
                           int32_t function,
                           const std::shared_ptr<RunState> &state,
                           tprt_status bad);

tprt_status runShards(tprt_session *session, const tprt_program *program,
                      int32_t function, const tprt_host_tensor *inputs,
                      int32_t num_inputs, tprt_host_tensor *outputs,
                      int32_t num_outputs) {
  std::shared_ptr<RunState> state;
  if (tprt_status status = prepareRun(session, program, function, num_inputs,
                                      num_outputs, /*shards=*/true, state))
    return status;
  const Function &f = program->functions[function];
  state->zeroResults = true;
  // The results are in the caller's shards; none are kept.
  session->localResults.clear();
  tprt_status bad = takeShards(session, f, inputs, outputs, *state);
  tprt_status failure = nullptr;
  if (!state->world->processes()) {
    if (bad)
      return bad;
    failure = runRankThreads(session, program, f, state);
  } else {
    failure = runOnProcesses(session, program, function, state, bad);
  }
  if (!failure)
    copyDonatedShards(session, f, *state);
  return failure;
}

/// One rank a process, each process's buffers in `state` (or its refusal in
/// `bad`, consumed): all refuse together when one did, then each runs its
/// rank, and every process gets every rank's status and figures.
tprt_status runOnProcesses(tprt_session *session, const tprt_program *program,
                           int32_t function,
                           const std::shared_ptr<RunState> &state,
                           tprt_status bad) {
  const Function &f = program->functions[function];
  Processes &procs = *state->world->processes();
  int64_t me = procs.rank(), numRanks = procs.size();
  if (tprt_status s = checkSameProgram(procs, program, function)) {
    tprt_status_free(bad);
    return s;
  }
  std::vector<Header> checks(static_cast<size_t>(numRanks));
  Header mine;
  mine.set(bad);
  tprt_status_free(bad);
  if (tprt_status s = procs.allGather(&mine, sizeof(Header), checks.data()))
    return s;
  for (int64_t r = 0; r < numRanks; ++r)
    if (tprt_status refused =
            checks[r].get("rank " + std::to_string(r) + " refused the run: "))
      return refused;
  tprt_status status = runRank(*state, f.entry, me);
  markFailed(session, status);
  ResultHeader result;
  result.status.set(status);
  tprt_status_free(status);
  result.profile = state->profiles[me];
  result.stats = state->stats[me];
  result.seconds = state->seconds[me];
  std::vector<ResultHeader> all(static_cast<size_t>(numRanks));
  if (tprt_status s = procs.allGather(&result, sizeof(result), all.data()))
    return s;
  std::vector<tprt_status> statuses(static_cast<size_t>(numRanks), nullptr);
  for (int64_t r = 0; r < numRanks; ++r) {
    state->profiles[r] = all[r].profile;
    state->stats[r] = all[r].stats;
    state->seconds[r] = all[r].seconds;
    statuses[r] = all[r].status.get();
  }
  keepFigures(session, *state, /*device=*/false);
  tprt_status failure = takeRootCause(statuses, nullptr);
  markFailed(session, failure);
  for (tprt_status st : statuses)
    tprt_status_free(st);
  return failure;
}

/// tprt_session_run_arrays: the inputs are arrays of this session, read
/// where they are; the results stay in each rank's memory and become new
/// arrays.
tprt_status runArrays(tprt_session *session, const tprt_program *program,
                      int32_t function, tprt_array *const *inputs,
                      int32_t num_inputs, tprt_array **outputs,
                      int32_t num_outputs) {
  if (num_inputs > 0 && !inputs)
    return error(TPRT_INVALID_ARGUMENT, "inputs is null but num_inputs is ",
                 num_inputs);
  if (num_outputs > 0 && !outputs)
    return error(TPRT_INVALID_ARGUMENT, "outputs is null but num_outputs is ",
                 num_outputs);
  std::shared_ptr<RunState> state;
  if (tprt_status status = prepareRun(session, program, function, num_inputs,
                                      num_outputs, /*shards=*/false, state))
    return status;
  const Function &f = program->functions[function];
  for (int32_t i = 0; i < num_inputs; ++i) {
    std::string what =
        "input #" + std::to_string(i) +
        (f.argNames[i].empty() ? "" : " ('" + f.argNames[i] + "')");
    if (tprt_status status = checkArray(session, inputs[i], what))
      return status;
    std::string differs = describeMismatch(inputs[i]->info, f.args[i]);
    if (!differs.empty())
      return error(TPRT_INVALID_ARGUMENT, what, ": array #", inputs[i]->id, " ",
                   differs);
  }
  // A donated array is written: no other input may be it.
  for (int32_t i = 0; i < num_inputs; ++i)
    for (int32_t j = 0; j < num_inputs && f.donated(i); ++j)
      if (j != i && inputs[j] == inputs[i])
        return error(TPRT_INVALID_ARGUMENT, "input #", i, ": array #",
                     inputs[i]->id, " is donated, and is input #", j,
                     " too; a donated array may be passed once");
  DeviceRanks *device = state->world->device();
  bool graphs = device && !session->noGraphs && !device->graphRefusal();
  if (graphs && !f.hostReads.empty()) {
    // A replay would keep the value its capture read.
    graphs = false;
    if (session->saidHostReads.insert(f.name).second) {
      int32_t arg = static_cast<int32_t>(
          std::find(f.hostReads.begin(), f.hostReads.end(), 1) -
          f.hostReads.begin());
      std::fprintf(stderr,
                   "tprt: CUDA graphs off for '%s': its host code reads "
                   "argument #%d%s at every run; its runs launch each op\n",
                   f.name.c_str(), arg,
                   f.argNames[arg].empty()
                       ? ""
                       : (" ('" + f.argNames[arg] + "')").c_str());
    }
  }
  if (device && !session->noGraphs && device->graphRefusal() &&
      !session->saidNoGraphs) {
    session->saidNoGraphs = true;
    std::fprintf(stderr,
                 "tprt: CUDA graphs off on the '%s' backend: %s; runs launch "
                 "each op\n",
                 session->backend.c_str(), device->graphRefusal());
  }
  state->resident.assign(state->pointers.size(), {});
  state->kept.assign(state->pointers.size(), {});
  state->resultsStay = device != nullptr;
  // A CPU rank's results are buffers of the run's state (a rank abandoned
  // still running keeps them), handed to the arrays after it.
  for (size_t k = 0; k < session->localRanks.size(); ++k) {
    int64_t rank = session->localRanks[k];
    for (int32_t i = 0; i < num_inputs; ++i) {
      state->buffers[rank].emplace_back();
      state->pointers[rank].push_back(inputs[i]->shards[k]);
      state->sizes[rank].push_back(inputs[i]->shardBytes);
      state->resident[rank].push_back(1);
    }
    for (int32_t i = 0; i < num_outputs; ++i) {
      const tprt_tensor_info &info = f.results[i];
      int64_t local[TPRT_MAX_TENSOR_RANK];
      tprt_shard_shape(&f.mesh, &info.sharding, info.shape, local);
      size_t bytes = bytesOf(info, local);
      state->sizes[rank].push_back(bytes);
      int32_t donor = f.donor(i);
      if (donor >= 0) {
        // Written in the donated array's memory, which becomes its own.
        state->buffers[rank].emplace_back();
        state->pointers[rank].push_back(inputs[donor]->shards[k]);
        state->resident[rank].push_back(1);
      } else if (device) {
        // Zeroed on the device by the rank: in the buffer of the function's
        // last result #i once its array was freed (its graph's), else in one
        // it allocates.
        state->pointers[rank].push_back(
            graphs ? device->idleOutput(rank, {program->checksum, function},
                                        static_cast<size_t>(i), bytes)
                   : nullptr);
        state->resident[rank].push_back(0);
      } else {
        // The rank's memory is this process's: the result's own buffer,
        // zeroed, which becomes the array's.
        state->buffers[rank].emplace_back(bytes, 0);
        state->pointers[rank].push_back(state->buffers[rank].back().data());
        state->resident[rank].push_back(1);
      }
    }
  }
  if (device) {
    // How the ranks run it (CUDA graphs): the same for all, from each
    // rank's entry buffers (arguments, results not donated, arena).
    std::vector<std::vector<void *>> entryBuffers;
    for (int64_t rank : session->localRanks) {
      std::vector<void *> &b = entryBuffers.emplace_back();
      for (size_t i = 0; i < state->pointers[rank].size(); ++i)
        if (i < state->numInputs ||
            f.donor(static_cast<int32_t>(i - state->numInputs)) < 0)
          b.push_back(state->pointers[rank][i]);
      if (state->constants)
        b.push_back((*state->constants)[static_cast<size_t>(rank)]);
      if (state->arenas)
        b.push_back((*state->arenas)[static_cast<size_t>(rank)]);
    }
    state->graphed = true;
    state->graphMode = device->graphMode({program->checksum, function}, graphs,
                                         session->localRanks, entryBuffers);
  }
  // tprt_session_local_result keeps the last tprt_session_run's: a run on
  // arrays has its results' shards in the arrays (tprt_array_fetch_shard).
  tprt_status failure =
      state->world->processes()
          ? runOnProcesses(session, program, function, state, nullptr)
          : runRankThreads(session, program, f, state);
  if (failure) {
    // A rank that succeeded while another failed kept its results.
    if (device && !session->abandoned)
      for (size_t k = 0; k < session->localRanks.size(); ++k) {
        int64_t rank = session->localRanks[k];
        for (size_t i = 0; i < state->kept[rank].size(); ++i)
          if (state->kept[rank][i] && f.donor(static_cast<int32_t>(i)) < 0)
            device->release(rank, state->kept[rank][i]);
      }
    return failure;
  }
  for (int32_t i = 0; i < num_outputs; ++i) {
    tprt_array_s *array = newArray(session, f.results[i]);
    int64_t local[TPRT_MAX_TENSOR_RANK];
    tprt_shard_shape(&f.mesh, &f.results[i].sharding, f.results[i].shape,
                     local);
    array->shardBytes = bytesOf(f.results[i], local);
    if (int32_t donor = f.donor(i); donor >= 0) {
      // The donated array's memory is the result's now.
      tprt_array_s *given = inputs[donor];
      array->shards = std::move(given->shards);
      array->host = std::move(given->host);
      given->shards.clear();
      given->host.clear();
      given->donatedTo = "result #" + std::to_string(i) + " of '" + f.name +
                         "' (array #" + std::to_string(array->id) + ")";
      outputs[i] = array;
      continue;
    }
    for (size_t k = 0; k < session->localRanks.size(); ++k) {
      if (device) {
        array->shards.push_back(state->kept[session->localRanks[k]][i]);
      } else {
        array->host.push_back(
            std::move(state->buffers[session->localRanks[k]][num_inputs + i]));
        array->shards.push_back(array->host.back().data());
      }
    }
    outputs[i] = array;
  }
  return nullptr;
}

} // namespace

namespace {

/// A run of any kind on `session`, after the others (runs of one session take
/// turns); no C++ exception crosses the C API (out of memory for the shards,
/// a thread that cannot start): it becomes TPRT_INTERNAL with its message.
template <typename Run> tprt_status takeTurn(tprt_session *session, Run run) {
  if (!session)
    return error(TPRT_INVALID_ARGUMENT, "session is null");
  try {
    std::lock_guard<std::mutex> turn(session->runMutex);
    return run();
  } catch (const std::exception &e) {
    return error(TPRT_INTERNAL, "run: ", e.what());
  }
}

} // namespace

extern "C" {

tprt_status tprt_session_run(tprt_session *session, const tprt_program *program,
                             int32_t function, const tprt_host_tensor *inputs,
                             int32_t num_inputs, tprt_host_tensor *outputs,
                             int32_t num_outputs) {
  return takeTurn(session, [&] {
    return runSession(session, program, function, inputs, num_inputs, outputs,
                      num_outputs);
  });
}

tprt_status
tprt_session_run_shards(tprt_session *session, const tprt_program *program,
                        int32_t function, const tprt_host_tensor *inputs,
                        int32_t num_inputs, tprt_host_tensor *outputs,
                        int32_t num_outputs) {
  return takeTurn(session, [&] {
    return runShards(session, program, function, inputs, num_inputs, outputs,
                     num_outputs);
  });
}

tprt_status tprt_session_run_arrays(tprt_session *session,
                                    const tprt_program *program,
                                    int32_t function, tprt_array *const *inputs,
                                    int32_t num_inputs, tprt_array **outputs,
                                    int32_t num_outputs) {
  return takeTurn(session, [&] {
    return runArrays(session, program, function, inputs, num_inputs, outputs,
                     num_outputs);
  });
}

int64_t tprt_session_num_local_ranks(const tprt_session *session) {
  return session ? static_cast<int64_t>(session->localRanks.size()) : 0;
}

int64_t tprt_session_local_rank(const tprt_session *session, int64_t index) {
  if (!session || index < 0 ||
      index >= static_cast<int64_t>(session->localRanks.size()))
    return -1;
  return session->localRanks[index];
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
