//===- Compare.cpp - The tolerance check of results -----------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// tprt_tolerance and tprt_compare: how tp-run --verify and Python's
// Program.verify decide that a sharded result equals its reference.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <cmath>
#include <cstring>

using namespace tprt;

namespace {

int64_t integerAt(tprt_dtype dtype, const void *data, int64_t i) {
  return dtype == TPRT_I32 ? static_cast<const int32_t *>(data)[i]
                           : static_cast<const int64_t *>(data)[i];
}

} // namespace

extern "C" {

double tprt_element_value(tprt_dtype dtype, const void *data, int64_t i) {
  const char *p = static_cast<const char *>(data);
  switch (dtype) {
  case TPRT_F32:
    return reinterpret_cast<const float *>(p)[i];
  case TPRT_F64:
    return reinterpret_cast<const double *>(p)[i];
  case TPRT_I32:
    return reinterpret_cast<const int32_t *>(p)[i];
  case TPRT_I64:
    return static_cast<double>(reinterpret_cast<const int64_t *>(p)[i]);
  case TPRT_BF16:
    return bf16ToFloat(reinterpret_cast<const uint16_t *>(p)[i]);
  case TPRT_F16:
    return halfToFloat(reinterpret_cast<const uint16_t *>(p)[i]);
  default:
    return 0;
  }
}

double tprt_tolerance(tprt_dtype dtype, const char *precision) {
  bool highest = !precision || std::strcmp(precision, "highest") == 0;
  if (!highest && std::strcmp(precision, "high") != 0 &&
      std::strcmp(precision, "medium") != 0)
    return -1;
  switch (dtype) {
  case TPRT_F32:
    // About ten units in the last place of the inputs' rounding: TF32's 10
    // mantissa bits at "high", bf16's 7 at "medium".
    if (highest)
      return 1e-5;
    return std::strcmp(precision, "high") == 0 ? 5e-3 : 4e-2;
  case TPRT_F64:
    return 1e-10;
  // A block of ops rounds to 16 bits between ops where a reference rounds in
  // other places.
  case TPRT_F16:
    return 1e-2;
  case TPRT_BF16:
    return 4e-2;
  case TPRT_I32:
  case TPRT_I64:
    return 0;
  default:
    return -1;
  }
}

tprt_status tprt_compare(tprt_dtype dtype, const void *got, const void *want,
                         int64_t n, double tolerance, const char *precision,
                         double floor, double allowance, tprt_comparison *out) {
  if (!out)
    return tprt_status_create(TPRT_INVALID_ARGUMENT,
                              "tprt_compare: out is null");
  if (!tprt_dtype_size(dtype))
    return tprt_status_create(
        TPRT_INVALID_ARGUMENT,
        ("tprt_compare: unknown dtype " + std::to_string(dtype)).c_str());
  if (n < 0 || (n > 0 && (!got || !want)))
    return tprt_status_create(TPRT_INVALID_ARGUMENT,
                              "tprt_compare: n is negative, or a buffer of n "
                              "> 0 elements is null");
  if (tolerance < 0)
    tolerance = tprt_tolerance(dtype, precision);
  if (tolerance < 0)
    return tprt_status_create(
        TPRT_INVALID_ARGUMENT,
        (std::string("tprt_compare: unknown matmul precision '") +
         (precision ? precision : "") + "'; expected highest, high or medium")
            .c_str());
  tprt_comparison c{};
  c.elements = n;
  c.worst = -1;
  c.tolerance = tolerance;
  bool integer = dtype == TPRT_I32 || dtype == TPRT_I64;
  if (!integer) {
    double squares = 0;
    int64_t finite = 0;
    for (int64_t i = 0; i < n; ++i) {
      double w = tprt_element_value(dtype, want, i);
      if (std::isfinite(w)) {
        squares += w * w;
        ++finite;
      }
    }
    double rms = finite ? std::sqrt(squares / static_cast<double>(finite)) : 0;
    c.floor = std::max(rms, floor);
  }
  for (int64_t i = 0; i < n; ++i) {
    double ratio;
    if (integer) {
      ratio =
          integerAt(dtype, got, i) == integerAt(dtype, want, i) ? 0 : HUGE_VAL;
    } else {
      double g = tprt_element_value(dtype, got, i),
             w = tprt_element_value(dtype, want, i);
      if (std::isnan(g) || std::isnan(w) || std::isinf(g) || std::isinf(w)) {
        bool bothNan = std::isnan(g) && std::isnan(w);
        c.nan_in_both += bothNan;
        ratio = bothNan || g == w ? 0 : HUGE_VAL;
      } else {
        double limit =
            std::max(c.tolerance * std::max(std::fabs(w), c.floor), allowance);
        double error = std::fabs(g - w);
        ratio = error == 0 ? 0 : limit > 0 ? error / limit : HUGE_VAL;
      }
    }
    if (ratio > 1)
      ++c.bad;
    if (ratio > c.worst_ratio || (c.worst < 0 && ratio > 0)) {
      c.worst_ratio = ratio;
      c.worst = i;
      c.worst_got = tprt_element_value(dtype, got, i);
      c.worst_want = tprt_element_value(dtype, want, i);
    }
  }
  *out = c;
  return nullptr;
}

} // extern "C"
