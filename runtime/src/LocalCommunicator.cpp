//===- LocalCommunicator.cpp - Ranks as threads of one process ------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Every rank of a mesh is a thread of this process; collectives exchange
// through shared memory. A group (mesh axes + the coordinates of the other
// axes) meets at a rendezvous:
//  1. each member publishes its buffers and what it is calling, and waits
//     until the whole group has arrived (a generation barrier with a
//     deadline);
//  2. each member checks that every member called the same thing (else every
//     member returns MISMATCH and the world is aborted);
//  3. each member computes its own output by reading its peers' buffers
//     (all_reduce reduces its 1/G chunk, waits, then copies the others'
//     chunks: every byte is read twice instead of G times);
//  4. a last barrier keeps every buffer alive until all members are done.
// A rank that times out, fails (tprt_communicator_abort) or sees a mismatch
// aborts the world: every call that has not passed its first barrier, and
// every later call, returns at once with an error, so nothing ever waits for
// a rank that will not come. A member past the first barrier finishes the
// collective (steps 3-4) even then: its peers are reading its buffers, and
// every member is there, so it cannot wait long.
// Ranks that wait for each other in different groups (a rank in a collective
// over one set of axes, its peer over another) can never meet: the rank whose
// wait closes such a cycle sees it and the world stops with MISMATCH instead
// of waiting out the timeout.
//
//===----------------------------------------------------------------------===//

#include "CollectiveCall.h"
#include "Internal.h"
#include "RankThreads.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

using namespace tprt;

namespace {

struct Slot {
  const void *in = nullptr;
  void *out = nullptr;
  Call call;
  int64_t rank = 0;
};

struct Rendezvous {
  explicit Rendezvous(int64_t size) : slots(static_cast<size_t>(size)) {}
  std::mutex mutex;
  std::condition_variable cv;
  int64_t arrived = 0;
  /// Bumped under `mutex` when the last member arrives; read without it by
  /// a member that spins before it sleeps.
  std::atomic<uint64_t> generation{0};
  std::vector<Slot> slots;
};

class LocalCommunicator;

struct LocalWorld final : tprt_world_s {
  const char *backend() const override { return "local"; }
  const tprt_mesh &mesh() const override { return meshShape; }
  const std::vector<int64_t> &localRanks() const override { return allRanks; }
  tprt_communicator *communicator(int64_t rank) override;

  tprt_mesh meshShape;
  std::vector<int64_t> allRanks;
  std::chrono::milliseconds timeout;
  std::vector<std::unique_ptr<LocalCommunicator>> ranks;

  std::mutex groupsMutex;
  std::map<std::pair<std::vector<int32_t>, int64_t>,
           std::unique_ptr<Rendezvous>>
      groups;

  /// Who waits where, for the detection of ranks that wait for each other in
  /// different groups: the rendezvous each rank waits in at a first barrier
  /// (null when it is not waiting there), with its call and axes. Guarded by
  /// waitingMutex, which is taken after a rendezvous' mutex, never before.
  std::mutex waitingMutex;
  std::vector<Rendezvous *> waitingIn;
  std::vector<Call> waitingCall;
  std::vector<tprt_axes> waitingAxes;

  std::atomic<bool> aborted{false};
  std::mutex abortMutex;
  tprt_code abortCode = TPRT_OK;
  std::string abortMessage;

  /// The rendezvous of `device`'s group over `axes`.
  Rendezvous &group(const tprt_axes &axes, int64_t device) {
    std::vector<int64_t> members = groupMembers(meshShape, axes, device);
    std::pair<std::vector<int32_t>, int64_t> key(
        std::vector<int32_t>(axes.axes, axes.axes + axes.count), members[0]);
    std::lock_guard<std::mutex> lock(groupsMutex);
    std::unique_ptr<Rendezvous> &rv = groups[key];
    if (!rv)
      rv = std::make_unique<Rendezvous>(static_cast<int64_t>(members.size()));
    return *rv;
  }

  /// Stops the world: every waiting and later call returns an error. The
  /// first reason wins.
  void abort(tprt_code code, const std::string &message) {
    {
      std::lock_guard<std::mutex> lock(abortMutex);
      if (aborted.load())
        return;
      abortCode = code;
      abortMessage = message;
      aborted.store(true);
    }
    std::lock_guard<std::mutex> lock(groupsMutex);
    for (auto &entry : groups) {
      Rendezvous &rv = *entry.second;
      // Taking the lock orders this wake-up after any waiter's check.
      { std::lock_guard<std::mutex> rvLock(rv.mutex); }
      rv.cv.notify_all();
    }
  }

