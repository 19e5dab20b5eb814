//===- MpiCommunicator.cpp - The `mpi` backend: one rank a process -------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Every rank a process of an MPI job (OpenMPI), over MPI_COMM_WORLD (the
// registry's `mpi`) or the caller's communicator (tprt_world_create_mpi).
// The world duplicates it and, once, splits one sub-communicator for every
// ordered list of mesh axes (color: the group's first member, key: the
// member's position, so MPI's order is tprt_group_position's); collectives
// are MPI's own nonblocking ones on those:
//
//   all_reduce      MPI_Iallreduce in place on a staging copy
//   all_gather      MPI_Iallgather, then each member's rows put in place
//   reduce_scatter  blocks packed contiguous, MPI_Ireduce_scatter_block
//   all_to_all      blocks packed, MPI_Ialltoall, unpacked along concat_dim
//   barrier         MPI_Ibarrier
//
// f16 and bf16 are reduced in f32. Before its data, every collective
// exchanges the members' calls (MPI_Iallgather of a Call): differing calls
// are TPRT_MISMATCH naming both, on every member. The rank waits by polling
// (MPI_Test), which lets it
//   - give up at the world's timeout (TPRT_TIMEOUT naming the group),
//   - stop when another rank aborted the world: an abort sends a notice
//     (code and message) to every rank on a control communicator, where each
//     keeps a receive posted.
// A collective given up on stays pending inside MPI: its staging buffers,
// which MPI may still write, are parked until the world goes (and then
// leaked, not freed under MPI); the caller's buffers are never handed to
// MPI, so returning early never leaves MPI reading or writing them. After an
// abort every call returns TPRT_ABORTED at once.
//
// Ranks waiting in different groups over different axes (not SPMD) find
// each other only through the timeout here: the `local` communicator's cycle
// detection needs shared memory.
//
//===----------------------------------------------------------------------===//

#include "CollectiveCall.h"
#include "Internal.h"

#ifdef TPRT_HAS_MPI
#include "tprt/tprt_mpi.h"
#endif

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

using namespace tprt;

#ifdef TPRT_HAS_MPI

namespace {

tprt_status mpiError(int rc, const char *call) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, text, &length);
  return error(TPRT_INTERNAL, call, " failed: ", std::string(text, length));
}

/// MPI initialized by the first world that needs it when the process has not
/// (finalized at exit), at a thread level that lets a session's rank thread
/// call it.
tprt_status ensureMpi() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return error(TPRT_UNAVAILABLE, "mpi: MPI was finalized already");
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    static std::once_flag once;
    int rc = MPI_SUCCESS;
    std::call_once(once, [&] {
      int provided = 0;
      rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
      if (rc == MPI_SUCCESS)
        std::atexit([] {
          int done = 0;
          MPI_Finalized(&done);
          if (!done)
            MPI_Finalize();
        });
    });
    if (rc != MPI_SUCCESS)
      return mpiError(rc, "MPI_Init_thread");
  }
  int provided = 0;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_SERIALIZED)
    return error(TPRT_UNAVAILABLE, "mpi: MPI was initialized at thread level ",
                 provided,
                 "; a session calls MPI from its rank's thread and needs "
                 "MPI_THREAD_SERIALIZED or more (MPI_Init_thread)");
  return nullptr;
}

/// Between two polls of a request: MPI progresses nonblocking collectives
/// only inside MPI_Test, so a wait polls again at once for its first 20 ms
/// (every round of a collective gets through without giving up the core,
/// which on a busy machine costs a scheduler time slice), then yields between
/// polls until 200 ms, then sleeps 50 us (a long wait costs no core).
void pause(Clock::time_point waitingSince) {
  Clock::duration waited = Clock::now() - waitingSince;
  if (waited < std::chrono::milliseconds(20))
    return;
  if (waited < std::chrono::milliseconds(200))
    std::this_thread::yield();
  else
    std::this_thread::sleep_for(std::chrono::microseconds(50));
}

/// What an abort tells the other ranks.
struct Notice {
  int32_t code = 0;
  char message[500] = {};
};
constexpr int kNoticeTag = 7;
/// The session's own messages (inputs, results) on the world's communicator.
constexpr int kSessionTag = 11;
constexpr size_t kChunk = size_t{1} << 30;
/// What a group's first member sends the others to set up (NCCL's ids).
constexpr int kBootstrapTag = 12;

std::optional<MPI_Datatype> mpiType(tprt_dtype dtype) {
  switch (dtype) {
  case TPRT_F32:
  case TPRT_F16: // reduced in f32
  case TPRT_BF16:
    return MPI_FLOAT;
  case TPRT_F64:
    return MPI_DOUBLE;
  case TPRT_I32:
    return MPI_INT32_T;
  case TPRT_I64:
    return MPI_INT64_T;
  default:
    return std::nullopt;
  }
}

