//===- CommunicatorConformance.cpp - Every backend, same tests ------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What every communicator must do, through the C API only: each collective
// over every group of axes (in both orders) of 1-D to 3-D meshes, with the
// results computed here independently (groups by brute force over device
// coordinates); dtypes and reductions; mismatched calls, failed ranks and
// missing ranks end every rank's call with an error, never a hang.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <thread>

using namespace tprt::test;

namespace {

//===----------------------------------------------------------------------===//
// Reference model
//===----------------------------------------------------------------------===//

std::vector<int64_t> coordsOf(const tprt_mesh &mesh, int64_t device) {
  std::vector<int64_t> c(mesh.rank);
  for (int32_t a = mesh.rank - 1; a >= 0; --a) {
    c[a] = device % mesh.sizes[a];
    device /= mesh.sizes[a];
  }
  return c;
}

int64_t positionOf(const tprt_mesh &mesh, const tprt_axes &axes,
                   int64_t device) {
  std::vector<int64_t> c = coordsOf(mesh, device);
  int64_t p = 0;
  for (int32_t i = 0; i < axes.count; ++i)
    p = p * mesh.sizes[axes.axes[i]] + c[axes.axes[i]];
  return p;
}

/// Devices sharing `device`'s coordinates off `axes`, in group order.
std::vector<int64_t> membersOf(const tprt_mesh &mesh, const tprt_axes &axes,
                               int64_t device) {
  std::vector<int64_t> mine = coordsOf(mesh, device), members;
  for (int64_t d = 0; d < tprt_mesh_num_devices(&mesh); ++d) {
    std::vector<int64_t> c = coordsOf(mesh, d);
    bool same = true;
    for (int32_t a = 0; a < mesh.rank; ++a) {
      bool listed = std::find(axes.axes, axes.axes + axes.count, a) !=
                    axes.axes + axes.count;
      if (!listed && c[a] != mine[a])
        same = false;
    }
    if (same)
      members.push_back(d);
  }
  std::sort(members.begin(), members.end(), [&](int64_t a, int64_t b) {
    return positionOf(mesh, axes, a) < positionOf(mesh, axes, b);
  });
  return members;
}

/// Every ordered list of distinct axes of a mesh of rank `rank`, the empty
/// one included.
std::vector<tprt_axes> allAxisLists(int32_t rank) {
  std::vector<tprt_axes> lists;
  for (uint32_t mask = 0; mask < (1u << rank); ++mask) {
    std::vector<int32_t> axes;
    for (int32_t a = 0; a < rank; ++a)
      if (mask & (1u << a))
        axes.push_back(a);
    do {
      tprt_axes list{static_cast<int32_t>(axes.size()), {}};
      std::copy(axes.begin(), axes.end(), list.axes);
      lists.push_back(list);
    } while (std::next_permutation(axes.begin(), axes.end()));
  }
  return lists;
}

std::string str(const tprt_axes &axes) {
  std::string s = "[";
  for (int32_t i = 0; i < axes.count; ++i)
    s += (i ? "," : "") + std::to_string(axes.axes[i]);
  return s + "]";
}

/// Small integers: exact in every dtype and under every reduction here.
float valueOf(int64_t rank, int64_t i) {
  return static_cast<float>((rank * 7 + i * 3) % 11 + 1);
}

tprt_mesh makeMesh(std::vector<int64_t> sizes) {
  tprt_mesh mesh{static_cast<int32_t>(sizes.size()), {}};
  std::copy(sizes.begin(), sizes.end(), mesh.sizes);
  return mesh;
}

const std::vector<std::vector<int64_t>> kMeshes = {
    {1}, {2}, {4}, {8}, {2, 2}, {2, 4}, {4, 2}, {2, 2, 2}};

/// Fails the test with the status's message; frees it.
#define EXPECT_OK(expr)                                                        \
  do {                                                                         \
    tprt_status s_ = (expr);                                                   \
    EXPECT_EQ(tprt_status_code(s_), TPRT_OK) << tprt_status_message(s_);       \
    tprt_status_free(s_);                                                      \
  } while (0)

/// Skips a test whose mesh the harness cannot run (an MPI job too small).
#define SKIP_UNLESS_FITS(mesh)                                                 \
  do {                                                                         \
    if (!harness().fits(mesh))                                                 \
      GTEST_SKIP() << "a mesh of " << tprt_mesh_num_devices(&(mesh))           \
                   << " devices: more ranks than " << harness().name()         \
                   << " has here";                                             \
  } while (0)

class Conformance : public ::testing::TestWithParam<std::shared_ptr<Harness>> {
protected:
  Harness &harness() { return *GetParam(); }
  void SetUp() override {
    // The largest mesh of the suite has 8 ranks.
    if (std::string why = harness().unavailable(8); !why.empty())
      GTEST_SKIP() << why;
  }
  /// A generous timeout for runs that must succeed.
  static constexpr int64_t kTimeoutMs = 30000;
};

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

TEST_P(Conformance, AllReduceSumOverEveryGroup) {
  for (const std::vector<int64_t> &sizes : kMeshes) {
    tprt_mesh mesh = makeMesh(sizes);
    if (!harness().fits(mesh))
      continue;
    for (const tprt_axes &axes : allAxisLists(mesh.rank)) {
      // An uneven count, one smaller than the group, and nothing.
      for (int64_t count : {1000, 3, 0}) {
        SCOPED_TRACE("mesh rank " + std::to_string(mesh.rank) + " axes " +
                     str(axes) + " count " + std::to_string(count));
        harness().run(mesh, kTimeoutMs, [&](tprt_communicator *comm) {
          int64_t r = tprt_communicator_rank(comm);
          std::vector<float> in(count), out(count, -1);
          for (int64_t i = 0; i < count; ++i)
            in[i] = valueOf(r, i);
          EXPECT_OK(tprt_all_reduce(comm, in.data(), out.data(), count,
                                    TPRT_F32, TPRT_SUM, &axes));
          std::vector<int64_t> members = membersOf(mesh, axes, r);
          for (int64_t i = 0; i < count; ++i) {
            float expected = 0;
            for (int64_t m : members)
              expected += valueOf(m, i);
            ASSERT_EQ(out[i], expected) << "rank " << r << " element " << i;
          }
        });
      }
    }
  }
}

TEST_P(Conformance, AllReduceInPlaceAndEveryReduction) {
  tprt_mesh mesh = makeMesh({2, 4});
  SKIP_UNLESS_FITS(mesh);
  tprt_axes axes{2, {1, 0}};
  for (tprt_reduction reduction : {TPRT_SUM, TPRT_MAX, TPRT_MIN, TPRT_PROD}) {
    SCOPED_TRACE("reduction " + std::to_string(reduction));
    harness().run(mesh, kTimeoutMs, [&](tprt_communicator *comm) {
      int64_t r = tprt_communicator_rank(comm);
      const int64_t count = 37;
      std::vector<float> buf(count);
      for (int64_t i = 0; i < count; ++i)
        buf[i] = reduction == TPRT_PROD ? static_cast<float>((r + i) % 3 + 1)
                                        : valueOf(r, i);
      std::vector<float> original = buf;
      EXPECT_OK(tprt_all_reduce(comm, buf.data(), buf.data(), count, TPRT_F32,
                                reduction, &axes));
      for (int64_t i = 0; i < count; ++i) {
        float expected = reduction == TPRT_SUM    ? 0
                         : reduction == TPRT_PROD ? 1
                         : reduction == TPRT_MAX  ? -1e30f
                                                  : 1e30f;
        for (int64_t m = 0; m < 8; ++m) {
          float v = reduction == TPRT_PROD ? static_cast<float>((m + i) % 3 + 1)
                                           : valueOf(m, i);
          switch (reduction) {
          case TPRT_SUM:
            expected += v;
            break;
          case TPRT_PROD:
            expected *= v;
            break;
          case TPRT_MAX:
            expected = std::max(expected, v);
            break;
          case TPRT_MIN:
            expected = std::min(expected, v);
            break;
          }
        }
        ASSERT_EQ(buf[i], expected) << "rank " << r << " element " << i;
      }
    });
  }
}

/// Bits of the integer `n` (0 < n <= 2048) in IEEE half precision.
uint16_t halfOf(int n) {
  int e = 0;
  while ((2 << e) <= n)
    ++e;
  return static_cast<uint16_t>(((e + 15) << 10) | ((n - (1 << e)) << (10 - e)));
}

/// Bits of `f` in bfloat16 (exact for small integers).
uint16_t bf16Of(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);
}