  tprt_status abortedStatus(int64_t rank) {
    std::lock_guard<std::mutex> lock(abortMutex);
    return error(TPRT_ABORTED, "rank ", rank, " stopped: the run failed (",
                 tprt_code_name(abortCode), "): ", abortMessage);
  }

  /// Waits until every member of `rv` has arrived here. At a first barrier
  /// (`first`) the wait gives up when the world is aborted, at the deadline,
  /// or when it closes a cycle of ranks waiting for each other; later waits of
  /// a collective only end when every member is there.
  tprt_status wait(Rendezvous &rv, int64_t rank, const Call &call,
                   const tprt_axes &axes, bool first) {
    std::unique_lock<std::mutex> lock(rv.mutex);
    uint64_t generation = rv.generation;
    if (++rv.arrived == static_cast<int64_t>(rv.slots.size())) {
      rv.arrived = 0;
      ++rv.generation;
      if (first) {
        std::lock_guard<std::mutex> waiting(waitingMutex);
        for (const Slot &slot : rv.slots)
          if (waitingIn[slot.rank] == &rv)
            waitingIn[slot.rank] = nullptr;
      }
      rv.cv.notify_all();
      return nullptr;
    }
    // The group usually completes within microseconds: watched for a while
    // (spinUntil, RankThreads.h), it needs no system call to wake this
    // member. At a first barrier the world's abort ends the watch too.
    lock.unlock();
    spinUntil([&] {
      return rv.generation.load(std::memory_order_acquire) != generation ||
             (first && aborted.load());
    });
    lock.lock();
    // Completed while this member was not looking: it never waited (and
    // never entered the table of waiting members).
    if (rv.generation != generation)
      return nullptr;
    if (!first) {
      rv.cv.wait(lock, [&] { return rv.generation != generation; });
      return nullptr;
    }
    std::string cycle;
    {
      std::lock_guard<std::mutex> waiting(waitingMutex);
      waitingIn[rank] = &rv;
      waitingCall[rank] = call;
      waitingAxes[rank] = axes;
      cycle = findWaitCycle(rank);
    }
    if (!cycle.empty()) {
      forgetWaiting(rv, rank, generation);
      lock.unlock();
      abort(TPRT_MISMATCH, cycle);
      return error(TPRT_MISMATCH, cycle);
    }
    Clock::time_point deadline = Clock::now() + timeout;
    while (rv.generation == generation) {
      if (aborted.load()) {
        forgetWaiting(rv, rank, generation);
        lock.unlock();
        return abortedStatus(rank);
      }
      if (rv.cv.wait_until(lock, deadline) == std::cv_status::timeout &&
          rv.generation == generation && !aborted.load()) {
        int64_t arrived = rv.arrived;
        forgetWaiting(rv, rank, generation);
        lock.unlock();
        std::ostringstream os;
        os << "rank " << rank << " waited " << timeout.count() << " ms in "
           << call.str() << " over mesh axes " << formatAxes(axes) << "; "
           << arrived << " of " << rv.slots.size()
           << " members of its group arrived";
        abort(TPRT_TIMEOUT, os.str());
        return error(TPRT_TIMEOUT, os.str());
      }
    }
    return nullptr;
  }

private:
  /// A waiter that gives up takes back its arrival, so that a later member
  /// does not complete the barrier and read the buffers of one that left, and
  /// leaves its table entry (caller holds rv.mutex; the generation is
  /// unchanged).
  void forgetWaiting(Rendezvous &rv, int64_t rank, uint64_t generation) {
    (void)generation;
    --rv.arrived;
    std::lock_guard<std::mutex> waiting(waitingMutex);
    if (waitingIn[rank] == &rv)
      waitingIn[rank] = nullptr;
  }

  /// With waitingMutex held: a description of the cycle of waiting ranks
  /// through `start`, or "" when there is none. Rank q waits for rank m when m
  /// is in q's group but waits in another rendezvous: both can only move when
  /// the other arrives, so a cycle of such waits never ends.
  std::string findWaitCycle(int64_t start) {
    size_t n = waitingIn.size();
    std::vector<int64_t> next(n, -1);
    // Depth-first from `start`, following the first blocked member each time
    // and backtracking over the others.
    std::vector<int8_t> state(n, 0); // 0 unseen, 1 on the path, 2 done
    std::vector<int64_t> path;
    std::function<bool(int64_t)> visit = [&](int64_t q) -> bool {
      state[q] = 1;
      path.push_back(q);
      for (int64_t m : groupMembers(meshShape, waitingAxes[q], q)) {
        if (m == q || !waitingIn[m] || waitingIn[m] == waitingIn[q])
          continue;
        if (m == start)
          return true;
        if (state[m] == 0 && visit(m))
          return true;
      }
      path.pop_back();
      state[q] = 2;
      return false;
    };
    if (!visit(start))
      return "";
    std::ostringstream os;
    os << "ranks wait for each other in collectives over different groups "
          "and can never meet:";
    for (size_t i = 0; i < path.size(); ++i)
      os << (i ? ";" : "") << " rank " << path[i] << " in "
         << waitingCall[path[i]].str() << " over mesh axes "
         << formatAxes(waitingAxes[path[i]]);
    return os.str();
  }
};

class LocalCommunicator final : public tprt_communicator_s {
public:
  LocalCommunicator(LocalWorld *world, int64_t rank)
      : world(*world), myRank(rank) {}

