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

bool mlir::tp::hasExactReassociation(Operation *reshape) {
  SmallVector<ReassociationIndices> groups;
  RankedTensorType expanded;
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(reshape)) {
    groups = expand.getReassociationIndices();
    expanded = expand.getResultType();
  } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(reshape)) {
    groups = collapse.getReassociationIndices();
    expanded = collapse.getSrcType();
  } else {
    return true;
  }
  int64_t next = 0;
  for (const ReassociationIndices &group : groups)
    for (int64_t index : group)
      if (index != next++)
        return false;
  return next == expanded.getRank();
}

LogicalResult mlir::tp::checkReassociations(Operation *root) {
  WalkResult bad = root->walk([&](Operation *op) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op) ||
        hasExactReassociation(op))
      return WalkResult::advance();
    op->emitOpError("reassociation ")
        << op->getAttr("reassociation")
        << " does not name each dimension of the expanded type once, in "
           "order";
    return WalkResult::interrupt();
  });
  return failure(bad.wasInterrupted());
}
