//===- OptimizeCollectives.cpp - Fold, merge and remove collectives -------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// 1. Patterns: all_reduce + all_slice -> reduce_scatter; all_gather +
//    all_slice -> nothing; all_slice + all_gather -> nothing; a collective
//    over a group of one device -> its operand. The greedy driver also
//    erases collectives left without uses (they are Pure).
// 2. Identical collectives of one value (same op, operand and attributes)
//    are merged, block by block.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Passes.h"

#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tp {
#define GEN_PASS_DEF_OPTIMIZECOLLECTIVESPASS
#include "tp/Dialect/TP/Transforms/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

bool sameGroup(Operation *a, Operation *b) {
  return a->getAttr("mesh") == b->getAttr("mesh") &&
         a->getAttr("axes") == b->getAttr("axes");
}

/// all_slice(all_reduce(x)) -> reduce_scatter(x).
struct AllReduceThenSlice : public OpRewritePattern<AllSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AllSliceOp slice,
                                PatternRewriter &rewriter) const override {
    // Buffer forms have no results: their inputs are never collectives.
    auto reduce = slice.getInput().getDefiningOp<AllReduceOp>();
    if (!reduce || !reduce->hasOneUse() || !sameGroup(reduce, slice))
      return rewriter.notifyMatchFailure(slice, "not a lone all_reduce");
    rewriter.replaceOpWithNewOp<ReduceScatterOp>(
        slice, slice.getResult().getType(), reduce.getKindAttr(),
        reduce.getInput(), reduce.getMeshAttr(), reduce.getAxes(),
        slice.getDimAttr(), /*output=*/Value());
    rewriter.eraseOp(reduce);
    return success();
  }
};

/// all_slice(all_gather(x)) on the same dimension -> x.
struct GatherThenSlice : public OpRewritePattern<AllSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AllSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto gather = slice.getInput().getDefiningOp<AllGatherOp>();
    if (!gather || !sameGroup(gather, slice) ||
        gather.getDim() != slice.getDim())
      return rewriter.notifyMatchFailure(slice, "not the gather's inverse");
    rewriter.replaceOp(slice, gather.getInput());
    return success();
  }
};

/// all_gather(all_slice(x)) on the same dimension -> x (x was replicated
/// over the group, so gathering its blocks rebuilds it).
struct SliceThenGather : public OpRewritePattern<AllGatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AllGatherOp gather,
                                PatternRewriter &rewriter) const override {
    auto slice = gather.getInput().getDefiningOp<AllSliceOp>();
    if (!slice || !sameGroup(gather, slice) ||
        gather.getDim() != slice.getDim())
      return rewriter.notifyMatchFailure(gather, "not the slice's inverse");
    rewriter.replaceOp(gather, slice.getInput());
    return success();
  }
};

/// A collective over a group of one device (axes of size 1: a mesh of one
/// device, or a tp=1 plan) is the identity.
template <typename OpTy> struct GroupOfOne : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (op.hasBufferSemantics() ||
        op.getInput().getType() != op.getResult().getType())
      return rewriter.notifyMatchFailure(op, "not a tensor identity");
    auto mesh =
        SymbolTable::lookupNearestSymbolFrom<MeshOp>(op, op.getMeshAttr());
    if (!mesh || op.getGroupSize(mesh) != 1)
      return rewriter.notifyMatchFailure(op, "a group of several devices");
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};

bool isCollective(Operation *op) {
  return isa<AllReduceOp, AllGatherOp, ReduceScatterOp, AllToAllOp, AllSliceOp,
             AxisIndexOp>(op);
}

/// The collectives under `root`, in program order (linalg bodies hold only
/// scalars and are skipped).
SmallVector<Operation *> collectCollectives(Operation *root) {
  SmallVector<Operation *> found;
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isCollective(op))
      found.push_back(op);
    return isa<linalg::LinalgOp>(op) ? WalkResult::skip()
                                     : WalkResult::advance();
  });
  return found;
}

/// Merges identical collectives of one block (the first dominates the rest);
/// candidates are bucketed by a structural hash.
/// Returns true when some collective was merged.
bool mergeDuplicates(ArrayRef<Operation *> collectives) {
  bool merged = false;
  DenseMap<std::pair<Block *, llvm::hash_code>, SmallVector<Operation *, 1>>
      seen;
  for (Operation *op : collectives) {
    llvm::hash_code hash = OperationEquivalence::computeHash(
        op, OperationEquivalence::directHashValue,
        OperationEquivalence::ignoreHashValue,
        OperationEquivalence::Flags::IgnoreLocations);
    SmallVector<Operation *, 1> &bucket = seen[{op->getBlock(), hash}];
    Operation *same = nullptr;
    for (Operation *prev : bucket)
      if (OperationEquivalence::isEquivalentTo(
              prev, op, OperationEquivalence::Flags::IgnoreLocations)) {
        same = prev;
        break;
      }
    if (!same) {
      bucket.push_back(op);
      continue;
    }
    op->replaceAllUsesWith(same);
    op->erase();
    merged = true;
  }
  return merged;
}

struct OptimizeCollectivesPass
    : public tp::impl::OptimizeCollectivesPassBase<OptimizeCollectivesPass> {
  void runOnOperation() override {
    SmallVector<Operation *> collectives = collectCollectives(getOperation());
    if (collectives.empty())
      return markAllAnalysesPreserved();
    bool changed = mergeDuplicates(collectives);
    // The patterns only match at collectives: apply them to those (and to
    // what they create) rather than walking every op with a rewrite driver.
    collectives = collectCollectives(getOperation());
    RewritePatternSet patterns(&getContext());
    patterns.add<AllReduceThenSlice, GatherThenSlice, SliceThenGather,
                 GroupOfOne<AllReduceOp>, GroupOfOne<AllGatherOp>,
                 GroupOfOne<ReduceScatterOp>, GroupOfOne<AllToAllOp>,
                 GroupOfOne<AllSliceOp>>(&getContext());
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    bool rewritten = false;
    (void)applyOpPatternsGreedily(collectives, std::move(patterns), config,
                                  &rewritten);
    changed |= rewritten;
    // Collectives nobody reads, and the ones feeding only those.
    SmallVector<Operation *> dead;
    for (Operation *op : collectCollectives(getOperation()))
      if (op->use_empty())
        dead.push_back(op);
    while (!dead.empty()) {
      Operation *op = dead.pop_back_val();
      SmallVector<Value> operands(op->getOperands());
      op->erase();
      changed = true;
      for (Value v : operands)
        if (Operation *def = v.getDefiningOp();
            def && isCollective(def) && def->use_empty())
          dead.push_back(def);
    }
    // Unchanged IR needs no second verification.
    if (!changed)
      markAllAnalysesPreserved();
  }
};

} // namespace
