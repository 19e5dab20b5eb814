//===- Structure.cpp - What propagation and partitioning can split --------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Structure.h"

#include "tp/Dialect/TP/IR/TPAttrs.h"
#include "tp/Dialect/TP/IR/TPDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

bool isTensor(Value v) { return isa<TensorType>(v.getType()); }

/// True when `op` or anything nested in it uses or defines a tensor.
bool touchesTensors(Operation *op) {
  WalkResult result = op->walk([](Operation *nested) {
    if (llvm::any_of(nested->getOperands(), isTensor) ||
        llvm::any_of(nested->getResults(), isTensor))
      return WalkResult::interrupt();
    for (Region &region : nested->getRegions())
      for (Block &block : region)
        if (llvm::any_of(block.getArguments(), isTensor))
          return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// True when something nested in `op` is a tp op (a constraint, a reshard)
/// or carries a sharding that splits or is pending: `op` is not simply
/// replicated.
bool holdsShardings(Operation *op) {
  WalkResult result = op->walk([&](Operation *nested) {
    if (nested == op)
      return WalkResult::advance();
    if (isa<TPDialect>(nested->getDialect()))
      return WalkResult::interrupt();
    if (auto shardings =
            nested->getAttrOfType<ArrayAttr>(TPDialect::kShardingsAttrName))
      for (Attribute entry : shardings)
        if (auto sharding = dyn_cast<ShardingAttr>(entry);
            sharding && !sharding.isFullyReplicated())
          return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

} // namespace

LogicalResult mlir::tp::checkSingleBlock(FunctionOpInterface func) {
  Region &body = func.getFunctionBody();
  if (body.empty() || body.hasOneBlock())
    return success();
  return func.emitOpError()
         << "has " << body.getBlocks().size()
         << " blocks; sharding handles functions of one block (structured "
            "control flow), not branches between blocks";
}

LogicalResult mlir::tp::checkShardableStructure(FunctionOpInterface func) {
  if (failed(checkSingleBlock(func)))
    return failure();
  WalkResult result =
      func.walk([&](Operation *op) {
        if (op == func.getOperation())
          return WalkResult::advance();
        if (isa<RegionBranchOpInterface>(op) && touchesTensors(op) &&
            holdsShardings(op)) {
          op->emitOpError()
              << "is control flow over tensors with shardings inside, which "
                 "partitioning does not split yet (it runs such regions "
                 "replicated only); unroll the loop or move the constraint out "
                 "of the region";
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
  return failure(result.wasInterrupted());
}
