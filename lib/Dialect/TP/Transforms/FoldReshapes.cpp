//===- FoldReshapes.cpp - Fold reshapes into linalg iteration spaces ------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// 1. Upstream fusion by expansion: a collapse_shape feeding a linalg op, or an
//    expand_shape of its result (when the result has no other user), is
//    folded by expanding the op's loops.
// 2. linalg.softmax moves across a collapse_shape that leaves its normalized
//    dimension alone (upstream fusion does not know softmax).
// 3. Canonicalization cancels expand/collapse pairs and folds reshapes of
//    tensor.empty and linalg.fill.
// Before these, a function argument that one of its users expands is read
// expanded by every linalg user: a model's first layer then computes in the
// shapes its later layers do (they read the residual stream expanded by the
// layer before), and the layers compile as one.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Passes.h"

#include "tp/Dialect/TP/IR/UpstreamChecks.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::tp {
#define GEN_PASS_DEF_FOLDRESHAPESPASS
#include "tp/Dialect/TP/Transforms/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// Whether `collapse` merges a dimension that its producer broadcasts (a
/// linalg op loop no input reads) with another dimension.
bool mergesBroadcast(tensor::CollapseShapeOp collapse) {
  auto producer = collapse.getSrc().getDefiningOp<linalg::LinalgOp>();
  if (!producer || producer.getNumDpsInits() != 1 ||
      !producer.getIndexingMapsArray().back().isIdentity())
    return false;
  llvm::SmallBitVector read(producer.getNumLoops());
  for (OpOperand *input : producer.getDpsInputOperands())
    for (AffineExpr e : producer.getMatchingIndexingMap(input).getResults())
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        read.set(dim.getPosition());
  for (const ReassociationIndices &group : collapse.getReassociationIndices())
    if (group.size() > 1 && llvm::any_of(group, [&](int64_t d) {
          return !read.test(d) && collapse.getSrcType().getDimSize(d) != 1;
        }))
      return true;
  return false;
}

/// Gives the linalg users of every argument of `func` that is also read
/// expanded the expanded form: one expand_shape at the top of the body
/// serves every user, the flat ones through a collapse_shape of it for fusion
/// by expansion to fold into them. Only where every expand_shape of the
/// argument makes the same static shape. Each argument once (`done`);
/// returns whether any was given.
bool expandArgumentUses(FunctionOpInterface func, OpBuilder &builder,
                        llvm::DenseSet<Value> &done) {
  if (func.isExternal())
    return false;
  bool changed = false;
  Block &entry = func.getFunctionBody().front();
  for (BlockArgument arg : entry.getArguments()) {
    if (done.contains(arg))
      continue;
    SmallVector<OpOperand *> flat;
    SmallVector<tensor::ExpandShapeOp> expands;
    bool agree = true;
    for (OpOperand &use : arg.getUses()) {
      Operation *user = use.getOwner();
      if (auto expand = dyn_cast<tensor::ExpandShapeOp>(user)) {
        agree &= expand.getResultType().hasStaticShape() &&
                 user->getBlock() == &entry &&
                 (expands.empty() ||
                  (expand.getResultType() == expands[0].getResultType() &&
                   expand.getReassociationIndices() ==
                       expands[0].getReassociationIndices()));
        expands.push_back(expand);
      } else if (isa<linalg::LinalgOp>(user) && user->getBlock() == &entry) {
        flat.push_back(&use);
      }
    }
    if (!agree || expands.empty() || flat.empty())
      continue;
    tensor::ExpandShapeOp common = expands.front();
    common->moveBefore(&entry, entry.begin());
    for (tensor::ExpandShapeOp expand : ArrayRef(expands).drop_front()) {
      expand.getResult().replaceAllUsesWith(common.getResult());
      expand->erase();
    }
    builder.setInsertionPointAfter(common);
    auto collapse = tensor::CollapseShapeOp::create(
        builder, common.getLoc(), arg.getType(), common.getResult(),
        common.getReassociationIndices());
    for (OpOperand *use : flat)
      use->set(collapse);
    done.insert(arg);
    changed = true;
  }
  return changed;
}

