//===- EntryTest.cpp - The calls compiled programs make -------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace tprt::test;

namespace {

tprt_axes axesOf(std::vector<int32_t> list) {
  tprt_axes axes{static_cast<int32_t>(list.size()), {}};
  std::copy(list.begin(), list.end(), axes.axes);
  return axes;
}

TEST(EntryTest, PackedAxesRoundTrip) {
  tprt_axes yx = axesOf({1, 0});
  EXPECT_EQ(tprt_pack_axes(&yx), 2 | (1 << 4) | (0 << 8));
}

TEST(EntryTest, SgemmTransposesAndBatches) {
  // C[b] += op(A[b]) op(B[b]) against a naive loop, for every transpose.
  const int64_t batch = 2, m = 3, n = 4, k = 5;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      std::vector<float> a(batch * m * k), b(batch * k * n), c(batch * m * n),
          want(batch * m * n);
      for (size_t i = 0; i < a.size(); ++i)
        a[i] = static_cast<float>(i % 7) - 3;
      for (size_t i = 0; i < b.size(); ++i)
        b[i] = static_cast<float>(i % 5) - 2;
      for (size_t i = 0; i < c.size(); ++i)
        c[i] = want[i] = static_cast<float>(i % 3);
      // Stored shapes: A is m x k (k x m transposed), B is k x n (n x k).
      int64_t lda = ta ? m : k, ldb = tb ? k : n;
      for (int64_t p = 0; p < batch; ++p)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j)
            for (int64_t l = 0; l < k; ++l) {
              float av =
                  ta ? a[p * m * k + l * lda + i] : a[p * m * k + i * lda + l];
              float bv =
                  tb ? b[p * k * n + j * ldb + l] : b[p * k * n + l * ldb + j];
              want[p * m * n + i * n + j] += av * bv;
            }
      // One batch level as the outer one, then as the inner one.
      std::vector<float> c2 = c;
      tprt_rt_sgemm(nullptr, ta, tb, 1, m, n, k, a.data(), lda, b.data(), ldb,
                    c.data(), n, batch, 1, m * k, 0, k * n, 0, m * n, 0);
      tprt_rt_sgemm(nullptr, ta, tb, 1, m, n, k, a.data(), lda, b.data(), ldb,
                    c2.data(), n, 1, batch, 0, m * k, 0, k * n, 0, m * n);
      EXPECT_EQ(c2, want) << "trans_a " << ta << " trans_b " << tb;
      EXPECT_EQ(c, want) << "trans_a " << ta << " trans_b " << tb;
      // Without accumulate, C's old contents (NaN here) are not read.
      std::vector<float> c3(c.size(), std::nanf("")), fresh(c.size());
      for (size_t i = 0; i < c.size(); ++i)
        fresh[i] = want[i] - static_cast<float>(i % 3);
      tprt_rt_sgemm(nullptr, ta, tb, 0, m, n, k, a.data(), lda, b.data(), ldb,
                    c3.data(), n, batch, 1, m * k, 0, k * n, 0, m * n, 0);
      EXPECT_EQ(c3, fresh) << "trans_a " << ta << " trans_b " << tb;
    }
  }
}

TEST(EntryTest, NarrowGemmAccumulatesInF32) {
  // 1 x 300 times 300 x 1 of 1/4s in bf16: accumulated in bf16 the sum would
  // stall at 32 (spacing 0.25 there); in f32 it is exact, 300 * (1/16).
  const int64_t k = 300;
  uint16_t quarter = 0x3e80; // 0.25 in bf16
  std::vector<uint16_t> a(k, quarter), b(k, quarter);
  uint16_t c = 0;
  tprt_rt_gemm_narrow(nullptr, TPRT_BF16, 0, 0, 1, 1, 1, k, a.data(), k,
                      b.data(), 1, &c, 1, 1, 1, 0, 0, 0, 0, 0, 0);
  uint32_t bits = static_cast<uint32_t>(c) << 16;
  float value;
  std::memcpy(&value, &bits, 4);
  EXPECT_EQ(value, 18.75f);
  // f16: 0.25 is 0x3400.
  std::vector<uint16_t> ha(k, 0x3400), hb(k, 0x3400);
  uint16_t hc = 0;
  tprt_rt_gemm_narrow(nullptr, TPRT_F16, 0, 0, 1, 1, 1, k, ha.data(), k,
                      hb.data(), 1, &hc, 1, 1, 1, 0, 0, 0, 0, 0, 0);
  EXPECT_EQ(hc, 0x4cb0); // 18.75
  // Without accumulate C's old value (an f16 NaN) is not read.
  uint16_t nan = 0x7e00;
  tprt_rt_gemm_narrow(nullptr, TPRT_F16, 0, 0, 0, 1, 1, k, ha.data(), k,
                      hb.data(), 1, &nan, 1, 1, 1, 0, 0, 0, 0, 0, 0);
  EXPECT_EQ(nan, 0x4cb0);
}