TEST_P(Conformance, AllReduceEveryDtype) {
  tprt_mesh mesh = makeMesh({4});
  SKIP_UNLESS_FITS(mesh);
  tprt_axes axes{1, {0}};
  const int64_t count = 9;
  for (tprt_dtype dtype : {TPRT_F64, TPRT_I32, TPRT_I64, TPRT_F16, TPRT_BF16}) {
    SCOPED_TRACE(tprt_dtype_name(dtype));
    harness().run(mesh, kTimeoutMs, [&](tprt_communicator *comm) {
      int64_t r = tprt_communicator_rank(comm);
      size_t size = tprt_dtype_size(dtype);
      std::vector<char> in(count * size), out(count * size), want(count * size);
      auto store = [&](std::vector<char> &buf, int64_t i, int v) {
        switch (dtype) {
        case TPRT_F64: {
          double d = v;
          std::memcpy(&buf[i * size], &d, size);
          break;
        }
        case TPRT_I32: {
          int32_t x = v;
          std::memcpy(&buf[i * size], &x, size);
          break;
        }
        case TPRT_I64: {
          int64_t x = v;
          std::memcpy(&buf[i * size], &x, size);
          break;
        }
        case TPRT_F16: {
          uint16_t x = halfOf(v);
          std::memcpy(&buf[i * size], &x, size);
          break;
        }
        case TPRT_BF16: {
          uint16_t x = bf16Of(static_cast<float>(v));
          std::memcpy(&buf[i * size], &x, size);
          break;
        }
        default:
          break;
        }
      };
      for (int64_t i = 0; i < count; ++i) {
        store(in, i, static_cast<int>(valueOf(r, i)));
        int sum = 0;
        for (int64_t m = 0; m < 4; ++m)
          sum += static_cast<int>(valueOf(m, i));
        store(want, i, sum);
      }
      EXPECT_OK(tprt_all_reduce(comm, in.data(), out.data(), count, dtype,
                                TPRT_SUM, &axes));
      EXPECT_EQ(out, want) << "rank " << r;
    });
  }
}

