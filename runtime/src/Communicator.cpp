//===- Communicator.cpp - The C API of communicators ----------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Checks arguments once for every backend, then dispatches; keeps each rank's
// statistics.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

using namespace tprt;

namespace {

tprt_status checkCommon(const tprt_communicator *comm, const tprt_axes *axes,
                        tprt_dtype dtype, const char *what) {
  if (!comm)
    return error(TPRT_INVALID_ARGUMENT, what, ": communicator is null");
  if (tprt_status status = tprt_axes_check(&comm->mesh(), axes)) {
    tprt_status wrapped = error(tprt_status_code(status), what, ": ",
                                tprt_status_message(status));
    tprt_status_free(status);
    return wrapped;
  }
  if (!isValidDtype(dtype))
    return error(TPRT_INVALID_ARGUMENT, what, ": unknown dtype ",
                 static_cast<int>(dtype));
  return nullptr;
}

tprt_status checkShape(const int64_t *shape, int32_t rank, const char *what) {
  if (rank < 1 || rank > TPRT_MAX_TENSOR_RANK)
    return error(TPRT_INVALID_ARGUMENT, what, ": rank ", rank,
                 " is not in [1, ", TPRT_MAX_TENSOR_RANK, "]");
  for (int32_t d = 0; d < rank; ++d)
    if (shape[d] < 0)
      return error(TPRT_INVALID_ARGUMENT, what, ": shape ",
                   formatShape(shape, rank), " has a negative size");
  return nullptr;
}

tprt_status checkDim(int32_t dim, int32_t rank, const char *what,
                     const char *name) {
  if (dim < 0 || dim >= rank)
    return error(TPRT_INVALID_ARGUMENT, what, ": ", name, " ", dim,
                 " is not a dimension of a rank-", rank, " tensor");
  return nullptr;
}

tprt_status checkDivisible(const tprt_communicator *comm, const tprt_axes *axes,
                           const int64_t *shape, int32_t rank, int32_t dim,
                           const char *what) {
  int64_t n = tprt_group_size(&comm->mesh(), axes);
  if (shape[dim] % n != 0)
    return error(TPRT_INVALID_ARGUMENT, what, ": dimension ", dim, " of ",
                 formatShape(shape, rank), " is not divisible by ", n,
                 ", the size of the group over axes ", formatAxes(*axes));
  return nullptr;
}

/// `in` and `out` (of `inBytes` and `outBytes`) must not overlap, except
/// that all_reduce may work in place (`in == out`): members read each
/// other's inputs while they write their outputs.
tprt_status checkOverlap(const void *in, size_t inBytes, const void *out,
                         size_t outBytes, bool inPlaceAllowed,
                         const char *what) {
  auto a = reinterpret_cast<uintptr_t>(in),
       b = reinterpret_cast<uintptr_t>(out);
  if (inBytes == 0 || outBytes == 0 || a + inBytes <= b || b + outBytes <= a)
    return nullptr;
  if (inPlaceAllowed && a == b && inBytes == outBytes)
    return nullptr;
  return error(TPRT_INVALID_ARGUMENT, what,
               ": the output buffer overlaps the input buffer",
               inPlaceAllowed ? " (only exactly in place is allowed)"
                              : " (this collective cannot run in place)");
}

/// Runs `call`, counting it in the rank's statistics.
template <typename Call>
tprt_status counted(tprt_communicator *comm, tprt_collective_kind kind,
                    int64_t bytes, Call call) {
  Clock::time_point start = Clock::now();
  tprt_status status = call();
  comm->stats.calls[kind] += 1;
  comm->stats.bytes[kind] += bytes;
  comm->stats.seconds[kind] +=
      std::chrono::duration<double>(Clock::now() - start).count();
  return status;
}

} // namespace

