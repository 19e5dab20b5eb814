//===- UnshareFills.cpp - Every destination its own zeroed buffer ---------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tp {
#define GEN_PASS_DEF_UNSHAREFILLSPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

struct UnshareFillsPass
    : public tp::impl::UnshareFillsPassBase<UnshareFillsPass> {
  /// One zeroed tensor as the destination of several ops (a user's IR
  /// that fills once for every GEMM of a shape, or tp-fuse-reductions'
  /// CSE) would bufferize as one buffer zeroed once and copied for every
  /// destination but the last; an empty tensor shared with unrelated ops
  /// would have the fill zero a buffer an earlier op wrote. Every fill gets
  /// its own empty tensor, and each destination in the fill's block its
  /// own fill: a fresh buffer whose zeroing the GEMM lowering drops, or a
  /// reduction's row kernel starts from in a register.
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::FillOp> fills;
    getOperation()->walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() &&
          fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
        fills.push_back(fill);
    });
    for (linalg::FillOp fill : fills) {
      OpOperand &output = fill.getDpsInitsMutable()[0];
      auto empty = output.get().getDefiningOp<tensor::EmptyOp>();
      if (!empty->hasOneUse()) {
        rewriter.setInsertionPoint(fill);
        Operation *own = rewriter.clone(*empty);
        rewriter.modifyOpInPlace(fill, [&] { output.set(own->getResult(0)); });
        empty = cast<tensor::EmptyOp>(own);
      }
      SmallVector<OpOperand *> uses = llvm::to_vector(
          llvm::make_pointer_range(fill->getResult(0).getUses()));
      if (uses.size() < 2 || llvm::any_of(uses, [&](OpOperand *use) {
            return use->getOwner()->getBlock() != fill->getBlock();
          }))
        continue;
      // The earliest destination keeps the original.
      llvm::sort(uses, [](OpOperand *a, OpOperand *b) {
        return a->getOwner()->isBeforeInBlock(b->getOwner());
      });
      for (OpOperand *use : llvm::drop_begin(uses)) {
        auto destination =
            dyn_cast<DestinationStyleOpInterface>(use->getOwner());
        if (!destination || !destination.isDpsInit(use))
          continue;
        rewriter.setInsertionPoint(use->getOwner());
        Operation *ownEmpty = rewriter.clone(*empty);
        IRMapping mapping;
        mapping.map(empty.getResult(), ownEmpty->getResult(0));
        Operation *ownFill = rewriter.clone(*fill, mapping);
        rewriter.modifyOpInPlace(use->getOwner(),
                                 [&] { use->set(ownFill->getResult(0)); });
      }
    }
  }
};

} // namespace