/// The tensor of `shape` whose element at flat index i is valueOf(rank, i).
std::vector<float> tensorOf(int64_t rank, const std::vector<int64_t> &shape) {
  int64_t n = std::accumulate(shape.begin(), shape.end(), int64_t(1),
                              std::multiplies<int64_t>());
  std::vector<float> t(n);
  for (int64_t i = 0; i < n; ++i)
    t[i] = valueOf(rank, i);
  return t;
}

/// Flat index of `index` in a row-major tensor of `shape`.
int64_t flat(const std::vector<int64_t> &shape,
             const std::vector<int64_t> &index) {
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    f = f * shape[d] + index[d];
  return f;
}

/// Calls `fn(index)` for every index of `shape`.
void forEachIndex(const std::vector<int64_t> &shape,
                  const std::function<void(const std::vector<int64_t> &)> &fn) {
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t n : shape)
    if (n == 0)
      return;
  while (true) {
    fn(index);
    int64_t d = static_cast<int64_t>(shape.size()) - 1;
    while (d >= 0 && ++index[d] == shape[d])
      index[d--] = 0;
    if (d < 0)
      return;
  }
}

TEST_P(Conformance, AllGatherEveryDim) {
  for (const std::vector<int64_t> &sizes :
       std::vector<std::vector<int64_t>>{{4}, {2, 2}, {2, 4}, {2, 2, 2}}) {
    tprt_mesh mesh = makeMesh(sizes);
    if (!harness().fits(mesh))
      continue;
    for (const tprt_axes &axes : allAxisLists(mesh.rank)) {
      std::vector<int64_t> shape = {2, 3, 4};
      for (int32_t dim = 0; dim < 3; ++dim) {
        SCOPED_TRACE("axes " + str(axes) + " dim " + std::to_string(dim));
        harness().run(mesh, kTimeoutMs, [&](tprt_communicator *comm) {
          int64_t r = tprt_communicator_rank(comm);
          std::vector<int64_t> members = membersOf(mesh, axes, r);
          int64_t g = static_cast<int64_t>(members.size());
          std::vector<float> in = tensorOf(r, shape);
          std::vector<int64_t> outShape = shape;
          outShape[dim] *= g;
          std::vector<float> out(in.size() * g, -1);
          EXPECT_OK(tprt_all_gather(comm, in.data(), out.data(), shape.data(),
                                    3, dim, TPRT_F32, &axes));
          forEachIndex(outShape, [&](const std::vector<int64_t> &index) {
            int64_t source = members[index[dim] / shape[dim]];
            std::vector<int64_t> local = index;
            local[dim] %= shape[dim];
            ASSERT_EQ(out[flat(outShape, index)],
                      valueOf(source, flat(shape, local)))
                << "rank " << r;
          });
        });
      }
    }
  }
}