std::optional<MPI_Op> mpiOp(tprt_reduction reduction) {
  switch (reduction) {
  case TPRT_SUM:
    return MPI_SUM;
  case TPRT_MAX:
    return MPI_MAX;
  case TPRT_MIN:
    return MPI_MIN;
  case TPRT_PROD:
    return MPI_PROD;
  default:
    return std::nullopt;
  }
}

bool isNarrow(tprt_dtype dtype) {
  return dtype == TPRT_F16 || dtype == TPRT_BF16;
}

/// `count` elements of `dtype` as MPI's element type (f16/bf16 widened).
std::vector<char> widen(const void *src, int64_t count, tprt_dtype dtype) {
  if (!isNarrow(dtype)) {
    size_t bytes = static_cast<size_t>(count) * tprt_dtype_size(dtype);
    std::vector<char> out(bytes);
    if (bytes)
      std::memcpy(out.data(), src, bytes);
    return out;
  }
  std::vector<char> out(static_cast<size_t>(count) * sizeof(float));
  const uint16_t *in = static_cast<const uint16_t *>(src);
  float *f = reinterpret_cast<float *>(out.data());
  for (int64_t i = 0; i < count; ++i)
    f[i] = dtype == TPRT_F16 ? halfToFloat(in[i]) : bf16ToFloat(in[i]);
  return out;
}

/// The inverse of widen, into `dst`.
void narrow(const std::vector<char> &src, int64_t count, tprt_dtype dtype,
            void *dst) {
  if (!isNarrow(dtype)) {
    if (!src.empty())
      std::memcpy(dst, src.data(),
                  static_cast<size_t>(count) * tprt_dtype_size(dtype));
    return;
  }
  const float *f = reinterpret_cast<const float *>(src.data());
  uint16_t *out = static_cast<uint16_t *>(dst);
  for (int64_t i = 0; i < count; ++i)
    out[i] = dtype == TPRT_F16 ? floatToHalf(f[i]) : floatToBf16(f[i]);
}

/// Copies `size` blocks of rows x width bytes between a tensor, where block
/// j is columns [j*width, (j+1)*width) of every row (pitch size*width), and
/// a packed buffer, where it is bytes [j*rows*width, (j+1)*rows*width).
void pack(const char *tensor, char *packed, Rows b, int64_t size) {
  for (int64_t j = 0; j < size; ++j)
    for (int64_t r = 0; r < b.rows; ++r)
      std::memcpy(packed + (j * b.rows + r) * b.width,
                  tensor + (r * size + j) * b.width, b.width);
}
void unpack(const char *packed, char *tensor, Rows b, int64_t size) {
  for (int64_t j = 0; j < size; ++j)
    for (int64_t r = 0; r < b.rows; ++r)
      std::memcpy(tensor + (r * size + j) * b.width,
                  packed + (j * b.rows + r) * b.width, b.width);
}

/// A collective in flight: its request and the staging buffers MPI uses.
struct Pending {
  MPI_Request request = MPI_REQUEST_NULL;
  std::vector<char> send, recv;
  std::vector<Call> calls;
};

class MpiWorld;

class MpiCommunicator final : public tprt_communicator_s {
public:
  explicit MpiCommunicator(MpiWorld &world) : world(world) {}

  int64_t rank() const override;
  const tprt_mesh &mesh() const override;
  const char *backend() const override { return "mpi"; }

  tprt_status allReduce(const void *in, void *out, int64_t count,
                        tprt_dtype dtype, tprt_reduction reduction,
                        const tprt_axes &axes) override;
  tprt_status allGather(const void *in, void *out, const int64_t *inShape,
                        int32_t rank, int32_t dim, tprt_dtype dtype,
                        const tprt_axes &axes) override;
  tprt_status reduceScatter(const void *in, void *out, const int64_t *inShape,
                            int32_t rank, int32_t dim, tprt_dtype dtype,
                            tprt_reduction reduction,
                            const tprt_axes &axes) override;
  tprt_status allToAll(const void *in, void *out, const int64_t *inShape,
                       int32_t rank, int32_t splitDim, int32_t concatDim,
                       tprt_dtype dtype, const tprt_axes &axes) override;
  tprt_status barrier(const tprt_axes &axes) override;
  void abort(tprt_status status) override;
  bool aborted() const override;

private:
  /// Checks the members' calls agree, then runs `start` (which posts the
  /// data's MPI call on `p`) and waits for it.
  template <typename Start>
  tprt_status collective(const Call &call, const tprt_axes &axes,
                         std::unique_ptr<Pending> &p, Start start);

  MpiWorld &world;
};

