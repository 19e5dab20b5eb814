//===- NcclWorld.cpp - The `nccl` backend: one GPU per rank ---------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Every rank a thread of this process driving its own GPU (rank r on GPU r),
// its collectives NCCL's, enqueued on the rank's stream. A group of mesh axes
// gets its NCCL communicators the first time one of its members uses it: that
// member makes all of them with ncclCommInitAll (one thread, so a member that
// never comes cannot leave it waiting), the others take theirs, and the world
// keeps them for its life.
//
// Under MPI (`nccl-mpi`) every rank is a process on the GPU of its index
// among the job's processes on its node: a group's first member makes the
// NCCL unique id and sends it to the others over MPI (Processes::broadcast),
// and every member joins with a nonblocking ncclCommInitRankConfig, polled
// so that a member that never comes ends in the timeout or the world's
// abort, not a hang. Aborts, barriers and the session's messages go through
// the `mpi` world underneath.
//
// A rank waits for its stream only where a result leaves the device, polling:
// when the world is aborted (a peer failed, timed out or mismatched) it aborts
// its NCCL communicators, which ends the kernels waiting for that peer.
//
// NCCL's collectives work on the flat buffer: all_gather concatenates the
// members' buffers, reduce_scatter splits its input in contiguous blocks. Along
// an inner dimension the blocks are strided, so they go through a staging
// buffer with one 2D copy per member; all_to_all is grouped sends and
// receives between packed blocks. Host memory and a `local` world are used
// only for the barrier and to stop the other ranks after a failure.
//
//===----------------------------------------------------------------------===//

#include "CudaRank.h"

#include "../Internal.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

using namespace tprt;

#ifdef TPRT_HAS_CUDA_HEADERS

using namespace tprt::cuda;

namespace {

/// The NCCL communicators of the groups used so far, shared by the world's
/// ranks: key, the packed axes and the group's first member; value, one
/// communicator per member in group order (null once its rank aborted it).
struct Groups {
  std::mutex mutex;
  std::map<std::pair<int64_t, int64_t>, std::vector<ncclComm_t>> comms;
  /// Under MPI: the processes (each holds only its own member's
  /// communicator, at its position) and how long a member waits.
  Processes *processes = nullptr;
  std::chrono::milliseconds timeout{0};
};

int64_t packAxes(const tprt_axes &axes) {
  int64_t packed = axes.count;
  for (int32_t i = 0; i < axes.count; ++i)
    packed |= static_cast<int64_t>(axes.axes[i]) << (4 * (i + 1));
  return packed;
}

std::optional<ncclDataType_t> ncclType(tprt_dtype dtype) {
  switch (dtype) {
  case TPRT_F32:
    return ncclFloat32;
  case TPRT_F64:
    return ncclFloat64;
  case TPRT_F16:
    return ncclFloat16;
  case TPRT_BF16:
    return ncclBfloat16;
  case TPRT_I32:
    return ncclInt32;
  case TPRT_I64:
    return ncclInt64;
  default:
    return std::nullopt;
  }
}

std::optional<ncclRedOp_t> ncclOp(tprt_reduction reduction) {
  switch (reduction) {
  case TPRT_SUM:
    return ncclSum;
  case TPRT_MAX:
    return ncclMax;
  case TPRT_MIN:
    return ncclMin;
  case TPRT_PROD:
    return ncclProd;
  default:
    return std::nullopt;
  }
}

class NcclCommunicator final : public tprt_communicator_s {
public:
  NcclCommunicator(const Nccl *nccl, tprt_communicator *host, CudaRank *gpu,
                   Groups *groups, const std::vector<int> *ordinals)
      : nccl(nccl), host(host), gpu(gpu), groups(groups), ordinals(ordinals) {}

  int64_t rank() const override { return host->rank(); }
  const tprt_mesh &mesh() const override { return host->mesh(); }
  const char *backend() const override { return "nccl"; }