TEST_P(Conformance, ReduceScatterEveryDim) {
  for (const std::vector<int64_t> &sizes :
       std::vector<std::vector<int64_t>>{{4}, {2, 2}, {2, 4}, {2, 2, 2}}) {
    tprt_mesh mesh = makeMesh(sizes);
    if (!harness().fits(mesh))
      continue;
    for (const tprt_axes &axes : allAxisLists(mesh.rank)) {
      for (int32_t dim = 0; dim < 3; ++dim) {
        int64_t g = tprt_group_size(&mesh, &axes);
        std::vector<int64_t> shape = {3, 2, 5};
        shape[dim] = 2 * g;
        SCOPED_TRACE("axes " + str(axes) + " dim " + std::to_string(dim));
        harness().run(mesh, kTimeoutMs, [&](tprt_communicator *comm) {
          int64_t r = tprt_communicator_rank(comm);
          std::vector<int64_t> members = membersOf(mesh, axes, r);
          int64_t p = positionOf(mesh, axes, r);
          std::vector<float> in = tensorOf(r, shape);
          std::vector<int64_t> outShape = shape;
          outShape[dim] /= g;
          std::vector<float> out(in.size() / g, -1);
          EXPECT_OK(tprt_reduce_scatter(comm, in.data(), out.data(),
                                        shape.data(), 3, dim, TPRT_F32,
                                        TPRT_SUM, &axes));
          forEachIndex(outShape, [&](const std::vector<int64_t> &index) {
            std::vector<int64_t> global = index;
            global[dim] += p * outShape[dim];
            float expected = 0;
            for (int64_t m : members)
              expected += valueOf(m, flat(shape, global));
            ASSERT_EQ(out[flat(outShape, index)], expected) << "rank " << r;
          });
        });
      }
    }
  }
}