double geluTanh(double x) {
  return 0.5 * x *
         (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

TEST(EntryTest, GemmEpilogues) {
  // D = act(A B + C + bias) against a naive loop, for each epilogue, with C
  // apart from D (a residual), C absent, and a batch whose D is strided
  // differently from C.
  const int64_t batch = 2, m = 3, n = 4, k = 5;
  std::vector<float> a(batch * m * k), b(batch * k * n), c(batch * m * n),
      bias(n);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = (static_cast<float>(i % 7) - 3) / 4;
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = (static_cast<float>(i % 5) - 2) / 2;
  for (size_t i = 0; i < c.size(); ++i)
    c[i] = static_cast<float>(i % 3) - 1;
  for (int64_t j = 0; j < n; ++j)
    bias[j] = 0.5f * static_cast<float>(j) - 1;
  // D's rows padded to ldd = 6, its batch entries 20 apart.
  const int64_t ldd = 6, strideD = 20;
  for (int epilogue = 0; epilogue < 4; ++epilogue) {
    for (bool withC : {false, true}) {
      tprt_gemm_desc desc = {TPRT_F32, 0,     0,   epilogue, m, n,     k, k,
                             n,        n,     ldd, batch,    1, m * k, 0, k * n,
                             0,        m * n, 0,   strideD,  0};
      std::vector<float> d(batch * strideD, 7.0f);
      tprt_rt_gemm(nullptr, &desc, a.data(), b.data(),
                   withC ? c.data() : nullptr, d.data(), bias.data());
      for (int64_t p = 0; p < batch; ++p)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double want = withC ? c[p * m * n + i * n + j] : 0.0;
            for (int64_t l = 0; l < k; ++l)
              want += static_cast<double>(a[p * m * k + i * k + l]) *
                      b[p * k * n + l * n + j];
            if (epilogue & TPRT_EPILOGUE_BIAS)
              want += bias[j];
            if (epilogue & TPRT_EPILOGUE_GELU)
              want = geluTanh(want);
            EXPECT_NEAR(d[p * strideD + i * ldd + j], want, 1e-5)
                << "epilogue " << epilogue << " C " << withC << " at (" << p
                << ", " << i << ", " << j << ")";
          }
      // The padding between D's rows is not written.
      EXPECT_EQ(d[n], 7.0f);
      EXPECT_EQ(d[strideD - 1], 7.0f);
    }
  }
  // A null bias is left out whatever the epilogue says (a partial sum's
  // other members).
  tprt_gemm_desc desc = {TPRT_F32, 0, 0, TPRT_EPILOGUE_BIAS,
                         m,        n, k, k,
                         n,        n, n, 1,
                         1,        0, 0, 0,
                         0,        0, 0, 0,
                         0};
  std::vector<float> d(m * n), plain(m * n);
  tprt_rt_gemm(nullptr, &desc, a.data(), b.data(), nullptr, d.data(), nullptr);
  tprt_rt_sgemm(nullptr, 0, 0, 0, m, n, k, a.data(), k, b.data(), n,
                plain.data(), n, 1, 1, 0, 0, 0, 0, 0, 0);
  EXPECT_EQ(d, plain);
}

TEST(EntryTest, NarrowGemmTransposesStridesAndEpilogues) {
  // bf16 D = act(op(A) op(B) + C + bias) against a naive sum in double of
  // the same bf16 values, rounded once: for every transpose, epilogue, with
  // C apart from D and without, D's rows padded (ldd 9) and a batch of 2.
  // Where oneDNN runs bf16 (AVX-512) this is its matmul primitive, made
  // once per shape; elsewhere the widened f32 path. Within one bf16 ulp:
  // the sum's order differs.
  const int64_t batch = 2, m = 5, n = 7, k = 33, ldd = 9, strideD = m * ldd;
  auto bf16 = [](float v) { return tprt_f32_to_bf16(v); };
  auto value = [](uint16_t h) { return tprt_bf16_to_f32(h); };
  std::vector<uint16_t> a(batch * m * k), b(batch * k * n), c(batch * m * n),
      bias(n);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = bf16((static_cast<float>(i % 11) - 5) / 8);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = bf16((static_cast<float>(i % 7) - 3) / 4);
  for (size_t i = 0; i < c.size(); ++i)
    c[i] = bf16(static_cast<float>(i % 5) - 2);
  for (int64_t j = 0; j < n; ++j)
    bias[j] = bf16(0.25f * static_cast<float>(j) - 1);
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (int epilogue = 0; epilogue < 4; ++epilogue)
        for (bool withC : {false, true}) {
          // A is m x k (stored k x m when transposed), B k x n (n x k).
          tprt_gemm_desc desc = {
              TPRT_BF16,  ta,         tb, epilogue, m,     n,       k,
              ta ? m : k, tb ? k : n, n,  ldd,      batch, 1,       m * k,
              0,          k * n,      0,  m * n,    0,     strideD, 0};
          std::vector<uint16_t> d(batch * strideD, bf16(7.0f));
          tprt_rt_gemm(nullptr, &desc, a.data(), b.data(),
                       withC ? c.data() : nullptr, d.data(), bias.data());
          for (int64_t p = 0; p < batch; ++p)
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                double want = withC ? value(c[p * m * n + i * n + j]) : 0.0;
                for (int64_t l = 0; l < k; ++l) {
                  double x = value(a[p * m * k + (ta ? l * m + i : i * k + l)]);
                  double y = value(b[p * k * n + (tb ? j * k + l : l * n + j)]);
                  want += x * y;
                }
                if (epilogue & TPRT_EPILOGUE_BIAS)
                  want += value(bias[j]);
                if (epilogue & TPRT_EPILOGUE_GELU)
                  want = geluTanh(want);
                double got = value(d[p * strideD + i * ldd + j]);
                EXPECT_NEAR(got, want, std::abs(want) / 128 + 1e-3)
                    << "trans " << ta << tb << " epilogue " << epilogue << " C "
                    << withC << " at (" << p << ", " << i << ", " << j << ")";
              }
          // The padding between D's rows is not written.
          EXPECT_EQ(d[n], bf16(7.0f));
          EXPECT_EQ(d[ldd - 1], bf16(7.0f));
        }
}

