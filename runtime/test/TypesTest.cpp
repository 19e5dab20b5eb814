//===- TypesTest.cpp - Statuses and element types -------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tprt/tprt.h"

#include "gtest/gtest.h"

#include <cstring>
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
