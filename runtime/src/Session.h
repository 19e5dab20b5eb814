//===- Session.h - A session and its arrays --------------------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What Session.cpp (runs) and Array.cpp (arrays placed on a session's
// devices) share: the session, the world it keeps, its arrays.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_SRC_SESSION_H
#define TPRT_SRC_SESSION_H

#include "Internal.h"
#include "RankThreads.h"

#include <map>
#include <memory>
#include <mutex>
#include <set>

namespace tprt {

/// Leaves the elements it makes uninitialized (a vector's resize zeroes
/// them): input shards are written whole by the scatter anyway.
template <typename T> struct UninitializedAllocator : std::allocator<T> {
  using std::allocator<T>::allocator;
  template <typename U> struct rebind {
    using other = UninitializedAllocator<U>;
  };
  template <typename U, typename... Args> void construct(U *p, Args &&...args) {
    if constexpr (sizeof...(Args) == 0)
      ::new (static_cast<void *>(p)) U;
    else
      ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
  }
};

/// A rank's own copy of an input or result.
using Bytes = std::vector<char, UninitializedAllocator<char>>;

/// What a session keeps from creation to destruction: its world and, where
/// every rank is in this process, the ranks' threads. Held by a shared
/// pointer that each run's rank work holds too, so a rank abandoned in an
/// endless loop keeps its world.
struct SessionWorld {
  ~SessionWorld() {
    // The threads first: they may be running in the world.
    threads.reset();
    tprt_world_destroy(world);
  }
  tprt_world *world = nullptr;
  std::unique_ptr<RankThreads> threads;
  /// The CPU GEMM threads each rank gets (0: leave the library alone), set
  /// again before a run if another session of the process changed it.
  int blasThreads = 0;
  /// Each function's arena (its intermediates, tp-plan-arena) on each rank,
  /// by (program checksum, function), and its constants' buffer
  /// (tp-upload-constants: uploaded by its first run) under (checksum,
  /// -1 - function): made by the rank's first run of it and kept, so a run
  /// allocates none of them. Entries are made before the ranks run; each
  /// rank fills its own slot.
  std::map<std::pair<uint64_t, int32_t>, std::vector<void *>> arenas;
};

/// How an array reaches its session: `session` is null once the session is
/// destroyed (its arrays' memory freed with it; the handles stay the
/// caller's).
struct SessionLink {
  tprt_session *session = nullptr;
};

/// Runs `work(rank, k)` for every local rank (the k-th) on the rank's own
/// thread, or on this one where the world spreads over processes, with the
/// rank's device current on a GPU world; returns the first failure (every
/// rank's work runs). The caller holds the session's runMutex.
tprt_status forEachLocalRank(
    tprt_session *session,
    const std::function<tprt_status(int64_t rank, size_t k)> &work);

/// Frees `array`'s memory on every local rank (its handle stays).
void releaseArray(tprt_session *session, tprt_array_s *array);

/// OK when `array` is a live handle (made and not freed) of `session`'s with
/// its memory; else TPRT_INVALID_ARGUMENT naming `what` and the reason.
tprt_status checkArray(const tprt_session *session, const tprt_array_s *array,
                       const std::string &what);
/// A new handle of `session` for a tensor of `info` (its name dropped),
/// registered and owned by the session's list until freed; no shards yet.
tprt_array_s *newArray(tprt_session *session, const tprt_tensor_info &info);
/// `info`'s dtype, shape and sharding against `expected`'s: "" when equal,
/// else what differs, for a message.
std::string describeMismatch(const tprt_tensor_info &info,
                             const tprt_tensor_info &expected);

} // namespace tprt

struct tprt_session_s {
  ~tprt_session_s();
  tprt_mesh mesh;
  int64_t timeoutMs = 0;
  std::string backend = "local";
  uint64_t partialSeed = 0;
  bool deviceTiming = false;
  /// tprt_session_options.skip_replica_check.
  bool skipReplicaCheck = false;
  /// tprt_session_options.no_graphs, and whether the session said why its
  /// world captures no graph.
  bool noGraphs = false;
  bool saidNoGraphs = false;
  /// The functions whose host code reads an argument, said once each.
  std::set<std::string> saidHostReads;
  /// Made the world; null: tprt_world_create with `backend`. Declared before
  /// `world`, which it may outlive only (an MPI communicator it holds).
  tprt::WorldMaker makeWorld;
  std::shared_ptr<tprt::SessionWorld> world;
  /// Runs and array operations of one session take turns.
  std::mutex runMutex;
  /// Set when a run failed inside the ranks (the world is aborted) or
  /// abandoned one: the cause, which every later run reports.
  tprt_code failureCode = TPRT_OK;
  std::string failure;
  /// Ranks abandoned in an endless loop: their threads take no more work.
  int64_t abandoned = 0;
  /// The arrays placed on this session or returned by its runs, not freed.
  std::shared_ptr<tprt::SessionLink> link;
  std::set<tprt_array_s *> arrays;

  tprt_status createWorld(const tprt_mesh &worldMesh, tprt_world **world) {
    tprt_world_options options = TPRT_WORLD_OPTIONS_INIT;
    options.backend = backend.c_str();
    options.timeout_ms = timeoutMs;
    return makeWorld ? makeWorld(worldMesh, options, world)
                     : tprt_world_create(&worldMesh, &options, world);
  }
  /// TPRT_ABORTED naming the failure once a run broke the world.
  tprt_status checkUsable() const;
  std::vector<tprt_comm_stats> stats;
  std::vector<double> seconds;
  std::vector<tprt_rank_profile> profiles;
  /// Of the last run, when it was timed on a GPU world.
  std::vector<tprt_device_profile> deviceProfiles;
  /// Each rank's own result buffers of the last successful run.
  std::vector<std::vector<tprt::Bytes>> localResults;
  /// The mesh's ranks this process drives, ascending (every rank of a world
  /// in one process; its own rank of one spread over processes).
  std::vector<int64_t> localRanks;
};

/// An array on a session's devices (tprt.h): each local rank's shard in the
/// rank's memory.
struct tprt_array_s {
  /// Its number, for messages ("array #7"), unique in the process.
  uint64_t id = 0;
  std::shared_ptr<tprt::SessionLink> link;
  /// dtype, global shape, sharding; `name` is "".
  tprt_tensor_info info{};
  /// The k-th local rank's shard: device memory on a GPU world, `host[k]` on
  /// the CPU; empty once freed with its session.
  std::vector<void *> shards;
  std::vector<tprt::Bytes> host;
  /// Bytes of one shard (every rank's shard has the same shape).
  size_t shardBytes = 0;
  /// Set when a run took its memory for a result (a donated argument): why
  /// the handle holds nothing now.
  std::string donatedTo;
};

#endif // TPRT_SRC_SESSION_H