TEST_P(Conformance, AllToAllEveryPairOfDims) {
  for (const std::vector<int64_t> &sizes :
       std::vector<std::vector<int64_t>>{{4}, {2, 2}, {2, 2, 2}}) {
    tprt_mesh mesh = makeMesh(sizes);
    if (!harness().fits(mesh))
      continue;
    for (const tprt_axes &axes : allAxisLists(mesh.rank)) {
      int64_t g = tprt_group_size(&mesh, &axes);
      for (int32_t split = 0; split < 3; ++split) {
        for (int32_t concat = 0; concat < 3; ++concat) {
          std::vector<int64_t> shape = {2, 3, 2};
          shape[split] = 2 * g;
          SCOPED_TRACE("axes " + str(axes) + " split " + std::to_string(split) +
                       " concat " + std::to_string(concat));
          harness().run(mesh, kTimeoutMs, [&](tprt_communicator *comm) {
            int64_t r = tprt_communicator_rank(comm);
            std::vector<int64_t> members = membersOf(mesh, axes, r);
            int64_t p = positionOf(mesh, axes, r);
            std::vector<float> in = tensorOf(r, shape);
            std::vector<int64_t> block = shape;
            block[split] /= g;
            std::vector<int64_t> outShape = block;
            outShape[concat] *= g;
            std::vector<float> out(in.size(), -1);
            EXPECT_OK(tprt_all_to_all(comm, in.data(), out.data(), shape.data(),
                                      3, split, concat, TPRT_F32, &axes));
            forEachIndex(outShape, [&](const std::vector<int64_t> &index) {
              // Block j along `concat` came from member j: its block p
              // along `split`.
              int64_t j = index[concat] / block[concat];
              std::vector<int64_t> source = index;
              source[concat] %= block[concat];
              source[split] += p * block[split];
              ASSERT_EQ(out[flat(outShape, index)],
                        valueOf(members[j], flat(shape, source)))
                  << "rank " << r;
            });
          });
        }
      }
    }
  }
}

TEST_P(Conformance, InterleavedGroupsAndStatistics) {
  // Rows, then columns, then everything, many times: groups are reused and
  // never confuse one call with the next.
  tprt_mesh mesh = makeMesh({2, 4});
  SKIP_UNLESS_FITS(mesh);
  tprt_axes rows{1, {1}}, cols{1, {0}}, all{2, {0, 1}};
  harness().run(mesh, kTimeoutMs, [&](tprt_communicator *comm) {
    tprt_communicator_reset_stats(comm);
    int64_t r = tprt_communicator_rank(comm);
    float x = static_cast<float>(r);
    for (int iter = 0; iter < 50; ++iter) {
      float a = 0, b = 0, c = 0;
      EXPECT_OK(tprt_all_reduce(comm, &x, &a, 1, TPRT_F32, TPRT_SUM, &rows));
      EXPECT_OK(tprt_all_reduce(comm, &x, &b, 1, TPRT_F32, TPRT_SUM, &cols));
      EXPECT_OK(tprt_all_reduce(comm, &x, &c, 1, TPRT_F32, TPRT_SUM, &all));
      EXPECT_OK(tprt_barrier(comm, &all));
      int64_t row = r / 4, col = r % 4;
      ASSERT_EQ(a, static_cast<float>(4 * row * 4 + 6));
      ASSERT_EQ(b, static_cast<float>(col + (col + 4)));
      ASSERT_EQ(c, 28.0f);
    }
    tprt_comm_stats stats;
    tprt_communicator_stats(comm, &stats);
    EXPECT_EQ(stats.calls[TPRT_ALL_REDUCE], 150);
    EXPECT_EQ(stats.bytes[TPRT_ALL_REDUCE], 150 * 4);
    EXPECT_EQ(stats.calls[TPRT_BARRIER], 50);
    EXPECT_EQ(stats.calls[TPRT_ALL_GATHER], 0);
  });
}

//===----------------------------------------------------------------------===//
// Failures end every rank's call with an error, never a hang
//===----------------------------------------------------------------------===//

/// Records each rank's status code and message.
struct Outcomes {
  std::mutex mutex;
  std::vector<tprt_code> codes;
  std::vector<std::string> messages;
  explicit Outcomes(int64_t n) : codes(n, TPRT_OK), messages(n) {}
  void record(int64_t rank, tprt_status status) {
    std::lock_guard<std::mutex> lock(mutex);
    codes[rank] = tprt_status_code(status);
    messages[rank] = tprt_status_message(status);
    tprt_status_free(status);
  }
  /// Where ranks are processes, every rank's entry everywhere.
  void share(Harness &harness) { harness.share(codes, messages); }
};

