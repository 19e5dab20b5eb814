//===- UpstreamChecks.h - What MLIR 22's verifiers let through --*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Upstream ops that MLIR 22's verifiers accept in a form that later breaks
// an upstream transformation (docs/known-issues.md). The passes that would
// break on them check their input with these first and refuse it with a
// diagnostic.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_IR_UPSTREAMCHECKS_H
#define TP_DIALECT_TP_IR_UPSTREAMCHECKS_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

namespace mlir::tp {

/// Fails, with an error on the op, on the first `tensor.expand_shape` under
/// `root` whose static `output_shape` disagrees with its result type: the
/// verifier accepts it, and the reshape folding patterns and bufferization
/// (`memref.expand_shape`, which checks) then build ops that do not verify.
LogicalResult checkExpandShapeSizes(Operation *root);

/// True when the reassociation of a `tensor.expand_shape` or
/// `tensor.collapse_shape` names, in order, each dimension of its expanded
/// type once (0, 1, ..., rank - 1): the verifier reads the indices as 32-bit
/// numbers, so an index beyond 32 bits that wraps to a valid one passes it.
bool hasExactReassociation(Operation *reshape);

/// Fails, with an error on the op, on the first reshape under `root` whose
/// reassociation is not exact (hasExactReassociation).
LogicalResult checkReassociations(Operation *root);

} // namespace mlir::tp

#endif // TP_DIALECT_TP_IR_UPSTREAMCHECKS_H
