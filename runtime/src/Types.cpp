//===- Types.cpp - Element types, reductions, block copies ----------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <algorithm>
#include <cstring>

using namespace tprt;

extern "C" {

size_t tprt_dtype_size(tprt_dtype dtype) {
  switch (dtype) {
  case TPRT_F32:
  case TPRT_I32:
    return 4;
  case TPRT_F64:
  case TPRT_I64:
    return 8;
  case TPRT_F16:
  case TPRT_BF16:
    return 2;
  default:
    break;
  }
  return 0;
}

const char *tprt_dtype_name(tprt_dtype dtype) {
  switch (dtype) {
  case TPRT_F32:
    return "f32";
  case TPRT_F64:
    return "f64";
  case TPRT_F16:
    return "f16";
  case TPRT_BF16:
    return "bf16";
  case TPRT_I32:
    return "i32";
  case TPRT_I64:
    return "i64";
  default:
    break;
  }
  return "?";
}

float tprt_f16_to_f32(uint16_t value) { return halfToFloat(value); }
uint16_t tprt_f32_to_f16(float value) { return floatToHalf(value); }
float tprt_bf16_to_f32(uint16_t value) { return bf16ToFloat(value); }
uint16_t tprt_f32_to_bf16(float value) { return floatToBf16(value); }

} // extern "C"

float tprt::halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {
      // Subnormal: normalize.
      exponent = 127 - 15 + 1;
      while (!(mantissa & 0x400u)) {
        mantissa <<= 1;
        --exponent;
      }
      mantissa &= 0x3ffu;
      bits = sign | (exponent << 23) | (mantissa << 13);
    }
  } else if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint16_t tprt::floatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  uint32_t sign = (bits >> 16) & 0x8000u;
  int32_t exponent = static_cast<int32_t>((bits >> 23) & 0xffu) - 127 + 15;
  uint32_t mantissa = bits & 0x7fffffu;
  if (((bits >> 23) & 0xffu) == 0xffu) // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0));
  if (exponent >= 0x1f)
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (exponent <= 0) {
    if (exponent < -10)
      return static_cast<uint16_t>(sign);
    mantissa |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exponent);
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u)))
      ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half =
      sign | (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
    ++half; // may carry into the exponent: correct rounding to inf
  return static_cast<uint16_t>(half);
}

namespace {

template <typename T> T combine(tprt_reduction reduction, T a, T b) {
  switch (reduction) {
  case TPRT_SUM:
    return a + b;
  case TPRT_MAX:
    return std::max(a, b);
  case TPRT_MIN:
    return std::min(a, b);
  case TPRT_PROD:
    return a * b;
  default:
    break;
  }
  return a;
}

template <typename T>
void reduceTyped(tprt_reduction reduction, T *dst, const void *const *srcs,
                 int64_t numSrcs, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    T acc = static_cast<const T *>(srcs[0])[i];
    for (int64_t s = 1; s < numSrcs; ++s)
      acc = combine(reduction, acc, static_cast<const T *>(srcs[s])[i]);
    dst[i] = acc;
  }
}

/// Sums in the common case without the per-element switch (the compiler
/// vectorizes the inner loop). `dst` may be the first source only.
template <typename T>
void sumTyped(T *dst, const void *const *srcs, int64_t numSrcs, int64_t count) {
  const T *first = static_cast<const T *>(srcs[0]);
  if (dst != first)
    moveBytes(dst, first, static_cast<size_t>(count) * sizeof(T));
  for (int64_t s = 1; s < numSrcs; ++s) {
    const T *src = static_cast<const T *>(srcs[s]);
    for (int64_t i = 0; i < count; ++i)
      dst[i] += src[i];
  }
}

template <float (*Load)(uint16_t), uint16_t (*Store)(float)>
void reduceNarrow(tprt_reduction reduction, uint16_t *dst,
                  const void *const *srcs, int64_t numSrcs, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    float acc = Load(static_cast<const uint16_t *>(srcs[0])[i]);
    for (int64_t s = 1; s < numSrcs; ++s)
      acc = combine(reduction, acc,
                    Load(static_cast<const uint16_t *>(srcs[s])[i]));
    dst[i] = Store(acc);
  }
}

} // namespace

