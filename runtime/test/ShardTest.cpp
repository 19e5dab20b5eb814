//===- ShardTest.cpp - Scattering and gathering by sharding ---------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tprt/tprt.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

namespace {

tprt_axes axesOf(std::vector<int32_t> list) {
  tprt_axes axes{static_cast<int32_t>(list.size()), {}};
  std::copy(list.begin(), list.end(), axes.axes);
  return axes;
}

tprt_sharding shardingOf(std::vector<std::vector<int32_t>> dims,
                         std::vector<int32_t> partial = {}) {
  tprt_sharding s{};
  s.rank = static_cast<int32_t>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d)
    s.dims[d] = axesOf(dims[d]);
  s.partial = axesOf(partial);
  return s;
}

const tprt_mesh kGrid = {2, {2, 2}}; // axes 0 ("x") and 1 ("y")

TEST(ShardTest, GroupsFollowTheListedAxisOrder) {
  tprt_axes xy = axesOf({0, 1}), yx = axesOf({1, 0});
  // Device 1 is (x=0, y=1).
  EXPECT_EQ(tprt_group_position(&kGrid, &xy, 1), 1);
  EXPECT_EQ(tprt_group_position(&kGrid, &yx, 1), 2);
  EXPECT_EQ(tprt_group_size(&kGrid, &xy), 4);
}

TEST(ShardTest, ReplicasShareTheFirstDeviceOfTheirShard) {
  // Split over x: devices (x, y) and (x, 0) hold the same rows.
  tprt_sharding rows = shardingOf({{0}, {}});
  EXPECT_EQ(tprt_replica_leader(&kGrid, &rows, 0), 0);
  EXPECT_EQ(tprt_replica_leader(&kGrid, &rows, 1), 0);
  EXPECT_EQ(tprt_replica_leader(&kGrid, &rows, 2), 2);
  EXPECT_EQ(tprt_replica_leader(&kGrid, &rows, 3), 2);
  // A pending sum over y is not replicated over y: each term is its own.
  tprt_sharding partial = shardingOf({{}, {}}, {1});
  EXPECT_EQ(tprt_replica_leader(&kGrid, &partial, 1), 1);
  EXPECT_EQ(tprt_replica_leader(&kGrid, &partial, 3), 1);
  // Fully replicated: every device holds device 0's copy.
  tprt_sharding replicated = shardingOf({{}, {}});
  for (int64_t device = 0; device < 4; ++device)
    EXPECT_EQ(tprt_replica_leader(&kGrid, &replicated, device), 0);
}

TEST(ShardTest, ShardShapes) {
  int64_t global[2] = {8, 6};
  int64_t local[2];
  tprt_sharding s = shardingOf({{0, 1}, {}});
  tprt_shard_shape(&kGrid, &s, global, local);
  EXPECT_EQ(local[0], 2);
  EXPECT_EQ(local[1], 6);
}

/// Scatters a global 8x8 tensor over the grid by `s`, checks each block
/// against the reference, gathers it back and compares.
void roundTrip(const tprt_sharding &s) {
  int64_t global[2] = {8, 8};
  std::vector<float> data(64);
  std::iota(data.begin(), data.end(), 1.0f);
  int64_t local[2];
  tprt_shard_shape(&kGrid, &s, global, local);
  std::vector<std::vector<float>> shards(
      4, std::vector<float>(local[0] * local[1]));
  for (int64_t device = 0; device < 4; ++device) {
    tprt_status status =
        tprt_scatter_shard(&kGrid, &s, global, TPRT_F32, data.data(), device,
                           shards[device].data());
    ASSERT_EQ(status, nullptr) << tprt_status_message(status);
    // Reference: the block at each dim's position times its size; a pending
    // sum puts the value on the first member only.
    bool holdsValue = tprt_group_position(&kGrid, &s.partial, device) == 0;
    for (int64_t i = 0; i < local[0]; ++i)
      for (int64_t j = 0; j < local[1]; ++j) {
        int64_t gi =
            tprt_group_position(&kGrid, &s.dims[0], device) * local[0] + i;
        int64_t gj =
            tprt_group_position(&kGrid, &s.dims[1], device) * local[1] + j;
        ASSERT_EQ(shards[device][i * local[1] + j],
                  holdsValue ? data[gi * 8 + gj] : 0.0f)
            << "device " << device;
      }
    // A shard said to be contiguous is the run of the global tensor there.
    int64_t offset = -1;
    if (tprt_shard_contiguous(&kGrid, &s, global, device, &offset)) {
      ASSERT_TRUE(holdsValue);
      ASSERT_GE(offset, 0);
      ASSERT_LE(offset + local[0] * local[1], 64);
      EXPECT_TRUE(std::equal(shards[device].begin(), shards[device].end(),
                             data.begin() + offset))
          << "device " << device;
    }
  }
  // Make the pending sum non-trivial: the first term keeps 3/4 of each
  // value, the second gets 1/4 (replicas, which share their position in the
  // partial group, stay equal).
  if (s.partial.count > 0) {
    ASSERT_EQ(tprt_group_size(&kGrid, &s.partial), 2);
    for (int64_t device = 0; device < 4; ++device) {
      int64_t first = device;
      for (int64_t d = 0; d < 4; ++d) {
        bool sameBlock = tprt_group_position(&kGrid, &s.partial, d) == 0;
        for (int32_t dim = 0; dim < 2; ++dim)
          sameBlock &= tprt_group_position(&kGrid, &s.dims[dim], d) ==
                       tprt_group_position(&kGrid, &s.dims[dim], device);
        if (sameBlock)
          first = d;
      }
      bool isFirst = tprt_group_position(&kGrid, &s.partial, device) == 0;
      for (size_t k = 0; k < shards[device].size(); ++k)
        shards[device][k] = shards[first][k] * (isFirst ? 1.0f : 0.25f);
    }
    for (int64_t device = 0; device < 4; ++device)
      if (tprt_group_position(&kGrid, &s.partial, device) == 0)
        for (float &v : shards[device])
          v *= 0.75f;
  }
  std::vector<const void *> pointers;
  for (auto &shard : shards)
    pointers.push_back(shard.data());
  std::vector<float> back(64, -1);
  tprt_status status = tprt_gather_shards(&kGrid, &s, global, TPRT_F32,
                                          pointers.data(), back.data());
  ASSERT_EQ(status, nullptr) << tprt_status_message(status);
  EXPECT_EQ(back, data);
}