TEST(EntryTest, NarrowGemmEpilogueRoundsOnce) {
  // f16, 1 x 1 x 1: 1 * 1 + residual 2^-11 + bias 2^-11. Summed in f32 and
  // rounded once, 1 + 2^-10 (f16's spacing at 1); rounded after each step,
  // 1 + 2^-11 is a tie that rounds to even, 1, twice.
  uint16_t one = 0x3c00, tiny = 0x1000; // 1 and 2^-11 in f16
  uint16_t d = 0;
  tprt_gemm_desc desc = {TPRT_F16, 0, 0, TPRT_EPILOGUE_BIAS,
                         1,        1, 1, 1,
                         1,        1, 1, 1,
                         1,        0, 0, 0,
                         0,        0, 0, 0,
                         0};
  tprt_rt_gemm(nullptr, &desc, &one, &one, &tiny, &d, &tiny);
  EXPECT_EQ(d, 0x3c01); // 1 + 2^-10
}

TEST(EntryTest, GemmDescriptorChecked) {
  // A bad descriptor fails the rank with a status naming the field.
  tprt_communicator *comm = nullptr;
  tprt_world *world = nullptr;
  tprt_mesh mesh = {1, {1}};
  ASSERT_EQ(tprt_world_create(&mesh, nullptr, &world), nullptr);
  ASSERT_EQ(tprt_world_communicator(world, 0, &comm), nullptr);
  tprt_rank_context *ctx = nullptr;
  ASSERT_EQ(tprt_rank_context_create(comm, &ctx), nullptr);
  float x = 1, y = 0;
  tprt_gemm_desc desc = {TPRT_F32, 0, 0, 9, 1, 1, 1, 1, 1, 1, 1,
                         1,        1, 0, 0, 0, 0, 0, 0, 0, 0};
  tprt_rt_gemm(ctx, &desc, &x, &x, nullptr, &y, nullptr);
  tprt_status status = tprt_rank_context_take_status(ctx);
  ASSERT_NE(status, nullptr);
  EXPECT_NE(std::string(tprt_status_message(status)).find("epilogue 9"),
            std::string::npos)
      << tprt_status_message(status);
  tprt_status_free(status);
  desc.epilogue = 0;
  desc.lda = 0;
  tprt_rt_gemm(ctx, &desc, &x, &x, nullptr, &y, nullptr);
  status = tprt_rank_context_take_status(ctx);
  ASSERT_NE(status, nullptr);
  EXPECT_NE(std::string(tprt_status_message(status)).find("leading dim"),
            std::string::npos)
      << tprt_status_message(status);
  tprt_status_free(status);
  tprt_rank_context_destroy(ctx);
  tprt_world_destroy(world);
}