TEST_P(Conformance, MismatchedCallsFailEveryMember) {
  tprt_mesh mesh = makeMesh({4});
  SKIP_UNLESS_FITS(mesh);
  tprt_axes axes{1, {0}};
  Outcomes outcomes(4);
  harness().run(mesh, kTimeoutMs, [&](tprt_communicator *comm) {
    int64_t r = tprt_communicator_rank(comm);
    std::vector<float> in(16, 1), out(16);
    // Rank 2 sends 8 elements where the others send 16.
    outcomes.record(r, tprt_all_reduce(comm, in.data(), out.data(),
                                       r == 2 ? 8 : 16, TPRT_F32, TPRT_SUM,
                                       &axes));
  });
  outcomes.share(harness());
  for (int64_t r = 0; r < 4; ++r) {
    EXPECT_EQ(outcomes.codes[r], TPRT_MISMATCH) << outcomes.messages[r];
    EXPECT_NE(outcomes.messages[r].find("f32[8]"), std::string::npos)
        << outcomes.messages[r];
  }
}

TEST_P(Conformance, MismatchedKindsFailEveryMember) {
  tprt_mesh mesh = makeMesh({2});
  SKIP_UNLESS_FITS(mesh);
  tprt_axes axes{1, {0}};
  Outcomes outcomes(2);
  harness().run(mesh, kTimeoutMs, [&](tprt_communicator *comm) {
    int64_t r = tprt_communicator_rank(comm);
    std::vector<float> in(4, 1), out(8);
    int64_t shape[1] = {4};
    outcomes.record(r, r == 0 ? tprt_all_gather(comm, in.data(), out.data(),
                                                shape, 1, 0, TPRT_F32, &axes)
                              : tprt_all_reduce(comm, in.data(), out.data(), 4,
                                                TPRT_F32, TPRT_SUM, &axes));
  });
  outcomes.share(harness());
  EXPECT_EQ(outcomes.codes[0], TPRT_MISMATCH) << outcomes.messages[0];
  EXPECT_EQ(outcomes.codes[1], TPRT_MISMATCH) << outcomes.messages[1];
}

TEST_P(Conformance, AFailedRankStopsTheOthers) {
  tprt_mesh mesh = makeMesh({2, 2});
  SKIP_UNLESS_FITS(mesh);
  tprt_axes all{2, {0, 1}};
  Outcomes outcomes(4);
  auto start = std::chrono::steady_clock::now();
  harness().run(mesh, kTimeoutMs, [&](tprt_communicator *comm) {
    int64_t r = tprt_communicator_rank(comm);
    if (r == 3) {
      tprt_status failure =
          tprt_status_create(TPRT_INVALID_ARGUMENT, "input 'x' is bad");
      tprt_communicator_abort(comm, failure);
      tprt_status_free(failure);
      return;
    }
    float x = 1, y = 0;
    outcomes.record(r,
                    tprt_all_reduce(comm, &x, &y, 1, TPRT_F32, TPRT_SUM, &all));
  });
  outcomes.share(harness());
  // Well before the 30 s timeout.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  for (int64_t r = 0; r < 3; ++r) {
    EXPECT_EQ(outcomes.codes[r], TPRT_ABORTED) << outcomes.messages[r];
    EXPECT_NE(outcomes.messages[r].find("input 'x' is bad"), std::string::npos)
        << outcomes.messages[r];
  }
}

