//===- WidenReductions.cpp - f16 and bf16 sums accumulate in f32 ----------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A sum whose accumulator is bf16 stops growing once the sum is 256 times
// larger than its terms (the spacing of bf16 at 256 is 2): the sum of
// squares of 4096 values in [-1, 1) comes out 256, not about 1365, and an
// RMSNorm over it is off by more than twice. PyTorch and XLA accumulate
// such reductions in f32 and round the result once; so does every lowering
// here, the reference included, after this pass.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tp {
#define GEN_PASS_DEF_WIDENREDUCTIONSPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

bool isNarrowFloat(Type type) { return type.isF16() || type.isBF16(); }

/// The combining op of a reduction on statically shaped tensors whose body
/// is `add(f(inputs), out)` or `mul(f(inputs), out)` in f16 or bf16, `out`
/// used by it alone: a sum of one input's terms, or of terms made from
/// several (a layernorm's variance, from the activations and their mean).
/// With `extrema`, a max or min too (a softmax's row maximum): widening it is
/// exact, and lets the CPU's loop vectorize.
Operation *narrowSum(linalg::GenericOp op, bool extrema) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() == 0 ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return nullptr;
  // Contractions (the GEMMs and attention's products) are the GEMM calls'
  // and the attention kernel's, which accumulate in f32 already.
  if (linalg::isaContractionOpInterface(op))
    return nullptr;
  auto type = cast<RankedTensorType>(op.getResult(0).getType());
  if (!isNarrowFloat(type.getElementType()) || !type.hasStaticShape())
    return nullptr;
  Block *body = op.getBlock();
  Operation *combine = cast<linalg::YieldOp>(body->getTerminator())
                           .getValues()[0]
                           .getDefiningOp();
  bool extremum =
      isa_and_nonnull<arith::MaxNumFOp, arith::MinNumFOp, arith::MaximumFOp,
                      arith::MinimumFOp>(combine);
  if (!(isa_and_nonnull<arith::AddFOp, arith::MulFOp>(combine) ||
        (extrema && extremum)) ||
      combine->getBlock() != body)
    return nullptr;
  BlockArgument out = body->getArguments().back();
  if (!out.hasOneUse() ||
      (combine->getOperand(0) != out && combine->getOperand(1) != out))
    return nullptr;
  return combine;
}

/// `value`'s elements converted to `element` (`extf` or `truncf`), by an
/// elementwise linalg.generic into a new tensor.
Value convertElements(RewriterBase &rewriter, Location loc, Value value,
                      Type element) {
  auto type = cast<RankedTensorType>(value.getType());
  Value empty =
      tensor::EmptyOp::create(rewriter, loc, type.getShape(), element);
  unsigned rank = type.getRank();
  AffineMap id = rewriter.getMultiDimIdentityMap(rank);
  bool wider = element.getIntOrFloatBitWidth() >
               type.getElementType().getIntOrFloatBitWidth();
  return linalg::GenericOp::create(
             rewriter, loc, TypeRange{empty.getType()}, ValueRange{value},
             ValueRange{empty}, ArrayRef<AffineMap>{id, id},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &b, Location loc, ValueRange args) {
               Value converted =
                   wider ? arith::ExtFOp::create(b, loc, element, args[0])
                               .getResult()
                         : arith::TruncFOp::create(b, loc, element, args[0])
                               .getResult();
               linalg::YieldOp::create(b, loc, converted);
             })
      .getResult(0);
}

/// `value` widened to f32 (a fill's constant extended; anything else
/// through an elementwise extf).
Value widenTensor(RewriterBase &rewriter, Location loc, Value value) {
  Type f32 = rewriter.getF32Type();
  if (auto fill = value.getDefiningOp<linalg::FillOp>()) {
    auto constant = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
    if (auto attr =
            constant ? dyn_cast<FloatAttr>(constant.getValue()) : FloatAttr()) {
      auto type = cast<RankedTensorType>(value.getType());
      Value empty =
          tensor::EmptyOp::create(rewriter, loc, type.getShape(), f32);
      Value wide = arith::ConstantOp::create(
          rewriter, loc, rewriter.getF32FloatAttr(attr.getValueAsDouble()));
      return linalg::FillOp::create(rewriter, loc, wide, empty).getResult(0);
    }
  }
  return convertElements(rewriter, loc, value, f32);
}

/// Replaces `op` (`combine` its combining op) with the same reduction
/// accumulating in f32; its users read the f32 result and round it where
/// they read it (in a generic's body), or a rounded copy.
void widen(RewriterBase &rewriter, linalg::GenericOp op, Operation *combine) {
  Location loc = op.getLoc();
  Type f32 = rewriter.getF32Type();
  Type narrow = combine->getResult(0).getType();
  rewriter.setInsertionPoint(op);
  Value init = widenTensor(rewriter, loc, op.getDpsInits()[0]);
  Block *oldBody = op.getBlock();
  BlockArgument oldOut = oldBody->getArguments().back();
  unsigned fromInput = combine->getOperand(0) == oldOut ? 1 : 0;
  auto wide = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, op.getDpsInputs(),
      ValueRange{init}, op.getIndexingMapsArray(), op.getIteratorTypesArray(),
      [&](OpBuilder &b, Location loc, ValueRange args) {
        IRMapping mapping;
        for (unsigned i = 0, e = op.getNumDpsInputs(); i < e; ++i)
          mapping.map(oldBody->getArgument(i), args[i]);
        for (Operation &inner : oldBody->without_terminator()) {
          if (&inner == combine)
            break;
          b.clone(inner, mapping);
        }
        Value term = arith::ExtFOp::create(
            b, loc, f32,
            mapping.lookupOrDefault(combine->getOperand(fromInput)));
        SmallVector<Value> operands = {term, args.back()};
        if (fromInput == 1)
          std::swap(operands[0], operands[1]);
        OperationState state(loc, combine->getName(), operands, TypeRange{f32},
                             combine->getAttrs());
        linalg::YieldOp::create(b, loc, b.create(state)->getResult(0));
      });
  Value result = wide.getResult(0);
  Value rounded;
  for (OpOperand &use : llvm::make_early_inc_range(op.getResult(0).getUses())) {
    auto user = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (user && user.isDpsInput(&use)) {
      // The user reads the f32 sum and rounds it as it reads it.
      BlockArgument arg = user.getMatchingBlockArgument(&use);
      rewriter.modifyOpInPlace(user, [&] {
        use.set(result);
        arg.setType(f32);
      });
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(user.getBlock());
      auto truncated = arith::TruncFOp::create(rewriter, loc, narrow, arg);
      rewriter.replaceAllUsesExcept(arg, truncated.getResult(), truncated);
      continue;
    }
    if (!rounded) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointAfter(wide);
      rounded = convertElements(rewriter, loc, result, narrow);
    }
    rewriter.modifyOpInPlace(use.getOwner(), [&] { use.set(rounded); });
  }
  Operation *oldInit = op.getDpsInits()[0].getDefiningOp();
  rewriter.eraseOp(op);
  if (isa_and_nonnull<linalg::FillOp>(oldInit) && oldInit->use_empty())
    rewriter.eraseOp(oldInit);
}

struct WidenReductionsPass
    : public tp::impl::WidenReductionsPassBase<WidenReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, Operation *>> sums;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (Operation *combine = narrowSum(op, extrema))
        sums.push_back({op, combine});
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, combine] : sums)
      widen(rewriter, op, combine);
  }
};

} // namespace