/// softmax(collapse_shape(x)) -> collapse_shape(softmax(x)) when the
/// normalized dimension is a group of its own.
struct SoftmaxThroughCollapse : public OpRewritePattern<linalg::SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::SoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    auto collapse = op.getInput().getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse || op->getNumResults() != 1)
      return rewriter.notifyMatchFailure(op, "input is not a collapse_shape");
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    int64_t dim = op.getDimension();
    if (groups[dim].size() != 1)
      return rewriter.notifyMatchFailure(op, "normalized dimension is merged");
    RankedTensorType srcType = collapse.getSrcType();
    if (!srcType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    Location loc = op.getLoc();
    Value init = tensor::EmptyOp::create(rewriter, loc, srcType.getShape(),
                                         srcType.getElementType());
    auto softmax = linalg::SoftmaxOp::create(
        rewriter, loc, TypeRange{srcType}, collapse.getSrc(), init,
        static_cast<uint64_t>(groups[dim].front()));
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        op, op->getResult(0).getType(), softmax->getResult(0), groups);
    return success();
  }
};

struct FoldReshapesPass
    : public tp::impl::FoldReshapesPassBase<FoldReshapesPass> {
  void runOnOperation() override {
    // Nothing to fold without reshapes; skip the rewrite driver's walk.
    bool hasReshape = false;
    getOperation()->walk([&](Operation *op) {
      if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op)) {
        hasReshape = true;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (!hasReshape)
      return markAllAnalysesPreserved();
    // MLIR 22's verifier accepts an expand_shape whose static output_shape
    // disagrees with its result type (docs/known-issues.md); the folding
    // patterns then build reshapes that do not verify. Refuse it here.
    if (failed(tp::checkExpandShapeSizes(getOperation())) ||
        failed(tp::checkReassociations(getOperation())))
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    // A linalg op whose result also has other users is not expanded into a
    // reshape of it: the original would stay for those users, computed twice,
    // and a training step (activations reused by the backward pass) would
    // grow with every round of rewriting.
    //
    // A collapse that merges a broadcast dimension into another (repeat_kv:
    // [b, kv, rep, s, d] -> [b, kv * rep, s, d]) is not folded into its
    // consumer: folding would regroup the consumer's heads (and through it
    // the queries' and the output projection's) as [kv, rep], whose split
    // over more devices than KV heads no sharding expresses. Kept, the
    // repeated tensor is made whole where the KV projections are
    // replicated, and sliced by heads for free.
    linalg::populateFoldReshapeOpsByExpansionPatterns(
        patterns, [](OpOperand *fused) {
          Value source = fused->get();
          if (auto collapse = source.getDefiningOp<tensor::CollapseShapeOp>())
            if (mergesBroadcast(collapse))
              return false;
          return !isa_and_nonnull<linalg::LinalgOp>(source.getDefiningOp()) ||
                 source.hasOneUse();
        });
    patterns.add<SoftmaxThroughCollapse>(ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::FillOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::populateFoldTensorEmptyPatterns(patterns);
    FrozenRewritePatternSet frozen(std::move(patterns));
    // The expansions of arguments appear as their users are folded; each
    // argument is given to its flat users once, then folding runs again.
    OpBuilder builder(ctx);
    llvm::DenseSet<Value> done;
    bool again = true;
    GreedyRewriteConfig config;
    // Only where reshapes are: every pattern here is rooted at a reshape, at
    // the linalg op (or softmax) that reads a collapse, or at the producer
    // of an expand; the driver follows what each rewrite creates and
    // touches. Run over the whole module, the driver visited every op of a
    // deep model, reshapes or not (a 1,024-layer GPT: 170,000 ops, 8,000 of
    // them reshapes), tried each pattern and fold on it, and simplified its
    // regions after each sweep: 0.73 s there, against 0.42 s seeded.
    config.setStrictness(GreedyRewriteStrictness::AnyOp);
    SmallVector<Operation *> seeds;
    llvm::DenseSet<Operation *> seeded;
    auto seed = [&](Operation *op) {
      if (op && seeded.insert(op).second)
        seeds.push_back(op);
    };
    while (again) {
      seeds.clear();
      seeded.clear();
      getOperation()->walk([&](Operation *op) {
        if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op))
          return;
        seed(op->getOperand(0).getDefiningOp());
        seed(op);
        if (isa<tensor::CollapseShapeOp>(op))
          for (Operation *user : op->getUsers())
            seed(user);
      });
      if (failed(applyOpPatternsGreedily(seeds, frozen, config))) {
        getOperation()->emitError(
            "--tp-fold-reshapes did not converge: its reshape folding "
            "patterns kept rewriting this function");
        return signalPassFailure();
      }
      again = false;
      getOperation()->walk([&](FunctionOpInterface func) {
        again |= expandArgumentUses(func, builder, done);
      });
    }
  }
};

} // namespace
