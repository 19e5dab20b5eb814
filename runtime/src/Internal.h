//===- Internal.h - tprt internals shared by its sources -------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_SRC_INTERNAL_H
#define TPRT_SRC_INTERNAL_H

#include "tprt/tprt.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

struct tprt_status_s {
  tprt_code code;
  std::string message;
};

namespace tprt {

/// memcpy/memmove/memset for buffers that may be empty: an empty tensor's
/// pointer may be null, and the C functions forbid null even for 0 bytes.
inline void copyBytes(void *dst, const void *src, size_t bytes) {
  if (bytes)
    std::memcpy(dst, src, bytes);
}
inline void moveBytes(void *dst, const void *src, size_t bytes) {
  if (bytes)
    std::memmove(dst, src, bytes);
}
inline void zeroBytes(void *dst, size_t bytes) {
  if (bytes)
    std::memset(dst, 0, bytes);
}

/// An error status whose message is its arguments streamed together.
template <typename... Args>
tprt_status error(tprt_code code, const Args &...args) {
  std::ostringstream os;
  (os << ... << args);
  return tprt_status_create(code, os.str().c_str());
}

/// Field `member` of a caller's option struct (tprt_*_options), or
/// `fallback` when there is no struct or its struct_size does not cover the
/// field (a caller compiled against an older tprt.h).
template <typename Struct, typename Field>
Field optionField(const Struct *options, Field Struct::*member,
                  Field fallback) {
  if (!options)
    return fallback;
  size_t offset =
      static_cast<size_t>(reinterpret_cast<const char *>(&(options->*member)) -
                          reinterpret_cast<const char *>(options));
  return options->struct_size >= offset + sizeof(Field) ? options->*member
                                                        : fallback;
}

/// TPRT_INVALID_ARGUMENT when `options` is given with a struct_size that
/// covers no field past struct_size itself (a struct that was zeroed, not
/// made with the _INIT macro).
template <typename Struct>
tprt_status checkOptionsSize(const Struct *options, const char *type) {
  if (options && options->struct_size <= sizeof(uint32_t))
    return tprt_status_create(TPRT_INVALID_ARGUMENT,
                              (std::string(type) + ".struct_size is " +
                               std::to_string(options->struct_size) +
                               "; set it to sizeof(" + type +
                               ") (the _INIT macro of tprt.h does)")
                                  .c_str());
  return nullptr;
}

/// The timeout when none is given: TPRT_TIMEOUT_MS from the environment when
/// it is a positive number of milliseconds, else 60 s.
std::chrono::milliseconds defaultTimeout();

/// Formats a shape as `[2, 3, 4]`.
std::string formatShape(const int64_t *shape, int32_t rank);
/// Formats axes as `[0, 2]`.
std::string formatAxes(const tprt_axes &axes);

/// Row-major coordinates of `device` on `mesh`.
std::vector<int64_t> coordinates(const tprt_mesh &mesh, int64_t device);
/// The device at `coords`.
int64_t deviceAt(const tprt_mesh &mesh, const std::vector<int64_t> &coords);
/// Members of `device`'s group over `axes`, in group order.
std::vector<int64_t> groupMembers(const tprt_mesh &mesh, const tprt_axes &axes,
                                  int64_t device);

/// dst[i] = srcs[0][i] (op) srcs[1][i] (op) ... for i < count. `dst` may be
/// one of the sources.
void reduceInto(tprt_dtype dtype, tprt_reduction reduction, void *dst,
                const void *const *srcs, int64_t numSrcs, int64_t count);
/// f16 / bf16 <-> f32, round to nearest even. The bf16 ones are inline and
/// branch-free, so that loops over arrays of them vectorize (the narrow
/// GEMMs widen their operands on every call).
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
inline float bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}
inline uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  // A NaN stays a (quiet) NaN: rounding could carry it into infinity.
  uint32_t quiet = (bits >> 16) | 0x40u;
  return static_cast<uint16_t>((bits & 0x7fffffffu) > 0x7f800000u ? quiet
                                                                  : rounded);
}

