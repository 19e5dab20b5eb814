//===- LowerReductions.cpp - Reductions with the accumulator in a register ===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// convert-linalg-to-loops turns a reduction into a loop that loads and
// stores the accumulator in memory on every iteration; LLVM cannot keep it in
// a register when the input and the accumulator might alias (buffers passed
// to a layer function), so the loop stays scalar and every iteration waits
// for the previous store. Here the innermost reduction loop carries the
// accumulator as an scf.for iter_arg instead, loaded before and stored after
// it; and a float add, maximum or minimum that combines it is marked
// `reassoc`, which lets LLVM vectorize the reduction (as PyTorch's and XLA's
// reductions are: in lanes, then across them).
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::tp {
#define GEN_PASS_DEF_LOWERREDUCTIONSPASS
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

void lower(linalg::GenericOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Range> ranges =
      cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc);
  unsigned n = op.getNumLoops();
  OpOperand *init = op.getDpsInitOperand(0);
  Block *body = op.getBody();

  // The parallel loops.
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
  // The accumulator, in a register along the reduction.
  SmallVector<Value> outIndices =
      *indicesOf(b, loc, op.getMatchingIndexingMap(init), ivs);
  Value start = memref::LoadOp::create(b, loc, init->get(), outIndices);
  auto inner = scf::ForOp::create(
      b, loc, value(ranges[n - 1].offset), value(ranges[n - 1].size),
      value(ranges[n - 1].stride), ValueRange{start},
      [&](OpBuilder &nb, Location nloc, Value k, ValueRange iterArgs) {
        SmallVector<Value> all(ivs);
        all.push_back(k);
        IRMapping mapping;
        for (OpOperand *input : op.getDpsInputOperands()) {
          Value arg = body->getArgument(input->getOperandNumber());
          if (!isa<MemRefType>(input->get().getType())) {
            mapping.map(arg, input->get());
            continue;
          }
          SmallVector<Value> indices =
              *indicesOf(nb, nloc, op.getMatchingIndexingMap(input), all);
          mapping.map(arg,
                      memref::LoadOp::create(nb, nloc, input->get(), indices));
        }
        Value acc = body->getArgument(init->getOperandNumber());
        mapping.map(acc, iterArgs[0]);
        for (Operation &bodyOp : body->without_terminator()) {
          if (auto index = dyn_cast<linalg::IndexOp>(bodyOp)) {
            mapping.map(index.getResult(), all[index.getDim()]);
            continue;
          }
          nb.clone(bodyOp, mapping);
        }
        Value yielded = body->getTerminator()->getOperand(0);
        Value next = mapping.lookupOrDefault(yielded);
        allowReassociation(next.getDefiningOp(), iterArgs[0]);
        scf::YieldOp::create(nb, nloc, next);
      });
  memref::StoreOp::create(b, loc, inner.getResult(0), init->get(), outIndices);
  op.erase();
}

struct LowerReductionsPass
    : public tp::impl::LowerReductionsPassBase<LowerReductionsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> reductions;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (isInnermostReduction(op))
        reductions.push_back(op);
    });
    for (linalg::GenericOp op : reductions)
      lower(op);
  }
};

} // namespace