class MpiWorld final : public tprt_world_s, public Processes {
public:
  ~MpiWorld() override {
    communicatorPtr.reset();
    // Collectives given up on may still be progressed by MPI, reading their
    // communicators and writing their buffers; notices still on their way
    // would land on a communicator id that MPI may give to the next world.
    // So every rank first receives every notice sent to it (with the
    // others: destroying a world is collective), and nothing is freed while
    // anything is pending (a leak, once per aborted world, not a crash).
    bool drained = drainNotices();
    if (!parked.empty() || !drained) {
      for (std::unique_ptr<Pending> &p : parked)
        (void)p.release();
      (void)notice.release();
      (void)sent.release();
      return;
    }
    for (auto &[key, comm] : groups)
      MPI_Comm_free(&comm);
    if (control != MPI_COMM_NULL)
      MPI_Comm_free(&control);
    if (comm != MPI_COMM_NULL)
      MPI_Comm_free(&comm);
  }

  tprt_status init(const tprt_mesh &mesh, MPI_Comm parent,
                   std::chrono::milliseconds timeout) {
    meshShape = mesh;
    this->timeout = timeout;
    int size = 0, me = 0;
    if (int rc = MPI_Comm_size(parent, &size); rc != MPI_SUCCESS)
      return mpiError(rc, "MPI_Comm_size");
    MPI_Comm_rank(parent, &me);
    int64_t devices = tprt_mesh_num_devices(&mesh);
    if (devices != size)
      return error(TPRT_INVALID_ARGUMENT, "mpi: the mesh has ", devices,
                   " devices but the MPI communicator ", size,
                   " processes; run one process per device (mpirun -np ",
                   devices, ")");
    myRank = me;
    ranks = {myRank};
    if (int rc = MPI_Comm_dup(parent, &comm); rc != MPI_SUCCESS)
      return mpiError(rc, "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (int rc = MPI_Comm_dup(comm, &control); rc != MPI_SUCCESS)
      return mpiError(rc, "MPI_Comm_dup");
    // One sub-communicator per ordered list of axes, the empty one included.
    std::vector<std::vector<int32_t>> lists = {{}};
    for (size_t done = 0; done < lists.size(); ++done)
      for (int32_t a = 0; a < mesh.rank; ++a)
        if (std::find(lists[done].begin(), lists[done].end(), a) ==
            lists[done].end()) {
          std::vector<int32_t> longer = lists[done];
          longer.push_back(a);
          lists.push_back(longer);
        }
    for (const std::vector<int32_t> &list : lists) {
      tprt_axes axes{static_cast<int32_t>(list.size()), {}};
      std::copy(list.begin(), list.end(), axes.axes);
      std::vector<int64_t> members = groupMembers(mesh, axes, myRank);
      int color = static_cast<int>(members.front());
      int key =
          static_cast<int>(tprt_group_position(&meshShape, &axes, myRank));
      MPI_Comm sub = MPI_COMM_NULL;
      if (int rc = MPI_Comm_split(comm, color, key, &sub); rc != MPI_SUCCESS)
        return mpiError(rc, "MPI_Comm_split");
      MPI_Comm_set_errhandler(sub, MPI_ERRORS_RETURN);
      groups.emplace(tprt_pack_axes(&axes), sub);
    }
    if (int rc = MPI_Irecv(notice.get(), sizeof(Notice), MPI_BYTE,
                           MPI_ANY_SOURCE, kNoticeTag, control, &noticeRequest);
        rc != MPI_SUCCESS)
      return mpiError(rc, "MPI_Irecv");
    communicatorPtr = std::make_unique<MpiCommunicator>(*this);
    return nullptr;
  }

  // tprt_world_s
  const char *backend() const override { return "mpi"; }
  const tprt_mesh &mesh() const override { return meshShape; }
  const std::vector<int64_t> &localRanks() const override { return ranks; }
  tprt_communicator *communicator(int64_t rank) override {
    return rank == myRank ? communicatorPtr.get() : nullptr;
  }

  Processes *processes() override { return this; }

  // Processes: point to point on the world's own communicator (collectives
  // run on the sub-communicators), chunks of at most 1 GiB.
  int64_t rank() const override { return myRank; }
  int64_t size() const override { return tprt_mesh_num_devices(&meshShape); }

  tprt_status allGather(const void *mine, size_t bytes, void *all) override {
    auto p = std::make_unique<Pending>();
    p->send.assign(static_cast<const char *>(mine),
                   static_cast<const char *>(mine) + bytes);
    p->recv.resize(bytes * static_cast<size_t>(size()));
    if (bytes > static_cast<size_t>(INT_MAX))
      return error(TPRT_INVALID_ARGUMENT, "mpi: all_gather of ", bytes,
                   " bytes between processes");
    if (int rc = MPI_Iallgather(
            p->send.data(), static_cast<int>(bytes), MPI_BYTE, p->recv.data(),
            static_cast<int>(bytes), MPI_BYTE, comm, &p->request);
        rc != MPI_SUCCESS)
      return mpiError(rc, "MPI_Iallgather");
    if (tprt_status s = waitSession(p, "the processes' exchange"))
      return s;
    std::memcpy(all, p->recv.data(), p->recv.size());
    return nullptr;
  }

  tprt_status send(int64_t to, const void *data, size_t bytes) override {
    return sendTagged(to, data, bytes, kSessionTag);
  }
  tprt_status receive(int64_t from, void *data, size_t bytes) override {
    return receiveTagged(from, data, bytes, kSessionTag);
  }
  tprt_status broadcast(const std::vector<int64_t> &members, int64_t root,
                        void *data, size_t bytes) override {
    if (myRank != root)
      return receiveTagged(root, data, bytes, kBootstrapTag);
    for (int64_t member : members)
      if (member != root)
        if (tprt_status s = sendTagged(member, data, bytes, kBootstrapTag))
          return s;
    return nullptr;
  }

  tprt_status sendTagged(int64_t to, const void *data, size_t bytes, int tag) {
    const char *from = static_cast<const char *>(data);
    for (size_t done = 0; done < bytes || (bytes == 0 && done == 0);) {
      size_t chunk = std::min(bytes - done, kChunk);
      auto p = std::make_unique<Pending>();
      p->send.assign(from + done, from + done + chunk);
      if (int rc = MPI_Isend(p->send.data(), static_cast<int>(chunk), MPI_BYTE,
                             static_cast<int>(to), tag, comm, &p->request);
          rc != MPI_SUCCESS)
        return mpiError(rc, "MPI_Isend");
      std::string what = "sending rank " + std::to_string(to) + " its data";
      if (tprt_status s = waitSession(p, what.c_str()))
        return s;
      done += chunk;
      if (bytes == 0)
        break;
    }
    return nullptr;
  }

  tprt_status receiveTagged(int64_t from, void *data, size_t bytes, int tag) {
    char *to = static_cast<char *>(data);
    for (size_t done = 0; done < bytes || (bytes == 0 && done == 0);) {
      size_t chunk = std::min(bytes - done, kChunk);
      auto p = std::make_unique<Pending>();
      p->recv.resize(std::max<size_t>(chunk, 1));
      if (int rc = MPI_Irecv(p->recv.data(), static_cast<int>(chunk), MPI_BYTE,
                             static_cast<int>(from), tag, comm, &p->request);
          rc != MPI_SUCCESS)
        return mpiError(rc, "MPI_Irecv");
      std::string what = "receiving rank " + std::to_string(from) + "'s data";
      if (tprt_status s = waitSession(p, what.c_str()))
        return s;
      if (chunk)
        std::memcpy(to + done, p->recv.data(), chunk);
      done += chunk;
      if (bytes == 0)
        break;
    }
    return nullptr;
  }

  MPI_Comm group(const tprt_axes &axes) const {
    return groups.at(tprt_pack_axes(&axes));
  }

  /// True once this world was aborted, here or by a notice from another
  /// rank (polled).
  bool checkAborted() {
    std::lock_guard<std::mutex> lock(mutex);
    if (abortCode != TPRT_OK)
      return true;
    int arrived = 0;
    if (noticeRequest != MPI_REQUEST_NULL &&
        MPI_Test(&noticeRequest, &arrived, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
        arrived) {
      abortCode = static_cast<tprt_code>(notice->code);
      notice->message[sizeof(notice->message) - 1] = 0;
      abortMessage = notice->message;
      noticeRequest = MPI_REQUEST_NULL;
    }
    return abortCode != TPRT_OK;
  }

  tprt_status abortedStatus() {
    std::lock_guard<std::mutex> lock(mutex);
    return error(TPRT_ABORTED, "rank ", myRank, ": the world was aborted (",
                 tprt_code_name(abortCode), "): ", abortMessage);
  }

  /// Aborts the world: every other rank is sent a notice.
  void abort(tprt_code code, const std::string &message) {
    std::lock_guard<std::mutex> lock(mutex);
    if (abortCode != TPRT_OK)
      return;
    abortCode = code;
    abortMessage = message;
    sent->code = code;
    std::strncpy(sent->message, message.c_str(), sizeof(sent->message) - 1);
    int size = 0;
    MPI_Comm_size(control, &size);
    for (int r = 0; r < size; ++r) {
      if (r == myRank)
        continue;
      MPI_Request request = MPI_REQUEST_NULL;
      if (MPI_Isend(sent.get(), sizeof(Notice), MPI_BYTE, r, kNoticeTag,
                    control, &request) == MPI_SUCCESS) {
        sends.push_back(request);
        noticeTargets.push_back(r);
      }
    }
  }

  /// Waits for `p`'s request: done, aborted meanwhile, or timed out (`what`
  /// names the call for the message).
  tprt_status wait(std::unique_ptr<Pending> &p, const tprt_axes &axes,
                   const Call &call, bool graceOnAbort = false) {
    Clock::time_point deadline = Clock::now() + timeout;
    Clock::time_point graceEnd = Clock::time_point::max();
    Clock::time_point start = Clock::now();
    for (;;) {
      int done = 0;
      if (int rc = MPI_Test(&p->request, &done, MPI_STATUS_IGNORE);
          rc != MPI_SUCCESS) {
        tprt_status status = mpiError(rc, "MPI_Test");
        abort(TPRT_INTERNAL, tprt_status_message(status));
        park(std::move(p));
        return status;
      }
      if (done)
        return nullptr;
      if (checkAborted()) {
        // A member that found the group's calls differ aborted the world;
        // the others' exchange of calls completes at once, so that every
        // member reports the mismatch itself.
        if (graceOnAbort && graceEnd == Clock::time_point::max())
          graceEnd = Clock::now() + std::chrono::milliseconds(200);
        if (!graceOnAbort || Clock::now() > graceEnd) {
          park(std::move(p));
          return abortedStatus();
        }
      }
      if (Clock::now() > deadline) {
        std::ostringstream os;
        os << "rank " << myRank << " timed out after " << timeout.count()
           << " ms in " << call.str() << " over mesh axes " << formatAxes(axes)
           << ": a member of its group did not come";
        abort(TPRT_TIMEOUT, os.str());
        park(std::move(p));
        return error(TPRT_TIMEOUT, os.str());
      }
      pause(start);
    }
  }

  /// Part of destroying the world, with every other rank: each says how many
  /// notices it sent to whom, and each receives all of its own before the
  /// control communicator is freed. False when that could not finish (a rank
  /// that never destroys its world): then nothing is freed.
  bool drainNotices() {
    if (control == MPI_COMM_NULL)
      return true;
    int size = 0;
    MPI_Comm_size(control, &size);
    // Buffers MPI may still write after a failed wait are parked, not freed.
    auto counts = std::make_unique<Pending>();
    counts->send.assign(sizeof(int) * static_cast<size_t>(size), 0);
    counts->recv.assign(sizeof(int) * static_cast<size_t>(size), 0);
    int *sentTo = reinterpret_cast<int *>(counts->send.data());
    const int *sentHere = reinterpret_cast<const int *>(counts->recv.data());
    for (int r : noticeTargets)
      sentTo[r] = 1;
    if (MPI_Ialltoall(sentTo, 1, MPI_INT, counts->recv.data(), 1, MPI_INT,
                      control, &counts->request) != MPI_SUCCESS)
      return false;
    if (!finish(counts->request)) {
      parked.push_back(std::move(counts));
      return false;
    }
    int expected = 0;
    for (int r = 0; r < size; ++r)
      expected += sentHere[r];
    int received = noticeRequest == MPI_REQUEST_NULL ? 1 : 0;
    while (received < expected) {
      if (noticeRequest == MPI_REQUEST_NULL &&
          MPI_Irecv(notice.get(), sizeof(Notice), MPI_BYTE, MPI_ANY_SOURCE,
                    kNoticeTag, control, &noticeRequest) != MPI_SUCCESS)
        return false;
      if (!finish(noticeRequest))
        return false;
      noticeRequest = MPI_REQUEST_NULL;
      ++received;
    }
    if (noticeRequest != MPI_REQUEST_NULL) {
      MPI_Cancel(&noticeRequest);
      if (!finish(noticeRequest))
        return false;
    }
    for (MPI_Request &r : sends)
      if (!finish(r))
        return false;
    return true;
  }

  /// Waits for `request` up to the world's timeout (10 s at least: the
  /// other ranks may still be finishing theirs).
  bool finish(MPI_Request &request) {
    Clock::time_point deadline =
        Clock::now() +
        std::max<std::chrono::milliseconds>(timeout, std::chrono::seconds(10));
    while (Clock::now() < deadline) {
      int done = 0;
      if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return false;
      if (done)
        return true;
      std::this_thread::yield();
    }
    return false;
  }

  /// Waits for a request of the session's own exchanges: only the timeout
  /// stops it (a failed run still reports its status to rank 0).
  tprt_status waitSession(std::unique_ptr<Pending> &p, const char *what) {
    Clock::time_point deadline = Clock::now() + timeout;
    Clock::time_point start = Clock::now();
    for (;;) {
      int done = 0;
      if (int rc = MPI_Test(&p->request, &done, MPI_STATUS_IGNORE);
          rc != MPI_SUCCESS) {
        park(std::move(p));
        return mpiError(rc, "MPI_Test");
      }
      if (done)
        return nullptr;
      if (Clock::now() > deadline) {
        std::ostringstream os;
        os << "rank " << myRank << " timed out after " << timeout.count()
           << " ms " << what;
        abort(TPRT_TIMEOUT, os.str());
        park(std::move(p));
        return error(TPRT_TIMEOUT, os.str());
      }
      pause(start);
    }
  }

  void park(std::unique_ptr<Pending> p) {
    std::lock_guard<std::mutex> lock(mutex);
    parked.push_back(std::move(p));
  }

  int64_t myRank = 0;
  tprt_mesh meshShape{};
  std::chrono::milliseconds timeout{0};

private:
  MPI_Comm comm = MPI_COMM_NULL, control = MPI_COMM_NULL;
  std::map<int64_t, MPI_Comm> groups;
  std::vector<int64_t> ranks;
  std::unique_ptr<MpiCommunicator> communicatorPtr;

  std::mutex mutex;
  tprt_code abortCode = TPRT_OK;
  std::string abortMessage;
  /// Heap buffers of the notices (received, sent): leaked with the world's
  /// MPI objects when a request on them could not finish.
  std::unique_ptr<Notice> notice = std::make_unique<Notice>(),
                          sent = std::make_unique<Notice>();
  MPI_Request noticeRequest = MPI_REQUEST_NULL;
  std::vector<MPI_Request> sends;
  std::vector<int> noticeTargets;
  std::vector<std::unique_ptr<Pending>> parked;
};

int64_t MpiCommunicator::rank() const { return world.myRank; }
const tprt_mesh &MpiCommunicator::mesh() const { return world.meshShape; }
bool MpiCommunicator::aborted() const { return world.checkAborted(); }

void MpiCommunicator::abort(tprt_status status) {
  std::ostringstream os;
  os << "rank " << world.myRank << " failed";
  if (status)
    os << " (" << tprt_code_name(tprt_status_code(status))
       << "): " << tprt_status_message(status);
  world.abort(status ? tprt_status_code(status) : TPRT_ABORTED, os.str());
}

template <typename Start>
tprt_status MpiCommunicator::collective(const Call &call, const tprt_axes &axes,
                                        std::unique_ptr<Pending> &p,
                                        Start start) {
  if (world.checkAborted())
    return world.abortedStatus();
  MPI_Comm group = world.group(axes);
  int size = 0;
  MPI_Comm_size(group, &size);
  // 1. Every member's call.
  auto check = std::make_unique<Pending>();
  check->send.resize(sizeof(Call));
  std::memcpy(check->send.data(), &call, sizeof(Call));
  check->calls.resize(static_cast<size_t>(size));
  if (int rc = MPI_Iallgather(check->send.data(), sizeof(Call), MPI_BYTE,
                              check->calls.data(), sizeof(Call), MPI_BYTE,
                              group, &check->request);
      rc != MPI_SUCCESS)
    return mpiError(rc, "MPI_Iallgather");
  if (tprt_status s = world.wait(check, axes, call, /*graceOnAbort=*/true))
    return s;
  std::vector<int64_t> members =
      groupMembers(world.meshShape, axes, world.myRank);
  for (size_t j = 1; j < check->calls.size(); ++j) {
    if (check->calls[j] == check->calls[0])
      continue;
    std::ostringstream os;
    os << "ranks of one group over mesh axes " << formatAxes(axes)
       << " called different collectives: rank " << members[0] << " called "
       << check->calls[0].str() << ", rank " << members[j] << " called "
       << check->calls[j].str();
    world.abort(TPRT_MISMATCH, os.str());
    return error(TPRT_MISMATCH, os.str());
  }
  // 2. The data.
  if (int rc = start(*p, group, size); rc != MPI_SUCCESS)
    return mpiError(rc, "a nonblocking MPI collective");
  return world.wait(p, axes, call);
}

/// MPI counts are ints.
tprt_status checkCount(int64_t count, const char *what) {
  if (count > INT_MAX)
    return error(TPRT_INVALID_ARGUMENT, "mpi: ", what, " of ", count,
                 " elements exceeds MPI's int count");
  return nullptr;
}

tprt_status MpiCommunicator::allReduce(const void *in, void *out, int64_t count,
                                       tprt_dtype dtype,
                                       tprt_reduction reduction,
                                       const tprt_axes &axes) {
  Call call = shapedCall(TPRT_ALL_REDUCE, dtype, &count, 1);
  call.reduction = reduction;
  std::optional<MPI_Datatype> type = mpiType(dtype);
  std::optional<MPI_Op> op = mpiOp(reduction);
  if (!type || !op)
    return error(TPRT_INVALID_ARGUMENT, "mpi: dtype ", dtype, " or reduction ",
                 reduction);
  if (tprt_status s = checkCount(count, "all_reduce"))
    return s;
  auto p = std::make_unique<Pending>();
  p->send = widen(in, count, dtype);
  if (tprt_status s =
          collective(call, axes, p, [&](Pending &q, MPI_Comm group, int) {
            return MPI_Iallreduce(MPI_IN_PLACE, q.send.data(),
                                  static_cast<int>(count), *type, *op, group,
                                  &q.request);
          }))
    return s;
  narrow(p->send, count, dtype, out);
  return nullptr;
}

tprt_status MpiCommunicator::allGather(const void *in, void *out,
                                       const int64_t *inShape, int32_t rank,
                                       int32_t dim, tprt_dtype dtype,
                                       const tprt_axes &axes) {
  Call call = shapedCall(TPRT_ALL_GATHER, dtype, inShape, rank);
  call.dim0 = dim;
  size_t elem = tprt_dtype_size(dtype);
  Rows b = rowsOf(inShape, rank, dim, elem);
  size_t bytes = static_cast<size_t>(b.rows) * b.width;
  if (tprt_status s = checkCount(static_cast<int64_t>(bytes), "all_gather"))
    return s;
  auto p = std::make_unique<Pending>();
  p->send.assign(static_cast<const char *>(in),
                 static_cast<const char *>(in) + bytes);
  int64_t size = tprt_group_size(&world.meshShape, &axes);
  p->recv.resize(bytes * static_cast<size_t>(size));
  if (tprt_status s =
          collective(call, axes, p, [&](Pending &q, MPI_Comm group, int) {
            return MPI_Iallgather(
                q.send.data(), static_cast<int>(bytes), MPI_BYTE, q.recv.data(),
                static_cast<int>(bytes), MPI_BYTE, group, &q.request);
          }))
    return s;
  // Member j's rows are columns [j*width, (j+1)*width) of out's.
  unpack(p->recv.data(), static_cast<char *>(out), b, size);
  return nullptr;
}

tprt_status MpiCommunicator::reduceScatter(const void *in, void *out,
                                           const int64_t *inShape, int32_t rank,
                                           int32_t dim, tprt_dtype dtype,
                                           tprt_reduction reduction,
                                           const tprt_axes &axes) {
  Call call = shapedCall(TPRT_REDUCE_SCATTER, dtype, inShape, rank);
  call.dim0 = dim;
  call.reduction = reduction;
  std::optional<MPI_Datatype> type = mpiType(dtype);
  std::optional<MPI_Op> op = mpiOp(reduction);
  if (!type || !op)
    return error(TPRT_INVALID_ARGUMENT, "mpi: dtype ", dtype, " or reduction ",
                 reduction);
  int64_t size = tprt_group_size(&world.meshShape, &axes);
  int64_t shape[TPRT_MAX_TENSOR_RANK];
  std::copy(inShape, inShape + rank, shape);
  shape[dim] /= size;
  int64_t blockCount = product(shape, rank);
  if (tprt_status s = checkCount(blockCount, "reduce_scatter block"))
    return s;
  // Block j (this member's share j of the result) packed contiguous, then
  // widened.
  std::vector<char> packed(static_cast<size_t>(blockCount * size) *
                           tprt_dtype_size(dtype));
  pack(static_cast<const char *>(in), packed.data(),
       rowsOf(shape, rank, dim, tprt_dtype_size(dtype)), size);
  auto p = std::make_unique<Pending>();
  p->send = widen(packed.data(), blockCount * size, dtype);
  p->recv.resize(p->send.size() / static_cast<size_t>(size));
  if (tprt_status s =
          collective(call, axes, p, [&](Pending &q, MPI_Comm group, int) {
            return MPI_Ireduce_scatter_block(q.send.data(), q.recv.data(),
                                             static_cast<int>(blockCount),
                                             *type, *op, group, &q.request);
          }))
    return s;
  narrow(p->recv, blockCount, dtype, out);
  return nullptr;
}

tprt_status MpiCommunicator::allToAll(const void *in, void *out,
                                      const int64_t *inShape, int32_t rank,
                                      int32_t splitDim, int32_t concatDim,
                                      tprt_dtype dtype, const tprt_axes &axes) {
  Call call = shapedCall(TPRT_ALL_TO_ALL, dtype, inShape, rank);
  call.dim0 = splitDim;
  call.dim1 = concatDim;
  size_t elem = tprt_dtype_size(dtype);
  int64_t size = tprt_group_size(&world.meshShape, &axes);
  int64_t block[TPRT_MAX_TENSOR_RANK];
  std::copy(inShape, inShape + rank, block);
  block[splitDim] /= size;
  size_t blockBytes = static_cast<size_t>(product(block, rank)) * elem;
  if (tprt_status s =
          checkCount(static_cast<int64_t>(blockBytes), "all_to_all block"))
    return s;
  auto p = std::make_unique<Pending>();
  p->send.resize(blockBytes * static_cast<size_t>(size));
  p->recv.resize(p->send.size());
  // Block j along splitDim goes to member j; member j's block lands as
  // block j along concatDim.
  pack(static_cast<const char *>(in), p->send.data(),
       rowsOf(block, rank, splitDim, elem), size);
  if (tprt_status s =
          collective(call, axes, p, [&](Pending &q, MPI_Comm group, int) {
            return MPI_Ialltoall(q.send.data(), static_cast<int>(blockBytes),
                                 MPI_BYTE, q.recv.data(),
                                 static_cast<int>(blockBytes), MPI_BYTE, group,
                                 &q.request);
          }))
    return s;
  unpack(p->recv.data(), static_cast<char *>(out),
         rowsOf(block, rank, concatDim, elem), size);
  return nullptr;
}

tprt_status MpiCommunicator::barrier(const tprt_axes &axes) {
  Call call;
  call.kind = TPRT_BARRIER;
  auto p = std::make_unique<Pending>();
  return collective(call, axes, p, [&](Pending &q, MPI_Comm group, int) {
    return MPI_Ibarrier(group, &q.request);
  });
}

} // namespace

tprt_status tprt::createMpiWorld(const tprt_mesh &mesh,
                                 std::chrono::milliseconds timeout,
                                 tprt_world **world) {
  if (tprt_status s = ensureMpi())
    return s;
  auto created = std::make_unique<MpiWorld>();
  if (tprt_status s = created->init(mesh, MPI_COMM_WORLD, timeout))
    return s;
  *world = created.release();
  return nullptr;
}

extern "C" tprt_status tprt_world_create_mpi(const tprt_mesh *mesh,
                                             MPI_Comm comm,
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
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    return error(TPRT_INVALID_ARGUMENT,
                 "tprt_world_create_mpi: MPI is not initialized (call "
                 "MPI_Init_thread first)");
  if (tprt_status s = ensureMpi())
    return s;
  if (comm == MPI_COMM_NULL)
    return error(TPRT_INVALID_ARGUMENT,
                 "tprt_world_create_mpi: comm is MPI_COMM_NULL");
  int64_t timeoutMs =
      optionField(options, &tprt_world_options::timeout_ms, int64_t{0});
  auto created = std::make_unique<MpiWorld>();
  if (tprt_status s =
          created->init(*mesh, comm,
                        timeoutMs > 0 ? std::chrono::milliseconds(timeoutMs)
                                      : defaultTimeout()))
    return s;
  *world = created.release();
  return nullptr;
}

namespace {

/// The session's duplicate of the caller's communicator.
struct SessionComm {
  MPI_Comm comm = MPI_COMM_NULL;
  ~SessionComm() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm != MPI_COMM_NULL && !finalized)
      MPI_Comm_free(&comm);
  }
};

} // namespace