TEST(EntryTest, GemmSizesAtTheEdges) {
  // Against a double-precision loop: blocks larger than a kernel's tile with
  // ragged edges, rows wider than the matrix (leading dimensions), vectors,
  // and K = 0 (D is C, or zeros).
  struct Case {
    int64_t m, n, k, pad;
  };
  for (Case s : {Case{67, 45, 129, 3}, Case{1, 300, 17, 0}, Case{300, 1, 9, 5},
                 Case{5, 7, 0, 1}, Case{128, 64, 128, 0}}) {
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        for (int acc = 0; acc < 2; ++acc) {
          int64_t rowsA = ta ? s.k : s.m, colsA = ta ? s.m : s.k;
          int64_t rowsB = tb ? s.n : s.k, colsB = tb ? s.k : s.n;
          int64_t lda = colsA + s.pad, ldb = colsB + s.pad, ldc = s.n + s.pad;
          std::vector<float> a(std::max<int64_t>(rowsA * lda, 1)),
              b(std::max<int64_t>(rowsB * ldb, 1)), c(s.m * ldc);
          for (size_t i = 0; i < a.size(); ++i)
            a[i] = static_cast<float>((i * 37) % 23) / 11.0f - 1.0f;
          for (size_t i = 0; i < b.size(); ++i)
            b[i] = static_cast<float>((i * 41) % 19) / 9.0f - 1.0f;
          for (size_t i = 0; i < c.size(); ++i)
            c[i] = acc ? static_cast<float>(i % 5) : std::nanf("");
          std::vector<float> before = c;
          tprt_rt_sgemm(nullptr, ta, tb, acc, s.m, s.n, s.k, a.data(), lda,
                        b.data(), ldb, c.data(), ldc, 1, 1, 0, 0, 0, 0, 0, 0);
          for (int64_t i = 0; i < s.m; ++i)
            for (int64_t j = 0; j < ldc; ++j) {
              float got = c[i * ldc + j];
              if (j >= s.n) { // Past a row's end: untouched.
                EXPECT_TRUE(std::memcmp(&got, &before[i * ldc + j], 4) == 0);
                continue;
              }
              double want = acc ? before[i * ldc + j] : 0.0;
              for (int64_t l = 0; l < s.k; ++l)
                want +=
                    static_cast<double>(ta ? a[l * lda + i] : a[i * lda + l]) *
                    (tb ? b[j * ldb + l] : b[l * ldb + j]);
              ASSERT_NEAR(got, want, 1e-4 * (1 + std::fabs(want)))
                  << tprt_cpu_gemm_library() << ": " << s.m << "x" << s.n << "x"
                  << s.k << " pad " << s.pad << " trans_a " << ta << " trans_b "
                  << tb << " accumulate " << acc << " at (" << i << ", " << j
                  << ")";
            }
        }
      }
    }
  }
}

