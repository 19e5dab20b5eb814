//===- Gemm.h - The GEMM recogniser every lowering shares -------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// One recogniser finds the linalg contractions on buffers that are (batched,
// transposed) GEMMs; each target says, through a GemmTarget, which element
// types it multiplies and what call a GEMM becomes (OpenBLAS through the
// runtime on the CPU; cuBLAS on CUDA).
//
//===----------------------------------------------------------------------===//

#ifndef TP_CONVERSION_COMMON_GEMM_H
#define TP_CONVERSION_COMMON_GEMM_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::tp {

/// An operand of a GEMM seen as a (batch of) row-major matrices, in
/// elements: the leading dimension (row stride of the stored matrix),
/// whether it is stored transposed, and one stride per batch loop.
struct GemmOperand {
  int64_t leadingDim = 0;
  bool transposed = false;
  SmallVector<int64_t, 2> batchStrides;
};

/// C += op(A) * op(B) for each of up to two batch loops: A is M x K (or
/// K x M, transposed), B is K x N (or N x K), C is M x N (never transposed).
struct Gemm {
  int64_t m = 1, n = 1, k = 1;
  SmallVector<int64_t, 2> batchSizes;
  GemmOperand a, b, c;
  /// The element type of all three operands.
  Type elementType;

  int64_t batchSize(unsigned i) const {
    return i < batchSizes.size() ? batchSizes[i] : 1;
  }
};

/// `op` as a GEMM: a linalg contraction (named matmul / batch_matmul, or a
/// generic whose body multiplies and accumulates) on statically shaped
/// memrefs of one float type, whose m, n and k loops are each adjacent and
/// in the same order in the operands that hold them, one group innermost in
/// each operand; nothing otherwise.
std::optional<Gemm> matchGemm(linalg::LinalgOp op);

/// What a GEMM becomes on one target.
class GemmTarget {
public:
  virtual ~GemmTarget();
  /// Whether the target multiplies this element type (others stay loops).
  virtual bool supportsElementType(Type type) const = 0;
  /// Emits C += op(A) op(B), or C = op(A) op(B) unless `accumulate` (C
  /// was just zeroed, and the zeroing is gone). `a`, `b` and `c` are
  /// buffers with identity layouts (the driver makes strided inputs
  /// contiguous); `rankContext` is the function's rank context.
  virtual void emitGemm(OpBuilder &builder, Location loc, Value rankContext,
                        const Gemm &gemm, Value a, Value b, Value c,
                        bool accumulate) const = 0;
};

/// Replaces every GEMM of `func` that `target` supports by its call (see
/// GemmTarget), copying strided inputs to contiguous buffers (freed after the
/// call); GEMMs with a strided output stay loops. `func`'s first argument is
/// the rank context. Returns how many were replaced.
int64_t convertGemms(func::FuncOp func, const GemmTarget &target);

} // namespace mlir::tp

#endif // TP_CONVERSION_COMMON_GEMM_H
