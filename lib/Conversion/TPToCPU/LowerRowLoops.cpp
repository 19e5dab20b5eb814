//===- LowerRowLoops.cpp - Row-wise ops as loops LLVM vectorizes ---------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// convert-linalg-to-loops turns an op into loops that load every input, and
// a reduction's accumulator, on every iteration of the innermost loop. LLVM
// cannot move those loads out where the buffers might alias (buffers passed
// to a layer function, tiles of one arena at offsets known only per row), so
// the innermost loop stays scalar:
// - a reduction stores and reloads its accumulator on every iteration, each
//   waiting for the previous store;
// - a normalization reloads its row's statistics (mean, rstd) and recomputes
//   what it derives from them (rsqrt) on every element.
// Here a reduction over its innermost loop, and an elementwise op with an
// input that does not move along its innermost loop, become scf.for loops
// whose innermost loop carries the accumulator as an iter_arg and finds the
// invariant inputs loaded before it, with what the body computes from them
// alone. A float add, maximum or minimum that combines the accumulator is
// marked `reassoc`, which lets LLVM vectorize the reduction (as PyTorch's
// and XLA's reductions are: in lanes, then across them).
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::tp {
#define GEN_PASS_DEF_LOWERROWLOOPSPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// The indices `map` gives for loop indices `ivs`, if its results are loop
/// dimensions and constants; nullopt otherwise.
std::optional<SmallVector<Value>> indicesOf(OpBuilder &b, Location loc,
                                            AffineMap map, ValueRange ivs) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      indices.push_back(ivs[dim.getPosition()]);
    else if (auto constant = dyn_cast<AffineConstantExpr>(expr))
      indices.push_back(
          arith::ConstantIndexOp::create(b, loc, constant.getValue()));
    else
      return std::nullopt;
  }
  return indices;
}

/// Whether `map` is made of loop dimensions and constants only.
bool isSimpleMap(AffineMap map) {
  return llvm::all_of(map.getResults(), [](AffineExpr e) {
    return isa<AffineDimExpr, AffineConstantExpr>(e);
  });
}

/// A single-output reduction over its innermost loop, every other loop
/// parallel, on buffers, with maps of loop dimensions and constants.
bool isInnermostReduction(linalg::GenericOp op) {
  unsigned n = op.getNumLoops();
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 || n == 0 ||
      op.getNumReductionLoops() != 1 ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return false;
  if (!llvm::all_of(op.getIndexingMapsArray(), isSimpleMap))
    return false;
  // The accumulator's place may not move along the reduction.
  return !op.getMatchingIndexingMap(op.getDpsInitOperand(0))
              .isFunctionOfDim(n - 1);
}

/// Whether `input` of `op` is a buffer read at the same place all along the
/// innermost loop (a row's statistic, a column's bias in a transposed op).
bool isInvariantInput(linalg::GenericOp op, OpOperand *input) {
  return isa<MemRefType>(input->get().getType()) &&
         !op.getMatchingIndexingMap(input).isFunctionOfDim(op.getNumLoops() -
                                                           1);
}

/// An elementwise op on buffers (every loop parallel, maps of loop
/// dimensions and constants) with an outer loop, whose outputs all move
/// along the innermost loop and one of whose inputs does not: the loop
/// convert-linalg-to-loops makes of it reloads that input on every
/// iteration, and LLVM cannot hoist the load above the stores it may alias
/// (buffers of one arena), so the loop stays scalar.
bool isRowwiseElementwise(linalg::GenericOp op) {
  unsigned n = op.getNumLoops();
  if (!op.hasPureBufferSemantics() || n < 2 || op.getNumParallelLoops() != n ||
      op.getNumDpsInits() == 0)
    return false;
  if (!llvm::all_of(op.getIndexingMapsArray(), isSimpleMap))
    return false;
  for (OpOperand &init : op.getDpsInitsMutable())
    if (!op.getMatchingIndexingMap(&init).isFunctionOfDim(n - 1))
      return false;
  return llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
    return isInvariantInput(op, input);
  });
}

/// Marks the op that combines the accumulator `acc` into the yielded value
/// `reassoc`, when it is a float add, maximum or minimum: the order of the
/// terms may change (vector lanes), not what is computed.
void allowReassociation(Operation *combiner, Value acc) {
  if (!combiner ||
      !isa<arith::AddFOp, arith::MaximumFOp, arith::MinimumFOp,
           arith::MaxNumFOp, arith::MinNumFOp>(combiner) ||
      !llvm::is_contained(combiner->getOperands(), acc))
    return;
  auto fastmath = cast<arith::ArithFastMathInterface>(combiner);
  StringRef name = fastmath.getFastMathAttrName();
  arith::FastMathFlags flags = fastmath.getFastMathFlagsAttr().getValue();
  combiner->setAttr(
      name, arith::FastMathFlagsAttr::get(
                combiner->getContext(), flags | arith::FastMathFlags::reassoc));
}