TEST(ShardTest, RoundTripsEveryKindOfSharding) {
  roundTrip(shardingOf({{}, {}}));
  roundTrip(shardingOf({{0}, {}}));
  roundTrip(shardingOf({{}, {1}}));
  roundTrip(shardingOf({{0}, {1}}));
  roundTrip(shardingOf({{1}, {0}}));
  roundTrip(shardingOf({{0, 1}, {}}));
  roundTrip(shardingOf({{1, 0}, {}}));
  roundTrip(shardingOf({{}, {}}, {0}));
  roundTrip(shardingOf({{1}, {}}, {0}));
}

TEST(ShardTest, ContiguousShardsAreWholeOrSplitAlongTheLeadingDimension) {
  int64_t global[2] = {8, 8}, offset = -1;
  auto contiguous = [&](const tprt_sharding &s, int64_t device) {
    offset = -1;
    return tprt_shard_contiguous(&kGrid, &s, global, device, &offset) != 0;
  };
  tprt_sharding replicated = shardingOf({{}, {}});
  EXPECT_TRUE(contiguous(replicated, 3));
  EXPECT_EQ(offset, 0);
  // Rows over x: device 2 (x=1) starts at row 4.
  tprt_sharding rows = shardingOf({{0}, {}});
  EXPECT_TRUE(contiguous(rows, 2));
  EXPECT_EQ(offset, 32);
  // Rows over (y, x): device 1 (y=1) is the third block of 2 rows.
  tprt_sharding rowsYX = shardingOf({{1, 0}, {}});
  EXPECT_TRUE(contiguous(rowsYX, 1));
  EXPECT_EQ(offset, 32);
  // Columns interleave with the other devices' columns.
  EXPECT_FALSE(contiguous(shardingOf({{}, {1}}), 0));
  EXPECT_FALSE(contiguous(shardingOf({{0}, {1}}), 0));
  // A leading dimension of one element: a split of the next one is a run.
  int64_t oneRow[2] = {1, 8};
  tprt_sharding cols = shardingOf({{}, {0}});
  EXPECT_TRUE(tprt_shard_contiguous(&kGrid, &cols, oneRow, 2, &offset));
  EXPECT_EQ(offset, 4);
  // A pending sum's zero terms are not the caller's values.
  tprt_sharding partial = shardingOf({{}, {}}, {1});
  EXPECT_TRUE(contiguous(partial, 0));
  EXPECT_FALSE(contiguous(partial, 1));
  // A bad sharding or device is never contiguous.
  EXPECT_FALSE(contiguous(shardingOf({{0}, {0}}), 0));
  EXPECT_FALSE(contiguous(rows, 4));
}

TEST(ShardTest, BadShardingsAreRejected) {
  int64_t global[2] = {6, 8};
  std::vector<float> data(48), local(48);
  struct Case {
    tprt_sharding sharding;
    const char *needle;
  } cases[] = {
      {shardingOf({{0, 1}, {}}), "dimension 0 of size 6 is not divisible by 4"},
      {shardingOf({{0}, {0}}), "mesh axis 0 is used twice"},
      {shardingOf({{}, {1}}, {1}), "mesh axis 1 is used twice"},
      {shardingOf({{2}, {}}), "axis 2 is not an axis"},
  };
  for (Case &c : cases) {
    tprt_status status = tprt_scatter_shard(
        &kGrid, &c.sharding, global, TPRT_F32, data.data(), 0, local.data());
    EXPECT_EQ(tprt_status_code(status), TPRT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(tprt_status_message(status)).find(c.needle),
              std::string::npos)
        << tprt_status_message(status);
    tprt_status_free(status);
  }
  tprt_sharding fine = shardingOf({{}, {}});
  tprt_status status = tprt_scatter_shard(&kGrid, &fine, global, TPRT_F32,
                                          data.data(), 4, local.data());
  EXPECT_EQ(tprt_status_code(status), TPRT_INVALID_ARGUMENT);
  tprt_status_free(status);
}

} // namespace
