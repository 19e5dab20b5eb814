//===- ReturnBuffersUnreshaped.cpp - No copy for a reshaped result --------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// `return collapse_shape(alloc)` becomes `return alloc'` with alloc' of the
// result's shape and the old buffer an expand_shape view of it: MLIR 22's
// buffer-results-to-out-params gives a returned alloc the caller's
// out-parameter, and copies any other returned buffer into it.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::tp {
#define GEN_PASS_DEF_RETURNBUFFERSUNRESHAPEDPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// A static buffer with the identity layout: every reshape of it is a view.
bool isPlainStatic(MemRefType type) {
  return type.hasStaticShape() && type.getLayout().isIdentity();
}

/// The allocation that `result` reshapes, when it can be allocated at the
/// result's shape instead: a static, identity-layout memref.alloc in the
/// function's entry block, neither freed nor reallocated, reshaped by
/// `reshape` and returned by nothing else of `ret`.
memref::AllocOp rewritableSource(Operation *reshape, func::ReturnOp ret,
                                 Block &entry) {
  if (!reshape || !isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(reshape))
    return {};
  auto alloc = reshape->getOperand(0).getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != &entry ||
      !isPlainStatic(alloc.getType()) ||
      !isPlainStatic(cast<MemRefType>(reshape->getResult(0).getType())))
    return {};
  // A buffer freed or reallocated here cannot become the caller's.
  if (llvm::any_of(alloc->getUsers(),
                   llvm::IsaPred<memref::DeallocOp, memref::ReallocOp>))
    return {};
  // Another result that is the buffer or reads from it: one buffer backs
  // two results, and which of them gets it is left to
  // buffer-results-to-out-params (it copies the other), as before.
  unsigned uses = 0;
  for (Value v : ret.getOperands()) {
    if (v == alloc.getResult())
      return {};
    if (Operation *def = v.getDefiningOp();
        def && def->getNumOperands() && def->getOperand(0) == alloc.getResult())
      ++uses;
  }
  return uses == 1 ? alloc : memref::AllocOp();
}

struct ReturnBuffersUnreshapedPass
    : public tp::impl::ReturnBuffersUnreshapedPassBase<
          ReturnBuffersUnreshapedPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.getBody().hasOneBlock())
        continue;
      Block &entry = func.getBody().front();
      auto ret = dyn_cast<func::ReturnOp>(entry.getTerminator());
      if (!ret)
        continue;
      for (OpOperand &operand : ret->getOpOperands()) {
        Operation *reshape = operand.get().getDefiningOp();
        memref::AllocOp alloc = rewritableSource(reshape, ret, entry);
        if (!alloc)
          continue;
        auto resultType = cast<MemRefType>(operand.get().getType());
        OpBuilder b(alloc);
        auto fresh =
            memref::AllocOp::create(b, alloc.getLoc(), resultType, ValueRange(),
                                    alloc.getAlignmentAttr());
        // The inverse reshape over the same reassociation.
        Value view;
        if (auto collapse = dyn_cast<memref::CollapseShapeOp>(reshape))
          view = memref::ExpandShapeOp::create(
              b, reshape->getLoc(), alloc.getType().getShape(), fresh,
              collapse.getReassociationIndices());
        else
          view = memref::CollapseShapeOp::create(
              b, reshape->getLoc(), fresh,
              cast<memref::ExpandShapeOp>(reshape).getReassociationIndices());
        alloc.replaceAllUsesWith(view);
        operand.set(fresh);
        if (reshape->use_empty())
          reshape->erase();
        alloc.erase();
      }
    }
  }
};

} // namespace