/// A GEMM descriptor's fields in range (tprt_rt_gemm): dtype, epilogue,
/// transposes, sizes, leading dimensions; a status naming the bad one.
tprt_status checkGemm(const tprt_gemm_desc *desc);
/// GELU in its tanh form (TPRT_EPILOGUE_GELU).
float geluTanh(float x);

/// True when the reduction and dtype are supported.
bool isValidReduction(tprt_reduction reduction);
bool isValidDtype(tprt_dtype dtype);

/// Copies a box of `boxShape` from `src` (of `srcShape`, starting at
/// `srcOffset`) to `dst` (of `dstShape`, at `dstOffset`); all of `rank`
/// dimensions, elements of `elemSize` bytes.
void copyBox(const void *src, const int64_t *srcShape, const int64_t *srcOffset,
             void *dst, const int64_t *dstShape, const int64_t *dstOffset,
             const int64_t *boxShape, int32_t rank, size_t elemSize);

int64_t product(const int64_t *shape, int32_t rank);

/// A tensor seen as `rows` rows of `width` bytes (elements of `elem`
/// bytes): the dimensions before `dim`, and `dim` with everything inside
/// it. How the collectives move blocks along `dim` with strided copies.
struct Rows {
  int64_t rows;
  size_t width;
};
inline Rows rowsOf(const int64_t *shape, int32_t rank, int32_t dim,
                   size_t elem) {
  return {product(shape, dim),
          static_cast<size_t>(product(shape + dim, rank - dim)) * elem};
}

using Clock = std::chrono::steady_clock;

} // namespace tprt

/// A rank's endpoint; backends derive from it.
struct tprt_communicator_s {
  virtual ~tprt_communicator_s() = default;
  virtual int64_t rank() const = 0;
  virtual const tprt_mesh &mesh() const = 0;
  virtual const char *backend() const = 0;

  virtual tprt_status allReduce(const void *in, void *out, int64_t count,
                                tprt_dtype dtype, tprt_reduction reduction,
                                const tprt_axes &axes) = 0;
  virtual tprt_status allGather(const void *in, void *out,
                                const int64_t *inShape, int32_t rank,
                                int32_t dim, tprt_dtype dtype,
                                const tprt_axes &axes) = 0;
  virtual tprt_status reduceScatter(const void *in, void *out,
                                    const int64_t *inShape, int32_t rank,
                                    int32_t dim, tprt_dtype dtype,
                                    tprt_reduction reduction,
                                    const tprt_axes &axes) = 0;
  virtual tprt_status allToAll(const void *in, void *out,
                               const int64_t *inShape, int32_t rank,
                               int32_t splitDim, int32_t concatDim,
                               tprt_dtype dtype, const tprt_axes &axes) = 0;
  virtual tprt_status barrier(const tprt_axes &axes) = 0;
  virtual void abort(tprt_status status) = 0;
  /// True once any rank of the world aborted it (a failure, a timeout, a
  /// mismatch): a rank waiting on its device polls this to stop too.
  virtual bool aborted() const = 0;

  tprt_comm_stats stats = {};
};

