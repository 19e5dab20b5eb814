//===- Canonicalize.cpp - --tp-canonicalize -------------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The canonicalization patterns of every loaded dialect and registered op,
// applied in one sweep of the greedy driver without region simplification,
// as the last step of --tp-spmd. Upstream's canonicalizer never reports an
// unchanged IR; this one marks all analyses preserved when its sweep changed
// nothing, so the pass manager skips the full verification after it.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tp {
#define GEN_PASS_DEF_CANONICALIZEPASS
#include "tp/Dialect/TP/Transforms/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

struct CanonicalizePass
    : public tp::impl::CanonicalizePassBase<CanonicalizePass> {
  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet owning(context);
    for (Dialect *dialect : context->getLoadedDialects())
      dialect->getCanonicalizationPatterns(owning);
    for (RegisteredOperationName op : context->getRegisteredOperations())
      op.getCanonicalizationPatterns(owning, context);
    patterns = std::make_shared<FrozenRewritePatternSet>(std::move(owning));
    return success();
  }

  void runOnOperation() override {
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    config.setMaxIterations(1);
    bool changed = false;
    // One sweep is the point: not converging within it is no failure.
    (void)applyPatternsGreedily(getOperation(), *patterns, config, &changed);
    changedSweeps += changed ? 1 : 0;
    if (!changed)
      markAllAnalysesPreserved();
  }

  std::shared_ptr<const FrozenRewritePatternSet> patterns;
};

} // namespace
