//===- StripShardings.cpp - The unsharded program -------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Removes constraints (tp.annotate, tp.reshard: replaced by their operands),
// the tp.* attributes and the meshes; refuses local form.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Passes.h"

#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::tp {
#define GEN_PASS_DEF_STRIPSHARDINGSPASS
#include "tp/Dialect/TP/Transforms/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

bool isTPAttr(StringRef name) { return name.starts_with("tp."); }

struct StripShardingsPass
    : public tp::impl::StripShardingsPassBase<StripShardingsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<FunctionOpInterface>())
      if (func->hasAttr(TPDialect::kSpmdAttrName)) {
        func.emitOpError()
            << "is in local form (tp.spmd); only a program in global form "
               "can be unsharded";
        return signalPassFailure();
      }
    SmallVector<Operation *> constraints;
    module.walk([&](Operation *op) {
      if (isa<AnnotateOp, ReshardOp>(op))
        constraints.push_back(op);
    });
    removeDiscardableAttrs(module, isTPAttr);
    for (Operation *op : constraints) {
      op->getResult(0).replaceAllUsesWith(op->getOperand(0));
      op->erase();
    }
    for (MeshOp mesh : llvm::to_vector(module.getOps<MeshOp>()))
      mesh->erase();
  }
};

} // namespace