namespace tprt {

/// How the ranks of a GPU world run an entry point (CUDA graphs, on by
/// default: tprt_session_options.no_graphs):
/// - Plain: each op launched by the host code as it runs (a function's first
///   run on the world, its warm-up: kernels loaded, NCCL communicators and
///   staging buffers made; every run where graphs are off or refused);
/// - Capture: the host code runs with the rank's stream in capture, and the
///   graph is instantiated (or an earlier one updated: new addresses) and
///   launched; where any rank's capture fails, every rank discards its graph
///   and runs plainly, and the function stays plain;
/// - Replay: the graph captured with these very buffers launched alone; the
///   host code does not run.
enum class GraphMode { Plain, Capture, Replay };
/// A function of a program: (its checksum, its index).
using FunctionKey = std::pair<uint64_t, int32_t>;
/// One rank's run of an entry point on a GPU world (DeviceRanks::runEntry).
struct EntryCall {
  FunctionKey function;
  /// The function's name, for messages.
  const char *name = "";
  /// A run on arrays, which takes part in graphs (GraphMode); false: the
  /// body just runs.
  bool graphed = false;
  GraphMode mode = GraphMode::Plain;
  /// The entry's buffers: arguments, results, arena.
  std::vector<void *> buffers;
  /// The results' buffers that are not a donated argument's, and bytes.
  std::vector<void *> outputs;
  std::vector<size_t> outputBytes;
};

/// What a world whose ranks keep their tensors in device memory (CUDA)
/// offers the session: the rank's device made current on its thread, its
/// buffers, copies ordered on its stream, the call table of its target and
/// the per-rank state that table's entry points read (the rank context's
/// `device`). CPU worlds have none.
struct DeviceRanks {
  virtual ~DeviceRanks() = default;
  /// Makes the rank's device current on the calling thread.
  virtual tprt_status enter(int64_t rank) = 0;
  virtual tprt_status alloc(int64_t rank, size_t bytes, void **ptr) = 0;
  virtual void release(int64_t rank, void *ptr) = 0;
  virtual tprt_status copyToDevice(int64_t rank, void *dst, const void *src,
                                   size_t bytes) = 0;
  virtual tprt_status copyToHost(int64_t rank, void *dst, const void *src,
                                 size_t bytes) = 0;
  /// Sets `bytes` of a buffer of alloc to zero, on the rank's stream.
  virtual tprt_status zero(int64_t rank, void *ptr, size_t bytes) = 0;
  /// Waits until everything the rank enqueued has run.
  virtual tprt_status synchronize(int64_t rank) = 0;
  virtual const tprt_rt_table *table() const = 0;
  virtual void *rankState(int64_t rank) = 0;
  /// The rank runs the program of checksum `checksum` next (its kernels are
  /// looked up among that program's: a world outlives its programs).
  virtual void useProgram(int64_t rank, uint64_t checksum) = 0;
  /// Times the rank's next ops on the device (tprt_device_profile) until
  /// takeTiming, which is called after synchronize.
  virtual tprt_status startTiming(int64_t rank) = 0;
  /// The run's last op is enqueued: the whole run's span ends here.
  virtual void endRun(int64_t rank) = 0;
  virtual tprt_status takeTiming(int64_t rank,
                                 tprt_device_profile *profile) = 0;

  /// CUDA graphs. Why this world never captures (null: it may).
  virtual const char *graphRefusal() const = 0;
  /// Result `index` of `function`'s last run on `rank` when its array was
  /// freed since (the buffer is kept for the next run, so that its address,
  /// and the graph, stay the same) and it has `bytes`; else null. The
  /// buffer is the caller's result buffer now.
  virtual void *idleOutput(int64_t rank, FunctionKey function, size_t index,
                           size_t bytes) = 0;
  /// How the `ranks` run `function` next (called before they run, with
  /// `buffers[k]`, the k-th rank's entry buffers): every rank the same mode.
  virtual GraphMode
  graphMode(FunctionKey function, bool enabled,
            const std::vector<int64_t> &ranks,
            const std::vector<std::vector<void *>> &buffers) = 0;
  /// Runs `body` (the host code: the program's entry) on `rank` as `call`
  /// says. The call's outputs are kept by the function's slot from now on
  /// (freed arrays' buffers come back through idleOutput). A capture that
  /// fails does not fail the run: it runs plainly.
  virtual tprt_status runEntry(int64_t rank, const EntryCall &call,
                               tprt_rank_context *ctx,
                               const std::function<tprt_status()> &body) = 0;
};

/// What a world whose ranks live in several processes (`mpi`: one rank a
/// process) offers a session, which then runs only this process's rank:
/// rank 0 sends the others their inputs and receives their results. Each
/// call waits at most the world's timeout and works after an abort too (a
/// failed run still reports to rank 0); bytes go through staging copies, so
/// a call given up on never leaves MPI with the caller's buffer.
struct Processes {
  virtual ~Processes() = default;
  /// This process's rank (the mesh rank it drives) and the process count.
  virtual int64_t rank() const = 0;
  virtual int64_t size() const = 0;
  /// Every process's `bytes` of `mine`, in rank order, into `all`.
  virtual tprt_status allGather(const void *mine, size_t bytes, void *all) = 0;
  virtual tprt_status send(int64_t to, const void *data, size_t bytes) = 0;
  virtual tprt_status receive(int64_t from, void *data, size_t bytes) = 0;
  /// `bytes` of `data` from `root` to the other ranks of `members` (each
  /// member calls it with the same list), apart from the session's messages:
  /// how NCCL's unique ids reach a group's processes.
  virtual tprt_status broadcast(const std::vector<int64_t> &members,
                                int64_t root, void *data, size_t bytes) = 0;
};

} // namespace tprt

