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
// The sweep leaves the scalar bodies of linalg ops alone: partitioning copies
// them as they are (it only offsets a split loop's linalg.index), and the
// lowering's own canonicalizer folds them. Constants are still unified and
// hoisted everywhere first, bodies included, as the greedy driver over the
// whole region does; the ops outside bodies then go to the driver in the
// order it would have visited them. Trying every body op's folder and
// patterns was half of the sweep (bench_upstream.py's 64-layer stack: 10.2M
// -> 5.3M instructions).
//
// One upstream pattern is only tried where it can apply: linalg's
// InferStaticShapeOfOperands gives a dynamically sized operand of a linalg op
// the static size another operand implies. On an op whose operands are all
// statically shaped it rebuilds every operand's type only to fail, and was
// half of the sweep on a statically shaped model; it now runs only on ops
// with a dynamically shaped operand, which is every op it could change.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/FoldUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tp {
#define GEN_PASS_DEF_CANONICALIZEPASS
#include "tp/Dialect/TP/Transforms/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// Upstream patterns that only change a linalg op with a dynamically shaped
/// operand, by their debug names (the type names RewritePattern::create
/// gives them).
constexpr llvm::StringLiteral kDynamicShapesOnly[] = {
    "(anonymous namespace)::InferStaticShapeOfOperands"};

bool hasDynamicShape(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  return shaped && !shaped.hasStaticShape();
}

/// `wrapped`, tried only on ops with a dynamically shaped operand.
class OnDynamicShapes final : public RewritePattern {
public:
  explicit OnDynamicShapes(std::unique_ptr<RewritePattern> wrapped)
      : RewritePattern(*wrapped), wrapped(std::move(wrapped)) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (llvm::none_of(op->getOperandTypes(), hasDynamicShape))
      return failure();
    return wrapped->matchAndRewrite(op, rewriter);
  }

private:
  std::unique_ptr<RewritePattern> wrapped;
};

struct CanonicalizePass
    : public tp::impl::CanonicalizePassBase<CanonicalizePass> {
  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet owning(context);
    for (Dialect *dialect : context->getLoadedDialects())
      dialect->getCanonicalizationPatterns(owning);
    for (RegisteredOperationName op : context->getRegisteredOperations())
      op.getCanonicalizationPatterns(owning, context);
    for (std::unique_ptr<RewritePattern> &pattern : owning.getNativePatterns())
      if (llvm::is_contained(kDynamicShapesOnly, pattern->getDebugName()))
        pattern = std::make_unique<OnDynamicShapes>(std::move(pattern));
    patterns = std::make_shared<FrozenRewritePatternSet>(std::move(owning));
    return success();
  }

  void runOnOperation() override {
    Operation *root = getOperation();
    bool changed = false;
    // Post-order, as the greedy driver fills its worklist: constants unified
    // and hoisted, every other op outside a linalg body kept for the sweep.
    SmallVector<Operation *> ops;
    OperationFolder constants(&getContext());
    root->walk([&](Operation *op) {
      if (op == root)
        return;
      Attribute value;
      if (matchPattern(op, m_Constant(&value))) {
        Block *block = op->getBlock();
        Operation *before = op->getPrevNode();
        if (!constants.insertKnownConstant(op, value)) {
          changed = true; // a duplicate: replaced by the first and erased
          return;
        }
        changed |= op->getBlock() != block || op->getPrevNode() != before;
      }
      for (Operation *parent = op->getParentOp(); parent != root;
           parent = parent->getParentOp())
        if (isa<linalg::LinalgOp>(parent))
          return;
      ops.push_back(op);
    });
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    bool rewritten = false;
    // One sweep is the point: not converging within it is no failure.
    (void)applyOpPatternsGreedily(ops, *patterns, config, &rewritten);
    changed |= rewritten;
    changedSweeps += changed ? 1 : 0;
    if (!changed)
      markAllAnalysesPreserved();
  }

  std::shared_ptr<const FrozenRewritePatternSet> patterns;
};

} // namespace
