//===- FuseReductions.cpp - Row-wise chains into one loop over rows -------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A layernorm is a sum, a sum of squares and a normalization: three passes
// over the activations, each reading them from memory. A softmax with its
// scale and mask is five. Each of these ops works on one row at a time (its
// leading loops are parallel and index every operand the same way), so the
// whole chain can run row by row: the consumer at its end is tiled along
// those leading loops (scf.for) and its producers in the chain are fused
// into the tile (upstream's tile-and-fuse through TilingInterface), which
// leaves every intermediate a small tile that stays in cache.
//
// A producer joins the chain only if every use of it is in the chain, and
// the chain's ops read each other along the rows' loops: nothing is
// computed twice and no GEMM is pulled in.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"
#include "tp/Dialect/TP/IR/TPDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tp {
#define GEN_PASS_DEF_FUSEREDUCTIONSPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// How many leading results of `map` are d0, d1, ... in order.
unsigned leadingIdentity(AffineMap map) {
  unsigned n = 0;
  while (n < map.getNumResults()) {
    auto dim = dyn_cast<AffineDimExpr>(map.getResult(n));
    if (!dim || dim.getPosition() != n)
      break;
    ++n;
  }
  return n;
}

/// How many leading loops of `op` are parallel.
unsigned leadingParallel(linalg::LinalgOp op) {
  unsigned n = 0;
  for (utils::IteratorType type : op.getIteratorTypesArray()) {
    if (type != utils::IteratorType::parallel)
      break;
    ++n;
  }
  return n;
}

/// A contraction stays whole: it is a GEMM (tp-convert-gemm-to-blas).
bool isContraction(linalg::LinalgOp op) {
  return linalg::isaContractionOpInterface(op);
}

/// A reduction that is not a contraction (a sum, a max, a sum of squares).
bool isPlainReduction(linalg::LinalgOp op) {
  return op.getNumReductionLoops() > 0 && !isContraction(op);
}

/// An op the chain may hold: a generic that is no contraction, or a fill,
/// on tensors.
bool isChainOp(Operation *op) {
  return isa_and_nonnull<linalg::GenericOp, linalg::FillOp>(op) &&
         cast<linalg::LinalgOp>(op).hasPureTensorSemantics() &&
         !isContraction(cast<linalg::LinalgOp>(op));
}

/// Whether `op` runs row by row over its first `rows` loops: they are
/// parallel and its results are indexed by them first.
bool isRowWise(linalg::LinalgOp op, unsigned rows) {
  if (leadingParallel(op) < rows)
    return false;
  for (OpOperand &init : op.getDpsInitsMutable())
    if (leadingIdentity(op.getMatchingIndexingMap(&init)) < rows)
      return false;
  return true;
}

/// The number of row loops of a chain ending in `root`: an all-parallel
/// generic that reads a reduction's result along its leading loops (the
/// least over such reads); 0 if it ends no chain.
unsigned chainRows(linalg::GenericOp root) {
  if (!root.hasPureTensorSemantics() ||
      root.getNumParallelLoops() != root.getNumLoops())
    return 0;
  unsigned rows = 0;
  bool readsReduction = false;
  for (OpOperand *input : root.getDpsInputOperands()) {
    auto producer = input->get().getDefiningOp<linalg::GenericOp>();
    if (!producer || !isPlainReduction(producer))
      continue;
    unsigned n = leadingIdentity(root.getMatchingIndexingMap(input));
    rows = readsReduction ? std::min(rows, n) : n;
    readsReduction = true;
  }
  return readsReduction ? rows : 0;
}

/// The ops of the chain ending in `root`: `root`, and, walking back through
/// the block, every chain op all of whose uses are in the chain, which runs
/// row by row, and which the chain reads along the rows.
llvm::SmallPtrSet<Operation *, 16> collectChain(linalg::GenericOp root,
                                                unsigned rows) {
  llvm::SmallPtrSet<Operation *, 16> chain;
  chain.insert(root);
  for (Operation *op = root->getPrevNode(); op; op = op->getPrevNode()) {
    if (!isChainOp(op) || op->use_empty() ||
        !isRowWise(cast<linalg::LinalgOp>(op), rows))
      continue;
    bool joins = true;
    for (OpOperand &use : op->getUses()) {
      auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
      if (!user || !chain.contains(user) ||
          leadingIdentity(user.getMatchingIndexingMap(&use)) < rows) {
        joins = false;
        break;
      }
    }
    if (joins)
      chain.insert(op);
  }
  return chain;
}

/// Tile sizes for `root`: one row at a time over the leading row loops but
/// the last, which takes as many rows (a divisor of its extent) as fit in
/// about 8 KiB of f32 with the other loops whole.
SmallVector<OpFoldResult> tileSizes(OpBuilder &b, linalg::GenericOp root,
                                    unsigned rows) {
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  int64_t rowElements = 1;
  for (unsigned i = rows; i < ranges.size(); ++i)
    rowElements *= ranges[i];
  int64_t last = ranges[rows - 1];
  int64_t want = std::max<int64_t>(1, 2048 / std::max<int64_t>(1, rowElements));
  int64_t tile = 1;
  for (int64_t t = std::min(want, last); t >= 1; --t)
    if (last % t == 0) {
      tile = t;
      break;
    }
  SmallVector<OpFoldResult> sizes;
  for (unsigned i = 0; i < ranges.size(); ++i)
    sizes.push_back(b.getIndexAttr(i + 1 < rows    ? 1
                                   : i + 1 == rows ? tile
                                                   : 0));
  return sizes;
}