  int64_t rank() const override { return myRank; }
  const tprt_mesh &mesh() const override { return world.meshShape; }
  const char *backend() const override { return "local"; }

  tprt_status allReduce(const void *in, void *out, int64_t count,
                        tprt_dtype dtype, tprt_reduction reduction,
                        const tprt_axes &axes) override {
    Call call;
    call.kind = TPRT_ALL_REDUCE;
    call.dtype = dtype;
    call.reduction = reduction;
    call.rank = 1;
    call.shape[0] = count;
    size_t elemSize = tprt_dtype_size(dtype);
    return collective(
        call, in, out, axes,
        [&](std::vector<Slot> &slots, int64_t position,
            Rendezvous &rv) -> tprt_status {
          int64_t size = static_cast<int64_t>(slots.size());
          auto lo = [&](int64_t j) { return count * j / size; };
          // Reduce this member's chunk from every member's input.
          std::vector<const void *> srcs;
          for (Slot &slot : slots)
            srcs.push_back(static_cast<const char *>(slot.in) +
                           lo(position) * elemSize);
          reduceInto(dtype, reduction,
                     static_cast<char *>(out) + lo(position) * elemSize,
                     srcs.data(), size, lo(position + 1) - lo(position));
          if (tprt_status status =
                  world.wait(rv, myRank, call, axes, /*first=*/false))
            return status;
          // Copy the other chunks from their owners' outputs.
          for (int64_t j = 0; j < size; ++j)
            if (j != position)
              copyBytes(static_cast<char *>(out) + lo(j) * elemSize,
                        static_cast<const char *>(slots[j].out) +
                            lo(j) * elemSize,
                        static_cast<size_t>(lo(j + 1) - lo(j)) * elemSize);
          return nullptr;
        });
  }

  tprt_status allGather(const void *in, void *out, const int64_t *inShape,
                        int32_t rank, int32_t dim, tprt_dtype dtype,
                        const tprt_axes &axes) override {
    Call call = shapedCall(TPRT_ALL_GATHER, dtype, inShape, rank);
    call.dim0 = dim;
    size_t elemSize = tprt_dtype_size(dtype);
    return collective(
        call, in, out, axes,
        [&](std::vector<Slot> &slots, int64_t, Rendezvous &) -> tprt_status {
          int64_t outShape[TPRT_MAX_TENSOR_RANK];
          int64_t zero[TPRT_MAX_TENSOR_RANK] = {};
          int64_t offset[TPRT_MAX_TENSOR_RANK] = {};
          std::copy(inShape, inShape + rank, outShape);
          outShape[dim] *= static_cast<int64_t>(slots.size());
          for (size_t j = 0; j < slots.size(); ++j) {
            offset[dim] = static_cast<int64_t>(j) * inShape[dim];
            copyBox(slots[j].in, inShape, zero, out, outShape, offset, inShape,
                    rank, elemSize);
          }
          return nullptr;
        });
  }

  tprt_status reduceScatter(const void *in, void *out, const int64_t *inShape,
                            int32_t rank, int32_t dim, tprt_dtype dtype,
                            tprt_reduction reduction,
                            const tprt_axes &axes) override {
    Call call = shapedCall(TPRT_REDUCE_SCATTER, dtype, inShape, rank);
    call.dim0 = dim;
    call.reduction = reduction;
    size_t elemSize = tprt_dtype_size(dtype);
    return collective(
        call, in, out, axes,
        [&](std::vector<Slot> &slots, int64_t position,
            Rendezvous &) -> tprt_status {
          int64_t size = static_cast<int64_t>(slots.size());
          // [outer, dimSize, inner]: this member's block of each outer row
          // is contiguous.
          int64_t outer = product(inShape, dim);
          int64_t inner = product(inShape + dim + 1, rank - dim - 1);
          int64_t block = inShape[dim] / size * inner;
          std::vector<const void *> srcs(slots.size());
          for (int64_t o = 0; o < outer; ++o) {
            for (size_t j = 0; j < slots.size(); ++j)
              srcs[j] = static_cast<const char *>(slots[j].in) +
                        (o * inShape[dim] * inner + position * block) *
                            static_cast<int64_t>(elemSize);
            reduceInto(dtype, reduction,
                       static_cast<char *>(out) +
                           o * block * static_cast<int64_t>(elemSize),
                       srcs.data(), size, block);
          }
          return nullptr;
        });
  }