  tprt_status allReduce(const void *in, void *out, int64_t count,
                        tprt_dtype dtype, tprt_reduction reduction,
                        const tprt_axes &axes) override {
    ncclComm_t comm = nullptr;
    std::optional<ncclDataType_t> type = ncclType(dtype);
    std::optional<ncclRedOp_t> op = ncclOp(reduction);
    if (!type || !op)
      return error(TPRT_INVALID_ARGUMENT, "nccl: dtype ", dtype,
                   " or reduction ", reduction, " has no NCCL equivalent");
    if (tprt_status s = communicator(axes, &comm))
      return s;
    return check(nccl->ncclAllReduce(in, out, static_cast<size_t>(count), *type,
                                     *op, comm, gpu->stream),
                 "ncclAllReduce");
  }

  tprt_status allGather(const void *in, void *out, const int64_t *inShape,
                        int32_t rank, int32_t dim, tprt_dtype dtype,
                        const tprt_axes &axes) override {
    ncclComm_t comm = nullptr;
    if (tprt_status s = communicator(axes, &comm))
      return s;
    Blocks b =
        blocks(inShape, rank, dim, dtype, tprt_group_size(&mesh(), &axes));
    // Outermost: the members' buffers concatenated are the result.
    void *gathered = out;
    if (b.rows > 1)
      if (tprt_status s = scratch(b.bytes * b.size, &gathered))
        return s;
    if (tprt_status s = check(nccl->ncclAllGather(in, gathered, b.bytes,
                                                  ncclUint8, comm, gpu->stream),
                              "ncclAllGather"))
      return s;
    if (b.rows == 1)
      return nullptr;
    // Member j's block goes to columns [j*width, (j+1)*width) of each row.
    for (int64_t j = 0; j < b.size; ++j)
      if (tprt_status s =
              gpu->copy2D(static_cast<char *>(gathered) + j * b.bytes, b.width,
                          static_cast<char *>(out) + j * b.width,
                          b.width * b.size, b.width, b.rows))
        return s;
    return nullptr;
  }

  tprt_status reduceScatter(const void *in, void *out, const int64_t *inShape,
                            int32_t rank, int32_t dim, tprt_dtype dtype,
                            tprt_reduction reduction,
                            const tprt_axes &axes) override {
    ncclComm_t comm = nullptr;
    std::optional<ncclDataType_t> type = ncclType(dtype);
    std::optional<ncclRedOp_t> op = ncclOp(reduction);
    if (!type || !op)
      return error(TPRT_INVALID_ARGUMENT, "nccl: dtype ", dtype,
                   " or reduction ", reduction, " has no NCCL equivalent");
    if (tprt_status s = communicator(axes, &comm))
      return s;
    int64_t size = tprt_group_size(&mesh(), &axes);
    // The output's blocks: the input split along `dim` in `size` parts.
    int64_t shape[TPRT_MAX_TENSOR_RANK];
    std::copy(inShape, inShape + rank, shape);
    shape[dim] /= size;
    Blocks b = blocks(shape, rank, dim, dtype, size);
    const void *packed = in;
    if (b.rows > 1) {
      void *staging = nullptr;
      if (tprt_status s = scratch(b.bytes * b.size, &staging))
        return s;
      // Block j (columns [j*width, (j+1)*width) of each row) made contiguous.
      for (int64_t j = 0; j < b.size; ++j)
        if (tprt_status s = gpu->copy2D(
                static_cast<const char *>(in) + j * b.width, b.width * b.size,
                static_cast<char *>(staging) + j * b.bytes, b.width, b.width,
                b.rows))
          return s;
      packed = staging;
    }
    size_t elem = tprt_dtype_size(dtype);
    return check(nccl->ncclReduceScatter(packed, out, b.bytes / elem, *type,
                                         *op, comm, gpu->stream),
                 "ncclReduceScatter");
  }

