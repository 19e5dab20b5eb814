//===- CollectiveCall.h - What a member of a collective called -*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The members of a group must all make the same call; communicators compare
// their members' Calls (the `local` one in shared memory, `mpi` as bytes
// exchanged in the group) and name both sides of a mismatch.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_SRC_COLLECTIVECALL_H
#define TPRT_SRC_COLLECTIVECALL_H

#include "Internal.h"

#include <algorithm>
#include <sstream>
#include <string>

namespace tprt {

/// What a member called; every member of the group must call the same.
struct Call {
  tprt_collective_kind kind = TPRT_BARRIER;
  tprt_dtype dtype = TPRT_F32;
  tprt_reduction reduction = TPRT_SUM;
  int32_t rank = 0;
  int64_t shape[TPRT_MAX_TENSOR_RANK] = {};
  int32_t dim0 = 0, dim1 = 0;

  bool operator==(const Call &other) const {
    if (kind != other.kind || dtype != other.dtype ||
        reduction != other.reduction || rank != other.rank ||
        dim0 != other.dim0 || dim1 != other.dim1)
      return false;
    for (int32_t d = 0; d < rank; ++d)
      if (shape[d] != other.shape[d])
        return false;
    return true;
  }

  std::string str() const {
    std::ostringstream os;
    os << tprt_collective_kind_name(kind);
    if (kind == TPRT_BARRIER)
      return os.str();
    os << " of " << tprt_dtype_name(dtype) << formatShape(shape, rank);
    switch (kind) {
    case TPRT_ALL_REDUCE:
      os << " reduction " << reduction;
      break;
    case TPRT_ALL_GATHER:
      os << " dim " << dim0;
      break;
    case TPRT_REDUCE_SCATTER:
      os << " dim " << dim0 << " reduction " << reduction;
      break;
    case TPRT_ALL_TO_ALL:
      os << " split " << dim0 << " concat " << dim1;
      break;
    default:
      break;
    }
    return os.str();
  }
};

/// A call on a tensor of `shape`.
inline Call shapedCall(tprt_collective_kind kind, tprt_dtype dtype,
                       const int64_t *shape, int32_t rank) {
  Call call;
  call.kind = kind;
  call.dtype = dtype;
  call.rank = rank;
  std::copy(shape, shape + rank, call.shape);
  return call;
}

} // namespace tprt

#endif // TPRT_SRC_COLLECTIVECALL_H