  tprt_status allToAll(const void *in, void *out, const int64_t *inShape,
                       int32_t rank, int32_t splitDim, int32_t concatDim,
                       tprt_dtype dtype, const tprt_axes &axes) override {
    Call call = shapedCall(TPRT_ALL_TO_ALL, dtype, inShape, rank);
    call.dim0 = splitDim;
    call.dim1 = concatDim;
    size_t elemSize = tprt_dtype_size(dtype);
    return collective(call, in, out, axes,
                      [&](std::vector<Slot> &slots, int64_t position,
                          Rendezvous &) -> tprt_status {
                        int64_t size = static_cast<int64_t>(slots.size());
                        int64_t box[TPRT_MAX_TENSOR_RANK],
                            outShape[TPRT_MAX_TENSOR_RANK];
                        std::copy(inShape, inShape + rank, box);
                        box[splitDim] /= size;
                        std::copy(box, box + rank, outShape);
                        outShape[concatDim] *= size;
                        int64_t srcOffset[TPRT_MAX_TENSOR_RANK] = {};
                        int64_t dstOffset[TPRT_MAX_TENSOR_RANK] = {};
                        srcOffset[splitDim] = position * box[splitDim];
                        for (int64_t j = 0; j < size; ++j) {
                          dstOffset[concatDim] = j * box[concatDim];
                          copyBox(slots[j].in, inShape, srcOffset, out,
                                  outShape, dstOffset, box, rank, elemSize);
                        }
                        return nullptr;
                      });
  }

  tprt_status barrier(const tprt_axes &axes) override {
    return collective(Call(), nullptr, nullptr, axes,
                      [](std::vector<Slot> &, int64_t,
                         Rendezvous &) -> tprt_status { return nullptr; });
  }

  void abort(tprt_status status) override {
    std::ostringstream os;
    os << "rank " << myRank << " failed";
    if (status)
      os << " (" << tprt_code_name(tprt_status_code(status))
         << "): " << tprt_status_message(status);
    world.abort(status ? tprt_status_code(status) : TPRT_ABORTED, os.str());
  }

  bool aborted() const override { return world.aborted.load(); }

private:
  /// Steps 1-4 of the file comment around `compute`, which fills this
  /// member's output from the published slots.
  template <typename Compute>
  tprt_status collective(const Call &call, const void *in, void *out,
                         const tprt_axes &axes, Compute compute) {
    if (world.aborted.load())
      return world.abortedStatus(myRank);
    Rendezvous &rv = world.group(axes, myRank);
    int64_t position = tprt_group_position(&world.meshShape, &axes, myRank);
    rv.slots[position] = {in, out, call, myRank};
    if (tprt_status status = world.wait(rv, myRank, call, axes, /*first=*/true))
      return status;
    for (const Slot &slot : rv.slots) {
      if (slot.call == rv.slots[0].call)
        continue;
      std::ostringstream os;
      os << "ranks of one group over mesh axes " << formatAxes(axes)
         << " called different collectives: rank " << rv.slots[0].rank
         << " called " << rv.slots[0].call.str() << ", rank " << slot.rank
         << " called " << slot.call.str();
      world.abort(TPRT_MISMATCH, os.str());
      return error(TPRT_MISMATCH, os.str());
    }
    // Past the first barrier every member is here: finish, even if the world
    // was aborted meanwhile, so that no peer reads a buffer freed under it.
    tprt_status status = compute(rv.slots, position, rv);
    world.wait(rv, myRank, call, axes, /*first=*/false);
    return status;
  }

  LocalWorld &world;
  int64_t myRank;
};

tprt_communicator *LocalWorld::communicator(int64_t rank) {
  return ranks[static_cast<size_t>(rank)].get();
}

} // namespace

tprt_status tprt::createLocalWorld(const tprt_mesh &mesh,
                                   std::chrono::milliseconds timeout,
                                   tprt_world **world) {
  auto created = std::make_unique<LocalWorld>();
  created->meshShape = mesh;
  created->timeout = timeout;
  int64_t n = tprt_mesh_num_devices(&mesh);
  created->waitingIn.assign(static_cast<size_t>(n), nullptr);
  created->waitingCall.assign(static_cast<size_t>(n), Call());
  created->waitingAxes.assign(static_cast<size_t>(n), tprt_axes{});
  for (int64_t rank = 0; rank < n; ++rank) {
    created->allRanks.push_back(rank);
    created->ranks.push_back(
        std::make_unique<LocalCommunicator>(created.get(), rank));
  }
  *world = created.release();
  return nullptr;
}
