//===- Mesh.cpp - Meshes, groups, shards ----------------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <cstring>

using namespace tprt;

namespace tprt {

std::string formatShape(const int64_t *shape, int32_t rank) {
  std::ostringstream os;
  os << "[";
  for (int32_t d = 0; d < rank; ++d)
    os << (d ? ", " : "") << shape[d];
  os << "]";
  return os.str();
}

std::string formatAxes(const tprt_axes &axes) {
  std::ostringstream os;
  os << "[";
  for (int32_t i = 0; i < axes.count; ++i)
    os << (i ? ", " : "") << axes.axes[i];
  os << "]";
  return os.str();
}

std::vector<int64_t> coordinates(const tprt_mesh &mesh, int64_t device) {
  std::vector<int64_t> coords(static_cast<size_t>(mesh.rank));
  for (int32_t a = mesh.rank - 1; a >= 0; --a) {
    coords[a] = device % mesh.sizes[a];
    device /= mesh.sizes[a];
  }
  return coords;
}

int64_t deviceAt(const tprt_mesh &mesh, const std::vector<int64_t> &coords) {
  int64_t device = 0;
  for (int32_t a = 0; a < mesh.rank; ++a)
    device = device * mesh.sizes[a] + coords[a];
  return device;
}

std::vector<int64_t> groupMembers(const tprt_mesh &mesh, const tprt_axes &axes,
                                  int64_t device) {
  std::vector<int64_t> coords = coordinates(mesh, device);
  int64_t size = tprt_group_size(&mesh, &axes);
  std::vector<int64_t> members(static_cast<size_t>(size));
  for (int64_t position = 0; position < size; ++position) {
    int64_t rest = position;
    for (int32_t i = axes.count - 1; i >= 0; --i) {
      int32_t a = axes.axes[i];
      coords[a] = rest % mesh.sizes[a];
      rest /= mesh.sizes[a];
    }
    members[position] = deviceAt(mesh, coords);
  }
  return members;
}

} // namespace tprt

namespace {

/// Offsets of `device`'s block in the global tensor.
void blockOffset(const tprt_mesh &mesh, const tprt_sharding &sharding,
                 const int64_t *localShape, int64_t device, int64_t *offset) {
  for (int32_t d = 0; d < sharding.rank; ++d)
    offset[d] =
        tprt_group_position(&mesh, &sharding.dims[d], device) * localShape[d];
}

} // namespace