  tprt_status allToAll(const void *in, void *out, const int64_t *inShape,
                       int32_t rank, int32_t splitDim, int32_t concatDim,
                       tprt_dtype dtype, const tprt_axes &axes) override {
    ncclComm_t comm = nullptr;
    if (tprt_status s = communicator(axes, &comm))
      return s;
    int64_t size = tprt_group_size(&mesh(), &axes);
    // Every block has the input's shape split along splitDim.
    int64_t block[TPRT_MAX_TENSOR_RANK];
    std::copy(inShape, inShape + rank, block);
    block[splitDim] /= size;
    Blocks send = blocks(block, rank, splitDim, dtype, size);
    Blocks recv = blocks(block, rank, concatDim, dtype, size);
    void *sendBuf = nullptr, *recvBuf = nullptr;
    if (tprt_status s = scratch(send.bytes * size, &sendBuf))
      return s;
    if (tprt_status s = scratch(recv.bytes * size, &recvBuf, /*second=*/true))
      return s;
    for (int64_t j = 0; j < size; ++j)
      if (tprt_status s = gpu->copy2D(
              static_cast<const char *>(in) + j * send.width, send.width * size,
              static_cast<char *>(sendBuf) + j * send.bytes, send.width,
              send.width, send.rows))
        return s;
    if (tprt_status s = check(nccl->ncclGroupStart(), "ncclGroupStart"))
      return s;
    for (int64_t j = 0; j < size; ++j) {
      nccl->ncclSend(static_cast<char *>(sendBuf) + j * send.bytes, send.bytes,
                     ncclUint8, static_cast<int>(j), comm, gpu->stream);
      nccl->ncclRecv(static_cast<char *>(recvBuf) + j * recv.bytes, recv.bytes,
                     ncclUint8, static_cast<int>(j), comm, gpu->stream);
    }
    if (tprt_status s =
            check(nccl->ncclGroupEnd(), "ncclGroupEnd (all_to_all)"))
      return s;
    for (int64_t j = 0; j < size; ++j)
      if (tprt_status s =
              gpu->copy2D(static_cast<char *>(recvBuf) + j * recv.bytes,
                          recv.width, static_cast<char *>(out) + j * recv.width,
                          recv.width * size, recv.width, recv.rows))
        return s;
    return nullptr;
  }

  tprt_status barrier(const tprt_axes &axes) override {
    if (tprt_status s = waitStream())
      return s;
    return host->barrier(axes);
  }

  void abort(tprt_status status) override {
    host->abort(status);
    abortNccl();
  }
  bool aborted() const override { return host->aborted(); }

  /// Waits for the rank's stream; when the world was aborted meanwhile, the
  /// rank's NCCL communicators are aborted so that its kernels end.
  tprt_status waitStream() {
    tprt_status status = gpu->wait(host);
    if (status && aborted())
      abortNccl();
    return status;
  }

  /// Aborts this rank's NCCL communicators (on the rank's own thread): the
  /// kernels waiting for a peer that will not come return.
  void abortNccl() {
    std::lock_guard<std::mutex> lock(groups->mutex);
    for (auto &[key, position] : mine) {
      ncclComm_t &comm = groups->comms[key][position];
      if (comm)
        nccl->ncclCommAbort(comm);
      comm = nullptr;
    }
    mine.clear();
  }

  tprt_communicator *hostCommunicator() const { return host; }

  /// Frees the staging buffers (at the end of a run, stream-ordered).
  void releaseScratch() {
    for (Scratch *s : {&first, &second})
      if (s->ptr) {
        gpu->cu->cuMemFreeAsync(s->ptr, gpu->stream);
        *s = Scratch();
      }
  }

private:
  /// A tensor seen as `rows` rows of `width` bytes per member block: the
  /// dimensions before `dim`, and `dim` with everything inside it.
  struct Blocks {
    int64_t rows, size;
    size_t width, bytes;
  };
  Blocks blocks(const int64_t *shape, int32_t rank, int32_t dim,
                tprt_dtype dtype, int64_t size) const {
    Blocks b;
    b.rows = product(shape, dim);
    b.size = size;
    b.width = static_cast<size_t>(product(shape + dim, rank - dim)) *
              tprt_dtype_size(dtype);
    b.bytes = b.width * static_cast<size_t>(b.rows);
    return b;
  }

