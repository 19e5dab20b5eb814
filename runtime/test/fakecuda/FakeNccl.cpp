//===- FakeNccl.cpp - A counting fake of libnccl.so.2 ---------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The NCCL entry points libtprt uses, counted: communicators are made at
// once (no rendezvous), a collective checks its communicator and that its
// buffers lie in device memory (the fake driver's allocations), and moves
// nothing. See FakeCuda.h.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"

#include <nccl.h>

#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace {

struct Comm {
  int ranks, rank;
};

std::mutex mutex;
std::map<const void *, Comm> comms;

ncclResult_t fail(const char *call, ncclResult_t result) {
  tprtFakeCount((std::string("error.") + call).c_str(), 1);
  return result;
}

bool find(ncclComm_t comm, Comm &out) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = comms.find(comm);
  if (it == comms.end())
    return false;
  out = it->second;
  return true;
}

ncclComm_t make(int ranks, int rank) {
  auto *handle = new char(0);
  std::lock_guard<std::mutex> lock(mutex);
  comms[handle] = {ranks, rank};
  return reinterpret_cast<ncclComm_t>(handle);
}

size_t sizeOf(ncclDataType_t type) {
  switch (type) {
  case ncclInt8:
  case ncclUint8:
    return 1;
  case ncclFloat16:
  case ncclBfloat16:
    return 2;
  case ncclInt32:
  case ncclUint32:
  case ncclFloat32:
    return 4;
  case ncclInt64:
  case ncclUint64:
  case ncclFloat64:
    return 8;
  default:
    return 0;
  }
}

/// The checks of a collective: its communicator, its type, its buffers in
/// device memory (`sendCount` and `recvCount` elements).
ncclResult_t collective(const char *call, const void *send, size_t sendCount,
                        const void *recv, size_t recvCount, ncclDataType_t type,
                        ncclComm_t comm, cudaStream_t stream, Comm &c) {
  tprtFakeCount(call, 1);
  if (!find(comm, c))
    return fail(call, ncclInvalidArgument);
  size_t size = sizeOf(type);
  if (!size)
    return fail(call, ncclInvalidArgument);
  tprtFakeCount((std::string("bytes.") + call).c_str(),
                static_cast<long long>(sendCount * size));
  if ((sendCount && !tprtFakeIsDevice(reinterpret_cast<uintptr_t>(send),
                                      sendCount * size)) ||
      (recvCount &&
       !tprtFakeIsDevice(reinterpret_cast<uintptr_t>(recv), recvCount * size)))
    return fail(call, ncclInvalidArgument);
  // NCCL's kernels are captured like any other work on the stream.
  FakeRange ranges[] = {{reinterpret_cast<uintptr_t>(send), sendCount * size},
                        {reinterpret_cast<uintptr_t>(recv), recvCount * size}};
  tprtFakeCapture(stream, call, ranges, 2);
  return ncclSuccess;
}

} // namespace

extern "C" {

ncclResult_t ncclGetVersion(int *version) {
  *version = 22809;
  return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t) {
  return "reported by the counting fake of NCCL";
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  tprtFakeCount("ncclGetUniqueId", 1);
  std::memset(id, 0, sizeof(*id));
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int ranks, ncclUniqueId,
                              int rank) {
  tprtFakeCount("ncclCommInitRank", 1);
  if (rank < 0 || rank >= ranks)
    return fail("ncclCommInitRank", ncclInvalidArgument);
  *comm = make(ranks, rank);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int ranks,
                                    ncclUniqueId id, int rank, ncclConfig_t *) {
  tprtFakeCount("ncclCommInitRankConfig", 1);
  if (rank < 0 || rank >= ranks)
    return fail("ncclCommInitRankConfig", ncclInvalidArgument);
  *comm = make(ranks, rank);
  return ncclSuccess;
}

ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev, const int *) {
  tprtFakeCount("ncclCommInitAll", 1);
  for (int r = 0; r < ndev; ++r)
    comm[r] = make(ndev, r);
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  tprtFakeCount("ncclCommDestroy", 1);
  std::lock_guard<std::mutex> lock(mutex);
  if (!comms.erase(comm))
    return fail("ncclCommDestroy", ncclInvalidArgument);
  delete reinterpret_cast<char *>(comm);
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  tprtFakeCount("ncclCommAbort", 1);
  std::lock_guard<std::mutex> lock(mutex);
  if (!comm)
    return ncclSuccess;
  if (!comms.erase(comm))
    return fail("ncclCommAbort", ncclInvalidArgument);
  delete reinterpret_cast<char *>(comm);
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *state) {
  Comm c;
  if (!find(comm, c))
    return fail("ncclCommGetAsyncError", ncclInvalidArgument);
  *state = ncclSuccess;
  return ncclSuccess;
}

ncclResult_t ncclGroupStart() {
  tprtFakeCount("ncclGroupStart", 1);
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  tprtFakeCount("ncclGroupEnd", 1);
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                           ncclDataType_t type, ncclRedOp_t, ncclComm_t comm,
                           cudaStream_t stream) {
  Comm c;
  return collective("ncclAllReduce", send, count, recv, count, type, comm,
                    stream, c);
}

ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t count,
                               ncclDataType_t type, ncclRedOp_t,
                               ncclComm_t comm, cudaStream_t stream) {
  Comm c;
  if (!find(comm, c))
    return fail("ncclReduceScatter", ncclInvalidArgument);
  return collective("ncclReduceScatter", send, count * c.ranks, recv, count,
                    type, comm, stream, c);
}

ncclResult_t ncclAllGather(const void *send, void *recv, size_t count,
                           ncclDataType_t type, ncclComm_t comm,
                           cudaStream_t stream) {
  Comm c;
  if (!find(comm, c))
    return fail("ncclAllGather", ncclInvalidArgument);
  return collective("ncclAllGather", send, count, recv, count * c.ranks, type,
                    comm, stream, c);
}

ncclResult_t ncclSend(const void *send, size_t count, ncclDataType_t type,
                      int peer, ncclComm_t comm, cudaStream_t stream) {
  Comm c;
  ncclResult_t r =
      collective("ncclSend", send, count, nullptr, 0, type, comm, stream, c);
  if (r == ncclSuccess && (peer < 0 || peer >= c.ranks))
    return fail("ncclSend", ncclInvalidArgument);
  return r;
}

ncclResult_t ncclRecv(void *recv, size_t count, ncclDataType_t type, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  Comm c;
  ncclResult_t r =
      collective("ncclRecv", nullptr, 0, recv, count, type, comm, stream, c);
  if (r == ncclSuccess && (peer < 0 || peer >= c.ranks))
    return fail("ncclRecv", ncclInvalidArgument);
  return r;
}

} // extern "C"