TEST_P(Conformance, RanksWaitingInDifferentGroupsAreAMismatchNotATimeout) {
  // On a 2x2 mesh ranks 0 and 3 reduce over axis 0, ranks 1 and 2 over axis
  // 1: 0 waits for 2, 2 for 3, 3 for 1 and 1 for 0, and nobody can arrive.
  tprt_mesh mesh = makeMesh({2, 2});
  SKIP_UNLESS_FITS(mesh);
  tprt_axes rows{1, {0}}, columns{1, {1}};
  if (!harness().findsCrossGroupWaits())
    GTEST_SKIP() << harness().name()
                 << " finds ranks waiting in different groups only at the "
                    "timeout";
  Outcomes outcomes(4);
  auto start = std::chrono::steady_clock::now();
  harness().run(mesh, kTimeoutMs, [&](tprt_communicator *comm) {
    int64_t r = tprt_communicator_rank(comm);
    float x = 1, y = 0;
    outcomes.record(r, tprt_all_reduce(comm, &x, &y, 1, TPRT_F32, TPRT_SUM,
                                       r == 0 || r == 3 ? &rows : &columns));
  });
  outcomes.share(harness());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  int mismatches = 0;
  for (int64_t r = 0; r < 4; ++r) {
    EXPECT_TRUE(outcomes.codes[r] == TPRT_MISMATCH ||
                outcomes.codes[r] == TPRT_ABORTED)
        << outcomes.messages[r];
    EXPECT_NE(outcomes.messages[r].find("over different groups"),
              std::string::npos)
        << outcomes.messages[r];
    mismatches += outcomes.codes[r] == TPRT_MISMATCH;
  }
  EXPECT_GE(mismatches, 1);
}

TEST_P(Conformance, GroupsThatMeetLaterAreNotAMismatch) {
  // Not SPMD, but legal: ranks 0 and 1 first reduce over axis 1, while ranks
  // 2 and 3 wait over axis 0 for them; then 0 and 1 join them.
  tprt_mesh mesh = makeMesh({2, 2});
  SKIP_UNLESS_FITS(mesh);
  tprt_axes rows{1, {0}}, columns{1, {1}};
  Outcomes outcomes(4);
  harness().run(mesh, kTimeoutMs, [&](tprt_communicator *comm) {
    int64_t r = tprt_communicator_rank(comm);
    float x = 1, y = 0;
    tprt_status status = nullptr;
    if (r < 2)
      status = tprt_all_reduce(comm, &x, &y, 1, TPRT_F32, TPRT_SUM, &columns);
    if (!status)
      status = tprt_all_reduce(comm, &x, &y, 1, TPRT_F32, TPRT_SUM, &rows);
    outcomes.record(r, status);
  });
  outcomes.share(harness());
  for (int64_t r = 0; r < 4; ++r)
    EXPECT_EQ(outcomes.codes[r], TPRT_OK) << outcomes.messages[r];
}

TEST_P(Conformance, AnAbortDuringACollectiveLeavesNoPeerReadingFreedMemory) {
  // Rank 2 fails while ranks 0 and 1 exchange large buffers that each frees
  // as soon as its call returns. A member past the first barrier finishes
  // the collective (so every returned OK is a correct sum); the others stop.
  // Under AddressSanitizer a peer reading a freed buffer is a failure; the
  // abort comes at a different moment in each of the rounds.
  tprt_mesh mesh = makeMesh({2, 2});
  SKIP_UNLESS_FITS(mesh);
  tprt_axes columns{1, {1}};
  constexpr int64_t kCount = 1 << 18;
  for (int round = 0; round < 40; ++round) {
    Outcomes outcomes(4);
    harness().run(mesh, kTimeoutMs, [&](tprt_communicator *comm) {
      int64_t r = tprt_communicator_rank(comm);
      if (r == 2) {
        std::this_thread::sleep_for(std::chrono::microseconds(250 * round));
        tprt_status failure = tprt_status_create(TPRT_INVALID_ARGUMENT, "stop");
        tprt_communicator_abort(comm, failure);
        tprt_status_free(failure);
        return;
      }
      if (r == 3)
        return;
      while (true) {
        auto in = std::make_unique<float[]>(kCount);
        auto out = std::make_unique<float[]>(kCount);
        std::fill(in.get(), in.get() + kCount, static_cast<float>(r + 1));
        tprt_status status = tprt_all_reduce(comm, in.get(), out.get(), kCount,
                                             TPRT_F32, TPRT_SUM, &columns);
        if (status) {
          outcomes.record(r, status);
          return;
        }
        ASSERT_EQ(out[0], 3.0f);
        ASSERT_EQ(out[kCount - 1], 3.0f);
      }
    });
    outcomes.share(harness());
    for (int64_t r : {0, 1})
      EXPECT_EQ(outcomes.codes[r], TPRT_ABORTED) << outcomes.messages[r];
  }
}