/// Records erased ops, so that roots fused into a later chain are skipped.
struct ErasedListener : public RewriterBase::Listener {
  llvm::DenseSet<Operation *> erased;
  void notifyOperationErased(Operation *op) override { erased.insert(op); }
};

struct FuseReductionsPass
    : public tp::impl::FuseReductionsPassBase<FuseReductionsPass> {
  void runOnOperation() override {
    ErasedListener listener;
    IRRewriter rewriter(&getContext(), &listener);
    bool fused = false;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      SmallVector<linalg::GenericOp> roots;
      func.walk([&](linalg::GenericOp op) {
        if (chainRows(op) > 0)
          roots.push_back(op);
      });
      // Last first: a chain that ends in a later root swallows the earlier
      // roots it holds (a softmax's subtract-exp ends the max's chain and is
      // in the sum's).
      for (linalg::GenericOp root : llvm::reverse(roots)) {
        if (listener.erased.contains(root))
          continue;
        unsigned rows = chainRows(root);
        // Tiles are static; a loop of no iterations computes nothing, and
        // upstream's tiling divides by its extent.
        if (llvm::any_of(root.getStaticLoopRanges(), [](int64_t range) {
              return ShapedType::isDynamic(range) || range == 0;
            }))
          continue;
        llvm::SmallPtrSet<Operation *, 16> chain = collectChain(root, rows);
        if (chain.size() < 2)
          continue;
        rewriter.setInsertionPoint(root);
        scf::SCFTilingOptions tiling;
        tiling.setTileSizes(tileSizes(rewriter, root, rows));
        scf::SCFTileAndFuseOptions options;
        options.setTilingOptions(tiling);
        options.setFusionControlFn(
            [&](tensor::ExtractSliceOp, OpResult producer, bool)
                -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
              if (!chain.contains(producer.getOwner()))
                return std::nullopt;
              return scf::SCFTileAndFuseOptions::ControlFnResult{};
            });
        FailureOr<scf::SCFTileAndFuseResult> result =
            scf::tileConsumerAndFuseProducersUsingSCF(
                rewriter, cast<TilingInterface>(root.getOperation()), options);
        if (failed(result))
          continue;
        // Each iteration computes its own tile from its own scratch: the
        // nest may run its iterations in any order, or at once
        // (tp-outline-parallel-loops).
        for (LoopLikeOpInterface loop : result->loops)
          loop->setAttr(tp::TPDialect::kParallelAttrName,
                        rewriter.getUnitAttr());
        for (OpResult r : root->getResults())
          rewriter.replaceAllUsesWith(r, result->replacements.lookup(r));
        rewriter.eraseOp(root);
        // The fused producers are dead now (every use was in the chain).
        SmallVector<Operation *> producers(result->fusedProducers.begin(),
                                           result->fusedProducers.end());
        for (bool erasedAny = true; erasedAny;) {
          erasedAny = false;
          for (Operation *&op : producers)
            if (op && op->use_empty()) {
              rewriter.eraseOp(op);
              op = nullptr;
              erasedAny = true;
            }
        }
        fused = true;
      }
    }
    if (!fused)
      return;
    // Tiles of empty tensors become tile-sized empties (tile-local buffers),
    // and a producer fused along two slices of one tile is computed once.
    RewritePatternSet patterns(&getContext());
    tensor::populateFoldTensorEmptyPatterns(patterns);
    // The tiles' unit dimensions (one row of each leading loop) go: fewer
    // loops for LLVM to analyse.
    linalg::ControlDropUnitDims unitDims;
    unitDims.rankReductionStrategy =
        linalg::ControlDropUnitDims::RankReductionStrategy::ExtractInsertSlice;
    unitDims.controlFn = [](Operation *op) -> SmallVector<unsigned> {
      auto generic = dyn_cast<linalg::GenericOp>(op);
      if (!generic || !op->getParentOfType<scf::ForOp>())
        return {};
      return llvm::to_vector(llvm::seq<unsigned>(0, generic.getNumLoops()));
    };
    linalg::populateFoldUnitExtentDimsPatterns(patterns, unitDims);
    tensor::populateMergeConsecutiveInsertExtractSlicePatterns(patterns);
    tensor::ExtractSliceOp::getCanonicalizationPatterns(patterns,
                                                        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    DominanceInfo dominance(getOperation());
    // The CSE merges equal empty tensors and fills too: tp-unshare-fills,
    // which follows in the pipeline, gives each destination its own again.
    eliminateCommonSubExpressions(rewriter, dominance, getOperation());
  }
};

} // namespace
