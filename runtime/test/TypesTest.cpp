//===- TypesTest.cpp - Statuses and element types -------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tprt/tprt.h"

#include "gtest/gtest.h"

#include <cstring>
#include <limits>
#include <string>

namespace {

TEST(StatusTest, NullIsSuccess) {
  EXPECT_EQ(tprt_status_code(nullptr), TPRT_OK);
  EXPECT_STREQ(tprt_status_message(nullptr), "");
  EXPECT_EQ(tprt_status_create(TPRT_OK, "ignored"), nullptr);
  tprt_status_free(nullptr);
}

TEST(StatusTest, ErrorsKeepCodeAndMessage) {
  tprt_status status = tprt_status_create(TPRT_TIMEOUT, "rank 3 is late");
  EXPECT_EQ(tprt_status_code(status), TPRT_TIMEOUT);
  EXPECT_STREQ(tprt_status_message(status), "rank 3 is late");
  EXPECT_STREQ(tprt_code_name(TPRT_TIMEOUT), "TIMEOUT");
  tprt_status_free(status);
}

TEST(TypesTest, SizesAndNames) {
  EXPECT_EQ(tprt_dtype_size(TPRT_F32), 4u);
  EXPECT_EQ(tprt_dtype_size(TPRT_BF16), 2u);
  EXPECT_EQ(tprt_dtype_size(TPRT_I64), 8u);
  EXPECT_EQ(tprt_dtype_size(static_cast<tprt_dtype>(99)), 0u);
  EXPECT_STREQ(tprt_dtype_name(TPRT_F16), "f16");
  EXPECT_STREQ(tprt_collective_kind_name(TPRT_REDUCE_SCATTER),
               "reduce_scatter");
}

TEST(TypesTest, HalfAndBfloat16Conversions) {
  // Exact values round-trip; others round to nearest even.
  for (float v : {0.0f, 1.0f, -2.5f, 0.25f, 65504.0f}) {
    EXPECT_EQ(tprt_f16_to_f32(tprt_f32_to_f16(v)), v);
    EXPECT_EQ(tprt_bf16_to_f32(tprt_f32_to_bf16(v == 65504.0f ? 65536.0f : v)),
              v == 65504.0f ? 65536.0f : v);
  }
  EXPECT_EQ(tprt_f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(tprt_f32_to_bf16(1.0f), 0x3f80);
  // 1 + 2^-11 is halfway between two halves: ties to the even one, 1.0.
  EXPECT_EQ(tprt_f32_to_f16(1.0f + 1.0f / 2048), 0x3c00);
  EXPECT_EQ(tprt_f16_to_f32(0x0001), 1.0f / (1 << 24)); // smallest subnormal
  EXPECT_EQ(tprt_f32_to_f16(1e6f), 0x7c00);             // overflow: infinity
  // bf16 (branch-free, inline in the runtime): ties to even in both
  // directions, a NaN stays a quiet NaN (rounding would carry the all-ones
  // mantissa of 0x7fffffff into the sign), the largest finite value past
  // its halfway point rounds to infinity.
  EXPECT_EQ(tprt_f32_to_bf16(1.0f + 1.0f / 256), 0x3f80); // tie, to even
  EXPECT_EQ(tprt_f32_to_bf16(1.0f + 3.0f / 256), 0x3f82); // tie, up to even
  EXPECT_EQ(tprt_f32_to_bf16(1.0f + 3.0f / 512), 0x3f81); // above half
  float nan;
  uint32_t nanBits = 0x7fffffffu;
  std::memcpy(&nan, &nanBits, sizeof(nan));
  EXPECT_EQ(tprt_f32_to_bf16(nan), 0x7fff);
  nanBits = 0xff800001u; // a signalling NaN, negative
  std::memcpy(&nan, &nanBits, sizeof(nan));
  EXPECT_EQ(tprt_f32_to_bf16(nan), 0xffc0);
  EXPECT_EQ(tprt_f32_to_bf16(3.4e38f), 0x7f80);
  EXPECT_EQ(tprt_bf16_to_f32(0xbf80), -1.0f);
}

TEST(CompareTest, TolerancePerDtypeAndPrecision) {
  EXPECT_EQ(tprt_tolerance(TPRT_F32, nullptr), 1e-5);
  EXPECT_EQ(tprt_tolerance(TPRT_F32, "highest"), 1e-5);
  EXPECT_EQ(tprt_tolerance(TPRT_F32, "high"), 5e-3);
  EXPECT_EQ(tprt_tolerance(TPRT_F32, "medium"), 4e-2);
  EXPECT_EQ(tprt_tolerance(TPRT_F64, nullptr), 1e-10);
  EXPECT_EQ(tprt_tolerance(TPRT_F16, nullptr), 1e-2);
  EXPECT_EQ(tprt_tolerance(TPRT_BF16, "high"), 4e-2);
  EXPECT_EQ(tprt_tolerance(TPRT_I64, nullptr), 0);
  EXPECT_LT(tprt_tolerance(TPRT_F32, "fast"), 0);
  EXPECT_LT(tprt_tolerance(static_cast<tprt_dtype>(42), nullptr), 0);
}

TEST(CompareTest, RelativeToEachElementWithTheRmsAsFloor) {
  // RMS of want: sqrt((100^2 + 1^2 + 0) / 3) = 57.7.
  float want[] = {100, 1, 0};
  float got[] = {100.0005f, 1.0004f, 0.0004f};
  tprt_comparison c;
  ASSERT_EQ(tprt_compare(TPRT_F32, got, want, 3, -1, nullptr, 0, 0, &c),
            nullptr);
  EXPECT_EQ(c.elements, 3);
  EXPECT_EQ(c.bad, 0);
  EXPECT_NEAR(c.floor, 57.74, 0.01);
  EXPECT_EQ(c.tolerance, 1e-5);
  // 100.001 is off by 1e-5 of itself... and a bit more: the worst.
  got[0] = 100.002f;
  ASSERT_EQ(tprt_compare(TPRT_F32, got, want, 3, -1, nullptr, 0, 0, &c),
            nullptr);
  EXPECT_EQ(c.bad, 1);
  EXPECT_EQ(c.worst, 0);
  EXPECT_GT(c.worst_ratio, 1);
  EXPECT_FLOAT_EQ(c.worst_got, 100.002f);
  // A raised floor or an absolute allowance admits it.
  ASSERT_EQ(tprt_compare(TPRT_F32, got, want, 3, -1, nullptr, 300, 0, &c),
            nullptr);
  EXPECT_EQ(c.bad, 0);
  EXPECT_EQ(c.floor, 300);
  ASSERT_EQ(tprt_compare(TPRT_F32, got, want, 3, -1, nullptr, 0, 0.01, &c),
            nullptr);
  EXPECT_EQ(c.bad, 0);
  // So does a looser precision's tolerance.
  ASSERT_EQ(tprt_compare(TPRT_F32, got, want, 3, -1, "high", 0, 0, &c),
            nullptr);
  EXPECT_EQ(c.bad, 0);
  EXPECT_EQ(c.tolerance, 5e-3);
}

TEST(CompareTest, IntegersExactNanOnlyWithNan) {
  int64_t wantI[] = {1, 2, 3}, gotI[] = {1, 2, 4};
  tprt_comparison c;
  ASSERT_EQ(tprt_compare(TPRT_I64, gotI, wantI, 3, -1, nullptr, 0, 0, &c),
            nullptr);
  EXPECT_EQ(c.bad, 1);
  EXPECT_EQ(c.worst, 2);
  double nan = std::numeric_limits<double>::quiet_NaN();
  double inf = std::numeric_limits<double>::infinity();
  double want[] = {nan, inf, 1, nan};
  double got[] = {nan, inf, 1, 1};
  ASSERT_EQ(tprt_compare(TPRT_F64, got, want, 4, -1, nullptr, 0, 0, &c),
            nullptr);
  EXPECT_EQ(c.nan_in_both, 1);
  EXPECT_EQ(c.bad, 1);
  EXPECT_EQ(c.worst, 3);
}

TEST(CompareTest, ElementValuesOfEveryDtype) {
  float f[] = {1.5f};
  double d[] = {-2.25};
  uint16_t h[] = {tprt_f32_to_f16(0.5f)}, b[] = {tprt_f32_to_bf16(3.0f)};
  int32_t i[] = {-7};
  int64_t l[] = {int64_t{1} << 40};
  EXPECT_EQ(tprt_element_value(TPRT_F32, f, 0), 1.5);
  EXPECT_EQ(tprt_element_value(TPRT_F64, d, 0), -2.25);
  EXPECT_EQ(tprt_element_value(TPRT_F16, h, 0), 0.5);
  EXPECT_EQ(tprt_element_value(TPRT_BF16, b, 0), 3.0);
  EXPECT_EQ(tprt_element_value(TPRT_I32, i, 0), -7);
  EXPECT_EQ(tprt_element_value(TPRT_I64, l, 0), 1099511627776.0);
  EXPECT_EQ(tprt_element_value(static_cast<tprt_dtype>(9), f, 0), 0);
}

TEST(CompareTest, RejectsBadArguments) {
  float x[] = {1};
  tprt_comparison c;
  for (tprt_status s :
       {tprt_compare(TPRT_F32, x, x, 1, -1, nullptr, 0, 0, nullptr),
        tprt_compare(static_cast<tprt_dtype>(9), x, x, 1, -1, nullptr, 0, 0,
                     &c),
        tprt_compare(TPRT_F32, nullptr, x, 1, -1, nullptr, 0, 0, &c),
        tprt_compare(TPRT_F32, x, x, -1, -1, nullptr, 0, 0, &c),
        tprt_compare(TPRT_F32, x, x, 1, -1, "fast", 0, 0, &c)}) {
    EXPECT_EQ(tprt_status_code(s), TPRT_INVALID_ARGUMENT);
    tprt_status_free(s);
  }
  EXPECT_EQ(tprt_compare(TPRT_F32, nullptr, nullptr, 0, -1, nullptr, 0, 0, &c),
            nullptr);
  EXPECT_EQ(c.elements, 0);
}

TEST(MeshTest, ChecksItsShape) {
  tprt_mesh ok = {3, {2, 2, 2}};
  EXPECT_EQ(tprt_mesh_check(&ok), nullptr);
  EXPECT_EQ(tprt_mesh_num_devices(&ok), 8);
  tprt_mesh zero = {2, {2, 0}};
  tprt_status status = tprt_mesh_check(&zero);
  EXPECT_EQ(tprt_status_code(status), TPRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tprt_status_message(status)).find("axis 1 has size 0"),
            std::string::npos);
  tprt_status_free(status);
  tprt_mesh tooDeep = {5, {1, 1, 1, 1}};
  status = tprt_mesh_check(&tooDeep);
  EXPECT_EQ(tprt_status_code(status), TPRT_INVALID_ARGUMENT);
  tprt_status_free(status);
}

} // namespace