TEST_P(Conformance, AMissingRankTimesOutAndLaterCallsFailAtOnce) {
  tprt_mesh mesh = makeMesh({4});
  SKIP_UNLESS_FITS(mesh);
  tprt_axes axes{1, {0}};
  Outcomes first(4), later(4);
  harness().run(mesh, /*timeoutMs=*/300, [&](tprt_communicator *comm) {
    int64_t r = tprt_communicator_rank(comm);
    if (r == 1)
      return; // never comes
    float x = 1, y = 0;
    first.record(r,
                 tprt_all_reduce(comm, &x, &y, 1, TPRT_F32, TPRT_SUM, &axes));
    later.record(r, tprt_barrier(comm, &axes));
  });
  first.share(harness());
  later.share(harness());
  int timeouts = 0;
  for (int64_t r : {0, 2, 3}) {
    EXPECT_TRUE(first.codes[r] == TPRT_TIMEOUT ||
                first.codes[r] == TPRT_ABORTED)
        << first.messages[r];
    timeouts += first.codes[r] == TPRT_TIMEOUT;
    EXPECT_EQ(later.codes[r], TPRT_ABORTED) << later.messages[r];
  }
  EXPECT_GE(timeouts, 1);
}

TEST_P(Conformance, BadArgumentsAreRejectedBeforeCommunicating) {
  tprt_mesh mesh = makeMesh({2, 2});
  SKIP_UNLESS_FITS(mesh);
  // One rank alone: a rejected call must not wait for the others.
  harness().run(mesh, kTimeoutMs, [&](tprt_communicator *comm) {
    if (tprt_communicator_rank(comm) != 0)
      return;
    float buf[8] = {};
    int64_t shape[2] = {2, 3};
    tprt_axes badAxis{1, {2}}, repeated{2, {1, 1}}, ok{1, {1}};
    struct Case {
      tprt_status status;
      const char *needle;
    } cases[] = {
        {tprt_all_reduce(comm, buf, buf, 4, TPRT_F32, TPRT_SUM, &badAxis),
         "axis 2"},
        {tprt_all_reduce(comm, buf, buf, 4, TPRT_F32, TPRT_SUM, &repeated),
         "appears twice"},
        {tprt_all_reduce(comm, buf, buf, -1, TPRT_F32, TPRT_SUM, &ok),
         "negative count"},
        {tprt_all_reduce(comm, buf, buf, 4, static_cast<tprt_dtype>(42),
                         TPRT_SUM, &ok),
         "unknown dtype"},
        {tprt_all_gather(comm, buf, buf, shape, 2, 2, TPRT_F32, &ok),
         "dim 2 is not a dimension"},
        {tprt_reduce_scatter(comm, buf, buf, shape, 2, 1, TPRT_F32, TPRT_SUM,
                             &ok),
         "not divisible by 2"},
        {tprt_all_to_all(comm, buf, buf, shape, 2, 0, 5, TPRT_F32, &ok),
         "concat_dim 5"},
    };
    for (Case &c : cases) {
      EXPECT_EQ(tprt_status_code(c.status), TPRT_INVALID_ARGUMENT)
          << tprt_status_message(c.status);
      EXPECT_NE(std::string(tprt_status_message(c.status)).find(c.needle),
                std::string::npos)
          << tprt_status_message(c.status);
      tprt_status_free(c.status);
    }
  });
}

INSTANTIATE_TEST_SUITE_P(
    Backends, Conformance, ::testing::ValuesIn(allHarnesses()),
    [](const ::testing::TestParamInfo<std::shared_ptr<Harness>> &info) {
      return info.param->name();
    });

} // namespace