/// The ranks of one mesh that live in this process, connected by one
/// communicator backend; backends derive from it.
struct tprt_world_s {
  virtual ~tprt_world_s() = default;
  virtual const char *backend() const = 0;
  virtual const tprt_mesh &mesh() const = 0;
  /// The mesh's ranks that this process drives, ascending.
  virtual const std::vector<int64_t> &localRanks() const = 0;
  /// The communicator of `rank`, one of localRanks().
  virtual tprt_communicator *communicator(int64_t rank) = 0;
  /// Device memory and streams, for a world of GPU ranks; null on the CPU.
  virtual tprt::DeviceRanks *device() { return nullptr; }
  /// For a world spread over processes; null when every rank is here.
  virtual tprt::Processes *processes() { return nullptr; }
};

namespace tprt {

/// Makes a world of a checked mesh; `timeout` is how long a rank waits for
/// its group.
using WorldFactory = tprt_status (*)(const tprt_mesh &mesh,
                                     std::chrono::milliseconds timeout,
                                     tprt_world **world);

/// A communicator backend this build has.
struct Backend {
  const char *name;
  const char *description;
  /// The target whose programs it runs (tprt_targets.def).
  const char *target;
  /// True when each rank is a process of an MPI job.
  bool processes;
  WorldFactory create;
};

/// The backend named `name`, or null.
const Backend *findBackend(const char *name);

/// The registry: every backend of this build, `local` first.
const std::vector<Backend> &backends();

/// The `local` backend: every rank a thread of this process.
tprt_status createLocalWorld(const tprt_mesh &mesh,
                             std::chrono::milliseconds timeout,
                             tprt_world **world);

/// The `device` backend: every rank a thread of this process on one GPU
/// (cuda/DeviceWorld.cpp); TPRT_UNAVAILABLE without a CUDA driver.
tprt_status createDeviceWorld(const tprt_mesh &mesh,
                              std::chrono::milliseconds timeout,
                              tprt_world **world);

/// Makes the world of each session run (tprt_world_create by default; the
/// caller's MPI communicator for tprt_session_create_mpi).
using WorldMaker = std::function<tprt_status(const tprt_mesh &mesh,
                                             const tprt_world_options &options,
                                             tprt_world **world)>;

/// tprt_session_create with the worlds made by `makeWorld` (null: by the
/// options' backend), named `backend` in messages.
tprt_status createSession(const tprt_mesh *mesh,
                          const tprt_session_options *options,
                          WorldMaker makeWorld, const char *backend,
                          tprt_session **session);

/// The `mpi` backend: this process is one rank of an MPI job over
/// MPI_COMM_WORLD (MpiCommunicator.cpp); TPRT_UNAVAILABLE without MPI.
tprt_status createMpiWorld(const tprt_mesh &mesh,
                           std::chrono::milliseconds timeout,
                           tprt_world **world);

/// The `nccl` backend: every rank a thread of this process on its own GPU
/// (cuda/NcclWorld.cpp); TPRT_UNAVAILABLE without the driver or NCCL.
/// createNcclMpiWorld, `nccl-mpi`: one rank a process of an MPI job, on the
/// GPU of its index among the job's processes on its node, NCCL's ids sent
/// over MPI.
tprt_status createNcclWorld(const tprt_mesh &mesh,
                            std::chrono::milliseconds timeout,
                            tprt_world **world);
tprt_status createNcclMpiWorld(const tprt_mesh &mesh,
                               std::chrono::milliseconds timeout,
                               tprt_world **world);

} // namespace tprt

#endif // TPRT_SRC_INTERNAL_H
