//===- UpstreamChecks.cpp - What MLIR 22's verifiers let through ----------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/IR/UpstreamChecks.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

LogicalResult mlir::tp::checkExpandShapeSizes(Operation *root) {
  WalkResult bad = root->walk([&](tensor::ExpandShapeOp op) {
    ArrayRef<int64_t> declared = op.getStaticOutputShape();
    ArrayRef<int64_t> shape = op.getResultType().getShape();
    for (auto [i, size] : llvm::enumerate(declared)) {
      if (i >= shape.size() || ShapedType::isDynamic(size) ||
          ShapedType::isDynamic(shape[i]) || size == shape[i])
        continue;
      op.emitError("output_shape [")
          << llvm::make_range(declared.begin(), declared.end())
          << "] disagrees with the result type " << op.getResultType()
          << " at dimension " << i << " (" << size << " vs " << shape[i] << ")";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(bad.wasInterrupted());
}