TEST(CpuGemmTest, LibraryFollowsTheEnvironment) {
  // TPRT_CPU_GEMM chooses; oneDNN is the default where the runtime has it.
  const char *env = std::getenv("TPRT_CPU_GEMM");
  std::string want = env && std::strcmp(env, "openblas") == 0 ? "OpenBLAS"
#ifdef TPRT_TEST_HAS_ONEDNN
                                                              : "oneDNN";
#else
                                                              : "OpenBLAS";
#endif
  EXPECT_EQ(tprt_cpu_gemm_library(), want);
  // A rank of two sharing this machine gets half its cores (at least one);
  // the library's own variable, where set, decides instead.
  int cores =
      static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const char *own =
      want == "oneDNN" ? "OMP_NUM_THREADS" : "OPENBLAS_NUM_THREADS";
  if (!std::getenv(own) && !std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE")) {
    EXPECT_EQ(tprt_cpu_gemm_share_cores(2), std::max(1, cores / 2));
    EXPECT_EQ(tprt_cpu_gemm_share_cores(1), cores);
  }
}

/// What a parallel_for body saw: each index's visits and the threads.
struct Visits {
  std::mutex mutex;
  std::vector<int> count;
  std::vector<std::thread::id> threads;
  int64_t calls = 0;
};

void visit(void *args, int64_t lo, int64_t hi) {
  auto &v = *static_cast<Visits *>(args);
  std::lock_guard<std::mutex> lock(v.mutex);
  ++v.calls;
  for (int64_t i = lo; i < hi; ++i)
    ++v.count[i];
  if (std::find(v.threads.begin(), v.threads.end(),
                std::this_thread::get_id()) == v.threads.end())
    v.threads.push_back(std::this_thread::get_id());
}

TEST(EntryTest, ParallelForCoversTheRangeOnceOnTheTeam) {
  // tprt_rt_parallel_for: every index of [lo, hi) once, on at most the
  // rank's share of the cores, all done when it returns.
  tprt_mesh mesh{1, {1}};
  tprt_world *world = nullptr;
  ASSERT_EQ(tprt_world_create(&mesh, nullptr, &world), nullptr);
  tprt_communicator *comm = nullptr;
  ASSERT_EQ(tprt_world_communicator(world, 0, &comm), nullptr);
  tprt_rank_context *ctx = nullptr;
  ASSERT_EQ(tprt_rank_context_create(comm, &ctx), nullptr);
  int32_t share = tprt_cpu_gemm_share_cores(1);
  const tprt_rt_table *table = tprt_rt_functions();
  EXPECT_EQ(table->parallel_for, &tprt_rt_parallel_for);
  for (auto [lo, hi] :
       {std::pair<int64_t, int64_t>{0, 1000}, {5, 6}, {3, 8}, {7, 7}, {9, 4}}) {
    Visits v;
    v.count.assign(1000, 0);
    table->parallel_for(ctx, visit, &v, lo, hi);
    for (int64_t i = 0; i < 1000; ++i)
      ASSERT_EQ(v.count[i], i >= lo && i < hi ? 1 : 0)
          << "index " << i << " of [" << lo << ", " << hi << ")";
    EXPECT_EQ(v.calls == 0, hi <= lo) << "[" << lo << ", " << hi << ")";
    EXPECT_LE(v.calls, std::max<int64_t>(hi - lo, 0));
    if (share > 0)
      EXPECT_LE(static_cast<int64_t>(v.threads.size()), share);
    // The team of oneDNN's GEMMs shares a range of more than one iteration
    // (OpenBLAS's ranks run alone).
    if (std::string(tprt_cpu_gemm_library()) == "oneDNN" && share > 1 &&
        hi - lo > 1)
      EXPECT_GE(v.threads.size(), 2u);
  }
  // After a failure on the rank, nothing runs.
  table->axis_index(ctx, 1 | (3 << 4));
  Visits v;
  v.count.assign(10, 0);
  table->parallel_for(ctx, visit, &v, 0, 10);
  EXPECT_EQ(v.calls, 0);
  tprt_status_free(tprt_rank_context_take_status(ctx));
  tprt_rank_context_destroy(ctx);
  tprt_world_destroy(world);
}