  struct Scratch {
    CUdeviceptr ptr = 0;
    size_t bytes = 0;
  };
  /// A device buffer of at least `bytes`, kept between collectives.
  tprt_status scratch(size_t bytes, void **ptr, bool useSecond = false) {
    Scratch &s = useSecond ? second : first;
    if (s.bytes < bytes) {
      // A graph captured with the old buffer must not replay.
      if (s.ptr) {
        gpu->cu->cuMemFreeAsync(s.ptr, gpu->stream);
        gpu->generation += 1;
      }
      s = Scratch();
      if (tprt_status st =
              gpu->check(gpu->cu->cuMemAllocAsync(&s.ptr, bytes, gpu->stream),
                         "cuMemAllocAsync (nccl staging)"))
        return st;
      s.bytes = bytes;
    }
    *ptr = reinterpret_cast<void *>(s.ptr);
    return nullptr;
  }

  tprt_status check(ncclResult_t result, const char *call) {
    if (result == ncclSuccess)
      return nullptr;
    tprt_status status = nccl->error(result, call);
    tprt_status named =
        error(tprt_status_code(status), "rank ", rank(), " (GPU ", gpu->ordinal,
              "): ", tprt_status_message(status));
    tprt_status_free(status);
    return named;
  }

  /// The NCCL communicator of this rank's group over `axes`; the group's
  /// first member to get here makes those of every member.
  tprt_status communicator(const tprt_axes &axes, ncclComm_t *comm) {
    if (tprt_status s = tprt_axes_check(&mesh(), &axes))
      return s;
    if (aborted())
      return error(TPRT_ABORTED, "rank ", rank(),
                   ": the world was aborted before this collective");
    std::vector<int64_t> members = groupMembers(mesh(), axes, rank());
    auto key = std::make_pair(packAxes(axes), members.front());
    size_t position =
        static_cast<size_t>(tprt_group_position(&mesh(), &axes, rank()));
    if (groups->processes)
      return joinOverMpi(axes, members, key, position, comm);
    std::lock_guard<std::mutex> lock(groups->mutex);
    auto it = groups->comms.find(key);
    if (it == groups->comms.end()) {
      std::vector<int> devices;
      for (int64_t member : members)
        devices.push_back((*ordinals)[static_cast<size_t>(member)]);
      std::vector<ncclComm_t> made(members.size(), nullptr);
      ncclResult_t result = nccl->ncclCommInitAll(
          made.data(), static_cast<int>(made.size()), devices.data());
      // ncclCommInitAll switches devices; this thread's is the rank's again.
      if (tprt_status s = gpu->check(gpu->cu->cuCtxSetCurrent(gpu->context),
                                     "cuCtxSetCurrent"))
        return s;
      if (tprt_status s = check(result, "ncclCommInitAll"))
        return s;
      it = groups->comms.emplace(key, std::move(made)).first;
    }
    *comm = it->second[position];
    if (!*comm)
      return error(TPRT_ABORTED, "rank ", rank(),
                   ": its NCCL communicator was aborted");
    mine.emplace(key, position);
    return nullptr;
  }

