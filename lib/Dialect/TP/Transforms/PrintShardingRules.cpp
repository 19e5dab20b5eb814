//===- PrintShardingRules.cpp - Report every op's sharding rule -----------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Passes.h"

#include "tp/Dialect/TP/IR/TPInterfaces.h"
#include "tp/Dialect/TP/IR/TPOps.h"

namespace mlir::tp {
#define GEN_PASS_DEF_PRINTSHARDINGRULESPASS
#include "tp/Dialect/TP/Transforms/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

bool touchesTensors(Operation *op) {
  auto isTensor = [](Type t) { return isa<TensorType>(t); };
  return llvm::any_of(op->getOperandTypes(), isTensor) ||
         llvm::any_of(op->getResultTypes(), isTensor);
}

struct PrintShardingRulesPass
    : public tp::impl::PrintShardingRulesPassBase<PrintShardingRulesPass> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      if (isa<TPDialect>(op->getDialect()) ||
          op->hasTrait<OpTrait::IsTerminator>() || !touchesTensors(op))
        return;
      FailureOr<ShardingRule> rule = getShardingRule(op);
      if (succeeded(rule))
        op->emitRemark() << "sharding rule: " << rule->str();
      else
        op->emitRemark() << "no sharding rule";
    });
  }
};

} // namespace