extern "C" {

int64_t tprt_communicator_rank(const tprt_communicator *comm) {
  return comm->rank();
}

const tprt_mesh *tprt_communicator_mesh(const tprt_communicator *comm) {
  return &comm->mesh();
}

const char *tprt_communicator_backend(const tprt_communicator *comm) {
  return comm->backend();
}

tprt_status tprt_all_reduce(tprt_communicator *comm, const void *in, void *out,
                            int64_t count, tprt_dtype dtype,
                            tprt_reduction reduction, const tprt_axes *axes) {
  const char *what = "all_reduce";
  if (tprt_status status = checkCommon(comm, axes, dtype, what))
    return status;
  if (count < 0)
    return error(TPRT_INVALID_ARGUMENT, what, ": negative count ", count);
  if (!isValidReduction(reduction))
    return error(TPRT_INVALID_ARGUMENT, what, ": unknown reduction ",
                 static_cast<int>(reduction));
  size_t bytes = static_cast<size_t>(count) * tprt_dtype_size(dtype);
  if (tprt_status status = checkOverlap(in, bytes, out, bytes, true, what))
    return status;
  return counted(
      comm, TPRT_ALL_REDUCE,
      count * static_cast<int64_t>(tprt_dtype_size(dtype)),
      [&] { return comm->allReduce(in, out, count, dtype, reduction, *axes); });
}

tprt_status tprt_all_gather(tprt_communicator *comm, const void *in, void *out,
                            const int64_t *in_shape, int32_t rank, int32_t dim,
                            tprt_dtype dtype, const tprt_axes *axes) {
  const char *what = "all_gather";
  if (tprt_status status = checkCommon(comm, axes, dtype, what))
    return status;
  if (tprt_status status = checkShape(in_shape, rank, what))
    return status;
  if (tprt_status status = checkDim(dim, rank, what, "dim"))
    return status;
  size_t inBytes =
      static_cast<size_t>(product(in_shape, rank)) * tprt_dtype_size(dtype);
  if (tprt_status status = checkOverlap(
          in, inBytes, out,
          inBytes * static_cast<size_t>(tprt_group_size(&comm->mesh(), axes)),
          false, what))
    return status;
  return counted(
      comm, TPRT_ALL_GATHER,
      product(in_shape, rank) * static_cast<int64_t>(tprt_dtype_size(dtype)),
      [&] {
        return comm->allGather(in, out, in_shape, rank, dim, dtype, *axes);
      });
}

tprt_status tprt_reduce_scatter(tprt_communicator *comm, const void *in,
                                void *out, const int64_t *in_shape,
                                int32_t rank, int32_t dim, tprt_dtype dtype,
                                tprt_reduction reduction,
                                const tprt_axes *axes) {
  const char *what = "reduce_scatter";
  if (tprt_status status = checkCommon(comm, axes, dtype, what))
    return status;
  if (tprt_status status = checkShape(in_shape, rank, what))
    return status;
  if (tprt_status status = checkDim(dim, rank, what, "dim"))
    return status;
  if (tprt_status status =
          checkDivisible(comm, axes, in_shape, rank, dim, what))
    return status;
  if (!isValidReduction(reduction))
    return error(TPRT_INVALID_ARGUMENT, what, ": unknown reduction ",
                 static_cast<int>(reduction));
  size_t inBytes =
      static_cast<size_t>(product(in_shape, rank)) * tprt_dtype_size(dtype);
  if (tprt_status status = checkOverlap(
          in, inBytes, out,
          inBytes / static_cast<size_t>(tprt_group_size(&comm->mesh(), axes)),
          false, what))
    return status;
  return counted(comm, TPRT_REDUCE_SCATTER,
                 product(in_shape, rank) *
                     static_cast<int64_t>(tprt_dtype_size(dtype)),
                 [&] {
                   return comm->reduceScatter(in, out, in_shape, rank, dim,
                                              dtype, reduction, *axes);
                 });
}

tprt_status tprt_all_to_all(tprt_communicator *comm, const void *in, void *out,
                            const int64_t *in_shape, int32_t rank,
                            int32_t split_dim, int32_t concat_dim,
                            tprt_dtype dtype, const tprt_axes *axes) {
  const char *what = "all_to_all";
  if (tprt_status status = checkCommon(comm, axes, dtype, what))
    return status;
  if (tprt_status status = checkShape(in_shape, rank, what))
    return status;
  if (tprt_status status = checkDim(split_dim, rank, what, "split_dim"))
    return status;
  if (tprt_status status = checkDim(concat_dim, rank, what, "concat_dim"))
    return status;
  if (tprt_status status =
          checkDivisible(comm, axes, in_shape, rank, split_dim, what))
    return status;
  size_t bytes =
      static_cast<size_t>(product(in_shape, rank)) * tprt_dtype_size(dtype);
  if (tprt_status status = checkOverlap(in, bytes, out, bytes, false, what))
    return status;
  return counted(comm, TPRT_ALL_TO_ALL,
                 product(in_shape, rank) *
                     static_cast<int64_t>(tprt_dtype_size(dtype)),
                 [&] {
                   return comm->allToAll(in, out, in_shape, rank, split_dim,
                                         concat_dim, dtype, *axes);
                 });
}

tprt_status tprt_barrier(tprt_communicator *comm, const tprt_axes *axes) {
  if (tprt_status status = checkCommon(comm, axes, TPRT_F32, "barrier"))
    return status;
  return counted(comm, TPRT_BARRIER, 0, [&] { return comm->barrier(*axes); });
}

void tprt_communicator_abort(tprt_communicator *comm, tprt_status status) {
  if (comm)
    comm->abort(status);
}

void tprt_communicator_stats(const tprt_communicator *comm,
                             tprt_comm_stats *stats) {
  *stats = comm->stats;
}

void tprt_communicator_reset_stats(tprt_communicator *comm) {
  comm->stats = {};
}

const char *tprt_collective_kind_name(tprt_collective_kind kind) {
  switch (kind) {
  case TPRT_ALL_REDUCE:
    return "all_reduce";
  case TPRT_ALL_GATHER:
    return "all_gather";
  case TPRT_REDUCE_SCATTER:
    return "reduce_scatter";
  case TPRT_ALL_TO_ALL:
    return "all_to_all";
  case TPRT_BARRIER:
    return "barrier";
  case TPRT_NUM_COLLECTIVE_KINDS:
    break;
  }
  return "?";
}

} // extern "C"