extern "C" {

int64_t tprt_mesh_num_devices(const tprt_mesh *mesh) {
  return product(mesh->sizes, mesh->rank);
}

tprt_status tprt_mesh_check(const tprt_mesh *mesh) {
  if (!mesh)
    return error(TPRT_INVALID_ARGUMENT, "mesh is null");
  if (mesh->rank < 1 || mesh->rank > TPRT_MAX_MESH_RANK)
    return error(TPRT_INVALID_ARGUMENT, "mesh rank ", mesh->rank,
                 " is not in [1, ", TPRT_MAX_MESH_RANK, "]");
  for (int32_t a = 0; a < mesh->rank; ++a)
    if (mesh->sizes[a] < 1)
      return error(TPRT_INVALID_ARGUMENT, "mesh axis ", a, " has size ",
                   mesh->sizes[a], "; expected at least 1");
  return nullptr;
}

tprt_status tprt_axes_check(const tprt_mesh *mesh, const tprt_axes *axes) {
  if (!axes)
    return error(TPRT_INVALID_ARGUMENT, "axes are null");
  if (axes->count < 0 || axes->count > mesh->rank)
    return error(TPRT_INVALID_ARGUMENT, "axis count ", axes->count,
                 " is not in [0, ", mesh->rank, "]");
  for (int32_t i = 0; i < axes->count; ++i) {
    int32_t a = axes->axes[i];
    if (a < 0 || a >= mesh->rank)
      return error(TPRT_INVALID_ARGUMENT, "axis ", a,
                   " is not an axis of a mesh of rank ", mesh->rank);
    for (int32_t j = 0; j < i; ++j)
      if (axes->axes[j] == a)
        return error(TPRT_INVALID_ARGUMENT, "axis ", a, " appears twice in ",
                     formatAxes(*axes));
  }
  return nullptr;
}

int64_t tprt_group_size(const tprt_mesh *mesh, const tprt_axes *axes) {
  int64_t n = 1;
  for (int32_t i = 0; i < axes->count; ++i)
    n *= mesh->sizes[axes->axes[i]];
  return n;
}

int64_t tprt_replica_leader(const tprt_mesh *mesh,
                            const tprt_sharding *sharding, int64_t device) {
  bool used[TPRT_MAX_MESH_RANK] = {};
  for (int32_t d = 0; d < sharding->rank; ++d)
    for (int32_t k = 0; k < sharding->dims[d].count; ++k)
      used[sharding->dims[d].axes[k]] = true;
  for (int32_t k = 0; k < sharding->partial.count; ++k)
    used[sharding->partial.axes[k]] = true;
  std::vector<int64_t> coords = coordinates(*mesh, device);
  int64_t leader = 0;
  for (int32_t a = 0; a < mesh->rank; ++a)
    leader = leader * mesh->sizes[a] + (used[a] ? coords[a] : 0);
  return leader;
}

int64_t tprt_group_position(const tprt_mesh *mesh, const tprt_axes *axes,
                            int64_t device) {
  std::vector<int64_t> coords = coordinates(*mesh, device);
  int64_t position = 0;
  for (int32_t i = 0; i < axes->count; ++i)
    position = position * mesh->sizes[axes->axes[i]] + coords[axes->axes[i]];
  return position;
}

tprt_status tprt_sharding_check(const tprt_mesh *mesh,
                                const tprt_sharding *sharding,
                                const int64_t *global_shape) {
  if (tprt_status status = tprt_mesh_check(mesh))
    return status;
  if (sharding->rank < 0 || sharding->rank > TPRT_MAX_TENSOR_RANK)
    return error(TPRT_INVALID_ARGUMENT, "sharding rank ", sharding->rank,
                 " is not in [0, ", TPRT_MAX_TENSOR_RANK, "]");
  bool used[TPRT_MAX_MESH_RANK] = {};
  auto use = [&](const tprt_axes &axes, const char *what) -> tprt_status {
    if (tprt_status status = tprt_axes_check(mesh, &axes))
      return status;
    for (int32_t i = 0; i < axes.count; ++i) {
      if (used[axes.axes[i]])
        return error(TPRT_INVALID_ARGUMENT, "mesh axis ", axes.axes[i],
                     " is used twice (again by ", what, ")");
      used[axes.axes[i]] = true;
    }
    return nullptr;
  };
  for (int32_t d = 0; d < sharding->rank; ++d) {
    std::string what = "dimension " + std::to_string(d);
    if (tprt_status status = use(sharding->dims[d], what.c_str()))
      return status;
    int64_t n = tprt_group_size(mesh, &sharding->dims[d]);
    if (global_shape[d] < 0 || global_shape[d] % n != 0)
      return error(TPRT_INVALID_ARGUMENT, "dimension ", d, " of size ",
                   global_shape[d], " is not divisible by ", n,
                   ", the size of its axes ", formatAxes(sharding->dims[d]));
  }
  return use(sharding->partial, "the partial axes");
}

void tprt_shard_shape(const tprt_mesh *mesh, const tprt_sharding *sharding,
                      const int64_t *global_shape, int64_t *local_shape) {
  for (int32_t d = 0; d < sharding->rank; ++d)
    local_shape[d] =
        global_shape[d] / tprt_group_size(mesh, &sharding->dims[d]);
}

tprt_status tprt_scatter_shard(const tprt_mesh *mesh,
                               const tprt_sharding *sharding,
                               const int64_t *global_shape, tprt_dtype dtype,
                               const void *global, int64_t device,
                               void *local) {
  if (tprt_status status = tprt_sharding_check(mesh, sharding, global_shape))
    return status;
  if (!isValidDtype(dtype))
    return error(TPRT_INVALID_ARGUMENT, "unknown dtype ",
                 static_cast<int>(dtype));
  if (device < 0 || device >= tprt_mesh_num_devices(mesh))
    return error(TPRT_INVALID_ARGUMENT, "device ", device,
                 " is not on a mesh of ", tprt_mesh_num_devices(mesh),
                 " devices");
  size_t elemSize = tprt_dtype_size(dtype);
  int32_t rank = sharding->rank;
  int64_t localShape[TPRT_MAX_TENSOR_RANK], offset[TPRT_MAX_TENSOR_RANK],
      zero[TPRT_MAX_TENSOR_RANK] = {};
  tprt_shard_shape(mesh, sharding, global_shape, localShape);
  if (tprt_group_position(mesh, &sharding->partial, device) != 0) {
    zeroBytes(local, static_cast<size_t>(product(localShape, rank)) * elemSize);
    return nullptr;
  }
  blockOffset(*mesh, *sharding, localShape, device, offset);
  copyBox(global, global_shape, offset, local, localShape, zero, localShape,
          rank, elemSize);
  return nullptr;
}

int32_t tprt_shard_contiguous(const tprt_mesh *mesh,
                              const tprt_sharding *sharding,
                              const int64_t *global_shape, int64_t device,
                              int64_t *element_offset) {
  if (tprt_status status = tprt_sharding_check(mesh, sharding, global_shape)) {
    tprt_status_free(status);
    return 0;
  }
  if (device < 0 || device >= tprt_mesh_num_devices(mesh) ||
      tprt_group_position(mesh, &sharding->partial, device) != 0)
    return 0;
  int32_t rank = sharding->rank;
  int64_t localShape[TPRT_MAX_TENSOR_RANK], offset[TPRT_MAX_TENSOR_RANK];
  tprt_shard_shape(mesh, sharding, global_shape, localShape);
  int32_t split = 0;
  while (split < rank && localShape[split] == global_shape[split])
    ++split;
  // A whole dimension of more than one element before the first split one,
  // or a split one after it, interleaves the shard with the others'.
  if (split < rank) {
    for (int32_t d = 0; d < split; ++d)
      if (global_shape[d] != 1)
        return 0;
    for (int32_t d = split + 1; d < rank; ++d)
      if (localShape[d] != global_shape[d])
        return 0;
  }
  blockOffset(*mesh, *sharding, localShape, device, offset);
  *element_offset = 0;
  for (int32_t d = 0; d < rank; ++d)
    *element_offset = *element_offset * global_shape[d] + offset[d];
  return 1;
}

tprt_status tprt_check_replicas(const tprt_mesh *mesh,
                                const tprt_sharding *sharding, tprt_dtype dtype,
                                const void *const *shards, size_t bytes,
                                const char *what) {
  if (!mesh || !sharding || !shards)
    return error(TPRT_INVALID_ARGUMENT,
                 "tprt_check_replicas: mesh, sharding or shards is null");
  size_t elem = std::max<size_t>(tprt_dtype_size(dtype), 1);
  int64_t devices = tprt_mesh_num_devices(mesh);
  for (int64_t d = 0; d < devices; ++d) {
    int64_t leader = tprt_replica_leader(mesh, sharding, d);
    if (leader == d || bytes == 0 ||
        std::memcmp(shards[d], shards[leader], bytes) == 0)
      continue;
    const char *mine = static_cast<const char *>(shards[d]);
    const char *theirs = static_cast<const char *>(shards[leader]);
    size_t at = 0;
    while (at < bytes && mine[at] == theirs[at])
      ++at;
    return error(TPRT_MISMATCH, what ? what : "tensor", ": devices ", leader,
                 " and ", d,
                 " hold the same shard (replicas) but their copies differ, "
                 "first at element ",
                 at / elem, " of the shard: the program broke its sharding");
  }
  return nullptr;
}

tprt_status tprt_gather_shards(const tprt_mesh *mesh,
                               const tprt_sharding *sharding,
                               const int64_t *global_shape, tprt_dtype dtype,
                               const void *const *shards, void *global) {
  if (tprt_status status = tprt_sharding_check(mesh, sharding, global_shape))
    return status;
  if (!isValidDtype(dtype))
    return error(TPRT_INVALID_ARGUMENT, "unknown dtype ",
                 static_cast<int>(dtype));
  size_t elemSize = tprt_dtype_size(dtype);
  int32_t rank = sharding->rank;
  int64_t localShape[TPRT_MAX_TENSOR_RANK], offset[TPRT_MAX_TENSOR_RANK],
      zero[TPRT_MAX_TENSOR_RANK] = {};
  tprt_shard_shape(mesh, sharding, global_shape, localShape);
  int64_t localCount = product(localShape, rank);
  // Axes that neither split a dimension nor sum: their devices hold replicas.
  bool meaningful[TPRT_MAX_MESH_RANK] = {};
  for (int32_t d = 0; d < rank; ++d)
    for (int32_t i = 0; i < sharding->dims[d].count; ++i)
      meaningful[sharding->dims[d].axes[i]] = true;
  for (int32_t i = 0; i < sharding->partial.count; ++i)
    meaningful[sharding->partial.axes[i]] = true;
  // A pending sum: add the terms of each block in a scratch shard.
  bool isPartial = sharding->partial.count > 0;
  std::vector<char> sum;
  for (int64_t device = 0; device < tprt_mesh_num_devices(mesh); ++device) {
    std::vector<int64_t> coords = coordinates(*mesh, device);
    bool representative = true;
    for (int32_t a = 0; a < mesh->rank; ++a)
      if (!meaningful[a] && coords[a] != 0)
        representative = false;
    if (!representative ||
        tprt_group_position(mesh, &sharding->partial, device) != 0)
      continue;
    const void *block = shards[device];
    if (isPartial) {
      std::vector<int64_t> terms =
          groupMembers(*mesh, sharding->partial, device);
      std::vector<const void *> sources;
      for (int64_t t : terms)
        sources.push_back(shards[t]);
      sum.resize(static_cast<size_t>(localCount) * elemSize);
      reduceInto(dtype, TPRT_SUM, sum.data(), sources.data(),
                 static_cast<int64_t>(sources.size()), localCount);
      block = sum.data();
    }
    blockOffset(*mesh, *sharding, localShape, device, offset);
    copyBox(block, localShape, zero, global, global_shape, offset, localShape,
            rank, elemSize);
  }
  return nullptr;
}

} // extern "C"