/// `op` as loops: scf.for over its outer loops; the inputs invariant along
/// the innermost loop loaded before it; and the innermost loop, which for a
/// reduction carries the accumulator as an iter_arg. What the body computes
/// from invariant values alone moves out of the innermost loop too.
void lower(linalg::GenericOp op, bool reduction) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Range> ranges =
      cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc);
  unsigned n = op.getNumLoops();
  Block *body = op.getBody();

  // The outer loops.
  SmallVector<Value> ivs;
  auto value = [&](OpFoldResult r) {
    return getValueOrCreateConstantIndexOp(b, loc, r);
  };
  for (unsigned i = 0; i + 1 < n; ++i) {
    auto loop =
        scf::ForOp::create(b, loc, value(ranges[i].offset),
                           value(ranges[i].size), value(ranges[i].stride));
    b.setInsertionPointToStart(loop.getBody());
    ivs.push_back(loop.getInductionVar());
  }
  // The invariant inputs, and a reduction's accumulator.
  IRMapping invariant;
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value arg = body->getArgument(input->getOperandNumber());
    if (!isa<MemRefType>(input->get().getType()))
      invariant.map(arg, input->get());
    else if (isInvariantInput(op, input))
      invariant.map(
          arg, memref::LoadOp::create(
                   b, loc, input->get(),
                   *indicesOf(b, loc, op.getMatchingIndexingMap(input), ivs)));
  }
  OpOperand *init = op.getDpsInitOperand(0);
  SmallVector<Value> outIndices;
  SmallVector<Value> iterInits;
  if (reduction) {
    outIndices = *indicesOf(b, loc, op.getMatchingIndexingMap(init), ivs);
    iterInits.push_back(
        memref::LoadOp::create(b, loc, init->get(), outIndices));
  }
  auto inner = scf::ForOp::create(
      b, loc, value(ranges[n - 1].offset), value(ranges[n - 1].size),
      value(ranges[n - 1].stride), iterInits,
      [&](OpBuilder &nb, Location nloc, Value k, ValueRange iterArgs) {
        SmallVector<Value> all(ivs);
        all.push_back(k);
        IRMapping mapping = invariant;
        for (OpOperand &operand : op->getOpOperands()) {
          Value arg = body->getArgument(operand.getOperandNumber());
          if (mapping.contains(arg))
            continue;
          if (reduction && &operand == init) {
            mapping.map(arg, iterArgs[0]);
            continue;
          }
          // An output is read only where the body uses its value.
          if (op.isDpsInit(&operand) && arg.use_empty())
            continue;
          SmallVector<Value> indices =
              *indicesOf(nb, nloc, op.getMatchingIndexingMap(&operand), all);
          mapping.map(arg,
                      memref::LoadOp::create(nb, nloc, operand.get(), indices));
        }
        for (Operation &bodyOp : body->without_terminator()) {
          if (auto index = dyn_cast<linalg::IndexOp>(bodyOp)) {
            mapping.map(index.getResult(), all[index.getDim()]);
            continue;
          }
          nb.clone(bodyOp, mapping);
        }
        Operation *yield = body->getTerminator();
        if (reduction) {
          Value next = mapping.lookupOrDefault(yield->getOperand(0));
          allowReassociation(next.getDefiningOp(), iterArgs[0]);
          scf::YieldOp::create(nb, nloc, next);
          return;
        }
        for (OpOperand &out : op.getDpsInitsMutable()) {
          SmallVector<Value> indices =
              *indicesOf(nb, nloc, op.getMatchingIndexingMap(&out), all);
          Value yielded =
              yield->getOperand(out.getOperandNumber() - op.getNumDpsInputs());
          memref::StoreOp::create(nb, nloc, mapping.lookupOrDefault(yielded),
                                  out.get(), indices);
        }
        scf::YieldOp::create(nb, nloc);
      });
  if (reduction)
    memref::StoreOp::create(b, loc, inner.getResult(0), init->get(),
                            outIndices);
  moveLoopInvariantCode(cast<LoopLikeOpInterface>(inner.getOperation()));
  op.erase();
}

struct LowerRowLoopsPass
    : public tp::impl::LowerRowLoopsPassBase<LowerRowLoopsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, bool>> ops;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (isInnermostReduction(op))
        ops.push_back({op, true});
      else if (isRowwiseElementwise(op))
        ops.push_back({op, false});
    });
    for (auto [op, reduction] : ops)
      lower(op, reduction);
  }
};

} // namespace