class EntryTest : public ::testing::TestWithParam<std::shared_ptr<Harness>> {};

TEST_P(EntryTest, CollectivesSliceAndIndex) {
  tprt_mesh mesh = {2, {2, 2}};
  tprt_axes y = axesOf({1}), xy = axesOf({0, 1});
  int64_t packedY = tprt_pack_axes(&y), packedXY = tprt_pack_axes(&xy);
  GetParam()->run(mesh, 30000, [&](tprt_communicator *comm) {
    tprt_rank_context *ctx = nullptr;
    ASSERT_EQ(tprt_rank_context_create(comm, &ctx), nullptr);
    int64_t r = tprt_communicator_rank(comm);
    float in[4] = {1.0f * r, 2, 3, 4}, sum[4];
    tprt_rt_all_reduce(ctx, in, sum, 4, TPRT_F32, TPRT_SUM, packedXY);
    float block[2];
    int64_t shape[1] = {4};
    tprt_rt_all_slice(ctx, in, block, shape, 1, 0, TPRT_F32, packedY);
    int64_t index = tprt_rt_axis_index(ctx, packedY);
    tprt_status status = tprt_rank_context_take_status(ctx);
    EXPECT_EQ(status, nullptr) << tprt_status_message(status);
    EXPECT_EQ(sum[0], 6.0f);
    EXPECT_EQ(sum[3], 16.0f);
    EXPECT_EQ(index, r % 2);
    EXPECT_EQ(block[0], index == 0 ? in[0] : in[2]);
    EXPECT_EQ(block[1], index == 0 ? in[1] : in[3]);
    tprt_rank_context_destroy(ctx);
  });
}

TEST_P(EntryTest, AFailureIsKeptAndLaterCallsSkip) {
  tprt_mesh mesh = {1, {2}};
  tprt_axes x = axesOf({0});
  int64_t packed = tprt_pack_axes(&x);
  std::mutex mutex;
  std::vector<tprt_code> codes(2, TPRT_OK);
  GetParam()->run(mesh, 30000, [&](tprt_communicator *comm) {
    tprt_rank_context *ctx = nullptr;
    ASSERT_EQ(tprt_rank_context_create(comm, &ctx), nullptr);
    int64_t r = tprt_communicator_rank(comm);
    float in[4] = {1, 2, 3, 4}, out[4] = {-1, -1, -1, -1};
    // Different counts: both ranks fail.
    tprt_rt_all_reduce(ctx, in, out, r == 0 ? 4 : 2, TPRT_F32, TPRT_SUM,
                       packed);
    // Skipped: `out` stays untouched.
    float again[4] = {-1, -1, -1, -1};
    tprt_rt_all_reduce(ctx, in, again, 4, TPRT_F32, TPRT_SUM, packed);
    EXPECT_EQ(again[0], -1.0f);
    tprt_status status = tprt_rank_context_take_status(ctx);
    {
      std::lock_guard<std::mutex> lock(mutex);
      codes[r] = tprt_status_code(status);
    }
    tprt_status_free(status);
    EXPECT_EQ(tprt_rank_context_take_status(ctx), nullptr);
    tprt_rank_context_destroy(ctx);
  });
  EXPECT_EQ(codes[0], TPRT_MISMATCH);
  EXPECT_EQ(codes[1], TPRT_MISMATCH);
}

INSTANTIATE_TEST_SUITE_P(
    Backends, EntryTest, ::testing::ValuesIn(hostHarnesses()),
    [](const ::testing::TestParamInfo<std::shared_ptr<Harness>> &info) {
      return info.param->name();
    });

} // namespace