  /// Under MPI: the group's first member makes the id and sends it to the
  /// others; every member joins without blocking and polls.
  tprt_status joinOverMpi(const tprt_axes &axes,
                          const std::vector<int64_t> &members,
                          std::pair<int64_t, int64_t> key, size_t position,
                          ncclComm_t *comm) {
    if (auto it = groups->comms.find(key); it != groups->comms.end()) {
      *comm = it->second[position];
      if (!*comm)
        return error(TPRT_ABORTED, "rank ", rank(),
                     ": its NCCL communicator was aborted");
      return nullptr;
    }
    ncclUniqueId id{};
    if (position == 0)
      if (tprt_status s = check(nccl->ncclGetUniqueId(&id), "ncclGetUniqueId"))
        return s;
    if (tprt_status s = groups->processes->broadcast(members, members.front(),
                                                     &id, sizeof(id)))
      return s;
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t made = nullptr;
    ncclResult_t result =
        nccl->ncclCommInitRankConfig(&made, static_cast<int>(members.size()),
                                     id, static_cast<int>(position), &config);
    Clock::time_point deadline = Clock::now() + groups->timeout;
    for (;;) {
      // The call returns at once; the communicator's state says when it is
      // made.
      if (made && (result == ncclSuccess || result == ncclInProgress)) {
        ncclResult_t state = ncclSuccess;
        if (ncclResult_t r = nccl->ncclCommGetAsyncError(made, &state);
            r != ncclSuccess)
          state = r;
        result = state;
      }
      if (result != ncclInProgress)
        break;
      if (aborted() || Clock::now() > deadline) {
        nccl->ncclCommAbort(made);
        if (aborted())
          return error(TPRT_ABORTED, "rank ", rank(),
                       ": the world was aborted while its NCCL communicator "
                       "over ",
                       formatAxes(axes), " was being made");
        std::ostringstream os;
        os << "rank " << rank() << " timed out after "
           << groups->timeout.count()
           << " ms making its NCCL communicator over " << formatAxes(axes)
           << ": a member of its group did not come";
        tprt_status timedOut = error(TPRT_TIMEOUT, os.str());
        host->abort(timedOut);
        return timedOut;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (tprt_status s = check(result, "ncclCommInitRankConfig"))
      return s;
    std::vector<ncclComm_t> slots(members.size(), nullptr);
    slots[position] = made;
    {
      std::lock_guard<std::mutex> lock(groups->mutex);
      groups->comms.emplace(key, std::move(slots));
    }
    mine.emplace(key, position);
    *comm = made;
    return nullptr;
  }

  const Nccl *nccl;
  tprt_communicator *host;
  CudaRank *gpu;
  Groups *groups;
  /// GPU ordinal of each rank.
  const std::vector<int> *ordinals;
  /// The groups this rank used: key and position.
  std::map<std::pair<int64_t, int64_t>, size_t> mine;
  Scratch first, second;
};

class NcclWorld final : public tprt_world_s, public CudaRanks {
public:
  explicit NcclWorld(bool overMpi) : overMpi(overMpi) {}

  ~NcclWorld() override {
    for (size_t i = 0; i < communicators.size(); ++i) {
      gpus[i].cu->cuCtxSetCurrent(gpus[i].context);
      communicators[i]->releaseScratch();
    }
    communicators.clear();
    for (auto &[key, comms] : groups.comms)
      for (ncclComm_t comm : comms)
        if (comm)
          nccl->ncclCommDestroy(comm);
    for (CudaRank &rank : gpus)
      destroyRank(rank);
    tprt_world_destroy(hostWorld);
  }

  tprt_status init(const tprt_mesh &mesh, std::chrono::milliseconds timeout) {
    const Driver *cu = nullptr;
    const Cublas *blas = nullptr;
    if (tprt_status s = loadDriver(&cu))
      return s;
    if (tprt_status s = loadCublas(&blas))
      return s;
    if (tprt_status s = loadNccl(&nccl))
      return s;
    int count = 0;
    if (CUresult r = cu->cuDeviceGetCount(&count); r != CUDA_SUCCESS)
      return cu->error(r, "cuDeviceGetCount");
    if (overMpi)
      return initOverMpi(mesh, timeout, cu, blas, count);
    int64_t ranksNeeded = tprt_mesh_num_devices(&mesh);
    if (ranksNeeded > count)
      return error(TPRT_INVALID_ARGUMENT,
                   "the 'nccl' backend runs one rank a "
                   "GPU: the mesh has ",
                   ranksNeeded, " ranks, this machine ", count,
                   " GPU(s) (the 'device' backend shares one GPU)");
    if (tprt_status s = createLocalWorld(mesh, timeout, &hostWorld))
      return s;
    ranks = hostWorld->localRanks();
    gpus.resize(ranks.size());
    for (size_t i = 0; i < ranks.size(); ++i) {
      ordinals.push_back(static_cast<int>(ranks[i]));
      if (tprt_status s =
              createRank(cu, blas, ranks[i], ordinals.back(), gpus[i]))
        return s;
    }
    for (size_t i = 0; i < ranks.size(); ++i)
      communicators.push_back(std::make_unique<NcclCommunicator>(
          nccl, hostWorld->communicator(ranks[i]), &gpus[i], &groups,
          &ordinals));
    return nullptr;
  }

  /// One rank a process: the `mpi` world underneath, this process's GPU.
  tprt_status initOverMpi(const tprt_mesh &mesh,
                          std::chrono::milliseconds timeout, const Driver *cu,
                          const Cublas *blas, int count) {
    if (count == 0)
      return error(TPRT_UNAVAILABLE,
                   "the CUDA driver found no GPU (cuDeviceGetCount is 0)");
    if (tprt_status s = createMpiWorld(mesh, timeout, &hostWorld))
      return s;
    ranks = hostWorld->localRanks();
    firstRank = ranks.front();
    groups.processes = hostWorld->processes();
    groups.timeout = timeout;
    // The GPU of this process's index among the job's processes on its node.
    int local = static_cast<int>(firstRank);
    for (const char *name :
         {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
      if (const char *value = std::getenv(name)) {
        local = std::atoi(value);
        break;
      }
    int ordinal = local % count;
    ordinals.assign(static_cast<size_t>(tprt_mesh_num_devices(&mesh)), -1);
    ordinals[static_cast<size_t>(firstRank)] = ordinal;
    gpus.resize(1);
    if (tprt_status s = createRank(cu, blas, firstRank, ordinal, gpus[0]))
      return s;
    communicators.push_back(std::make_unique<NcclCommunicator>(
        nccl, hostWorld->communicator(firstRank), &gpus[0], &groups,
        &ordinals));
    return nullptr;
  }

  // tprt_world_s
  const char *backend() const override { return overMpi ? "nccl-mpi" : "nccl"; }
  const tprt_mesh &mesh() const override { return hostWorld->mesh(); }
  const std::vector<int64_t> &localRanks() const override { return ranks; }
  tprt_communicator *communicator(int64_t rank) override {
    size_t index = static_cast<size_t>(rank - firstRank);
    return index < communicators.size() ? communicators[index].get() : nullptr;
  }
  DeviceRanks *device() override { return this; }
  Processes *processes() override {
    return overMpi ? hostWorld->processes() : nullptr;
  }

  tprt_status synchronize(int64_t rank) override {
    return communicators[static_cast<size_t>(rank - firstRank)]->waitStream();
  }

private:
  tprt_communicator *rankCommunicator(int64_t rank) override {
    return communicator(rank);
  }
  tprt_communicator *hostCommunicator(int64_t rank) override {
    return communicators[static_cast<size_t>(rank - firstRank)]
        ->hostCommunicator();
  }

  bool overMpi;
  const Nccl *nccl = nullptr;
  tprt_world *hostWorld = nullptr;
  std::vector<int64_t> ranks;
  std::vector<int> ordinals;
  Groups groups;
  std::vector<std::unique_ptr<NcclCommunicator>> communicators;
};

} // namespace

tprt_status tprt::createNcclWorld(const tprt_mesh &mesh,
                                  std::chrono::milliseconds timeout,
                                  tprt_world **world) {
  auto created = std::make_unique<NcclWorld>(/*overMpi=*/false);
  if (tprt_status s = created->init(mesh, timeout))
    return s;
  *world = created.release();
  return nullptr;
}

tprt_status tprt::createNcclMpiWorld(const tprt_mesh &mesh,
                                     std::chrono::milliseconds timeout,
                                     tprt_world **world) {
  auto created = std::make_unique<NcclWorld>(/*overMpi=*/true);
  if (tprt_status s = created->init(mesh, timeout))
    return s;
  *world = created.release();
  return nullptr;
}

#else

tprt_status tprt::createNcclWorld(const tprt_mesh &, std::chrono::milliseconds,
                                  tprt_world **) {
  return error(TPRT_UNAVAILABLE,
               "the 'nccl' backend needs CUDA: this libtprt was built "
               "without the CUDA headers");
}

tprt_status tprt::createNcclMpiWorld(const tprt_mesh &,
                                     std::chrono::milliseconds, tprt_world **) {
  return error(TPRT_UNAVAILABLE,
               "the 'nccl-mpi' backend needs CUDA: this libtprt was built "
               "without the CUDA headers");
}

#endif // TPRT_HAS_CUDA_HEADERS