extern "C" tprt_status
tprt_session_create_mpi(const tprt_mesh *mesh, MPI_Comm comm,
                        const tprt_session_options *options,
                        tprt_session **session) {
  if (!session)
    return error(TPRT_INVALID_ARGUMENT, "session: output pointer is null");
  *session = nullptr;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    return error(TPRT_INVALID_ARGUMENT,
                 "tprt_session_create_mpi: MPI is not initialized (call "
                 "MPI_Init_thread first)");
  if (tprt_status s = ensureMpi())
    return s;
  if (comm == MPI_COMM_NULL)
    return error(TPRT_INVALID_ARGUMENT,
                 "tprt_session_create_mpi: comm is MPI_COMM_NULL");
  auto held = std::make_shared<SessionComm>();
  if (int rc = MPI_Comm_dup(comm, &held->comm); rc != MPI_SUCCESS)
    return mpiError(rc, "MPI_Comm_dup");
  WorldMaker make = [held](const tprt_mesh &worldMesh,
                           const tprt_world_options &worldOptions,
                           tprt_world **world) {
    return tprt_world_create_mpi(&worldMesh, held->comm, &worldOptions, world);
  };
  return createSession(mesh, options, std::move(make), "mpi", session);
}

#else

tprt_status tprt::createMpiWorld(const tprt_mesh &, std::chrono::milliseconds,
                                 tprt_world **) {
  return error(TPRT_UNAVAILABLE,
               "the 'mpi' backend needs MPI: this libtprt was built without "
               "it (OpenMPI's libopenmpi-dev)");
}

#endif // TPRT_HAS_MPI