namespace tprt {

bool isValidReduction(tprt_reduction reduction) {
  return reduction == TPRT_SUM || reduction == TPRT_MAX ||
         reduction == TPRT_MIN || reduction == TPRT_PROD;
}

bool isValidDtype(tprt_dtype dtype) { return tprt_dtype_size(dtype) != 0; }

void reduceInto(tprt_dtype dtype, tprt_reduction reduction, void *dst,
                const void *const *srcs, int64_t numSrcs, int64_t count) {
  // A sum whose destination is one of the sources but not the first would
  // have that source overwritten before it is read: use the general loop.
  bool dstIsLaterSource = false;
  for (int64_t s = 1; s < numSrcs; ++s)
    dstIsLaterSource |= srcs[s] == dst;
  bool fastSum = reduction == TPRT_SUM && !dstIsLaterSource;
  switch (dtype) {
  case TPRT_F32:
    if (fastSum)
      return sumTyped(static_cast<float *>(dst), srcs, numSrcs, count);
    return reduceTyped(reduction, static_cast<float *>(dst), srcs, numSrcs,
                       count);
  case TPRT_F64:
    if (fastSum)
      return sumTyped(static_cast<double *>(dst), srcs, numSrcs, count);
    return reduceTyped(reduction, static_cast<double *>(dst), srcs, numSrcs,
                       count);
  case TPRT_I32:
    return reduceTyped(reduction, static_cast<int32_t *>(dst), srcs, numSrcs,
                       count);
  case TPRT_I64:
    return reduceTyped(reduction, static_cast<int64_t *>(dst), srcs, numSrcs,
                       count);
  case TPRT_F16:
    return reduceNarrow<halfToFloat, floatToHalf>(
        reduction, static_cast<uint16_t *>(dst), srcs, numSrcs, count);
  case TPRT_BF16:
    return reduceNarrow<bf16ToFloat, floatToBf16>(
        reduction, static_cast<uint16_t *>(dst), srcs, numSrcs, count);
  default:
    // Callers validate the dtype first (checkCommon).
    return;
  }
}

void copyBox(const void *src, const int64_t *srcShape, const int64_t *srcOffset,
             void *dst, const int64_t *dstShape, const int64_t *dstOffset,
             const int64_t *boxShape, int32_t rank, size_t elemSize) {
  if (rank == 0) {
    std::memcpy(dst, src, elemSize);
    return;
  }
  for (int32_t d = 0; d < rank; ++d)
    if (boxShape[d] == 0)
      return;
  // Merge the trailing dimensions that the box covers whole in both tensors
  // into one contiguous run.
  int32_t inner = rank - 1;
  size_t run = static_cast<size_t>(boxShape[inner]) * elemSize;
  while (inner > 0 && boxShape[inner] == srcShape[inner] &&
         boxShape[inner] == dstShape[inner]) {
    --inner;
    run *= static_cast<size_t>(boxShape[inner]);
  }
  // Strides in bytes.
  std::vector<int64_t> srcStride(rank), dstStride(rank);
  int64_t s = static_cast<int64_t>(elemSize), t = s;
  for (int32_t d = rank - 1; d >= 0; --d) {
    srcStride[d] = s;
    dstStride[d] = t;
    s *= srcShape[d];
    t *= dstShape[d];
  }
  const char *srcBase = static_cast<const char *>(src);
  char *dstBase = static_cast<char *>(dst);
  for (int32_t d = 0; d < rank; ++d) {
    srcBase += srcOffset[d] * srcStride[d];
    dstBase += dstOffset[d] * dstStride[d];
  }
  // Iterate over the outer indices [0, inner) of the box.
  std::vector<int64_t> index(static_cast<size_t>(inner), 0);
  while (true) {
    int64_t srcOff = 0, dstOff = 0;
    for (int32_t d = 0; d < inner; ++d) {
      srcOff += index[d] * srcStride[d];
      dstOff += index[d] * dstStride[d];
    }
    copyBytes(dstBase + dstOff, srcBase + srcOff, run);
    int32_t d = inner - 1;
    while (d >= 0 && ++index[d] == boxShape[d]) {
      index[d] = 0;
      --d;
    }
    if (d < 0)
      break;
  }
}

int64_t product(const int64_t *shape, int32_t rank) {
  int64_t n = 1;
  for (int32_t d = 0; d < rank; ++d)
    n *= shape[d];
  return n;
}

} // namespace tprt
