//===- ExpandArith.cpp - --tp-expand-arith --------------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// arith-expand-ops' rewrites minus the float minimum/maximum ones: LLVM
// lowers those to intrinsics (llvm.maximum, llvm.maxnum, ...) that it
// vectorizes in reductions, where their compare-and-select expansion, which
// keeps NaN semantics, stays scalar.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tp {
#define GEN_PASS_DEF_EXPANDARITHPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

struct ExpandArithPass : public tp::impl::ExpandArithPassBase<ExpandArithPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    if (bf16Conversions)
      arith::populateExpandBFloat16Patterns(patterns);
    arith::populateExpandScalingExtTruncPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation()->emitError("--tp-expand-arith did not converge");
      return signalPassFailure();
    }
  }
};

} // namespace
