//===- FuseConcatenations.cpp - tensor.concat read in place ---------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A concatenation copies its operands into a new tensor, and its consumer
// reads that copy: rotary embeddings' rotate-half
// (`concat(-x[..., D/2:], x[..., :D/2])`) costs, per query and key tensor,
// a negation, two copies and the rotation that reads them (four kernels on a
// GPU). As a `linalg.generic` that picks, at each point, the operand the
// point falls in and reads that operand's own source at the shifted
// coordinates (`tensor.extract`), through a slice's offsets and a
// pointwise op's body, the concatenation is elementwise: tp-fuse-elementwise
// fuses it into its consumer, and the rotation reads x in place.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::tp {
#define GEN_PASS_DEF_FUSECONCATENATIONSPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// An all-parallel linalg.generic on tensors with one result, every operand
/// read through the identity, whose body does not read its output.
bool isPointwise(linalg::GenericOp op) {
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops())
    return false;
  if (!llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return false;
  return op.getBlock()->getArguments().back().use_empty();
}

/// A slice with static offsets, sizes and unit strides that keeps its rank.
tensor::ExtractSliceOp plainSlice(Value v) {
  auto slice = v.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || slice.getSourceType().getRank() != slice.getType().getRank() ||
      !slice.hasUnitStride() ||
      llvm::any_of(slice.getStaticOffsets(), ShapedType::isDynamic) ||
      llvm::any_of(slice.getStaticSizes(), ShapedType::isDynamic))
    return nullptr;
  return slice;
}

class Rewriter {
public:
  Rewriter(RewriterBase &rewriter, Location loc)
      : rewriter(rewriter), loc(loc) {}

  /// The element of `value` at `coords`: read from a slice's source at the
  /// offset coordinates, computed by a pointwise op (used only by
  /// `concat`) from its operands' elements, or read from `value`.
  Value elementOf(Value value, ArrayRef<Value> coords, Operation *concat,
                  int depth = 0) {
    if (tensor::ExtractSliceOp slice = plainSlice(value)) {
      SmallVector<Value> shifted;
      for (auto [c, offset] : llvm::zip(coords, slice.getStaticOffsets()))
        shifted.push_back(
            offset == 0 ? c
                        : arith::AddIOp::create(rewriter, loc, c,
                                                arith::ConstantIndexOp::create(
                                                    rewriter, loc, offset)));
      return tensor::ExtractOp::create(rewriter, loc, slice.getSource(),
                                       shifted);
    }
    auto pointwise = value.getDefiningOp<linalg::GenericOp>();
    if (depth == 0 && isPointwise(pointwise) && pointwise->hasOneUse() &&
        *pointwise->getUsers().begin() == concat) {
      IRMapping mapping;
      Block *body = pointwise.getBlock();
      for (OpOperand *in : pointwise.getDpsInputOperands())
        mapping.map(body->getArgument(in->getOperandNumber()),
                    elementOf(in->get(), coords, concat, depth + 1));
      for (Operation &op : body->without_terminator()) {
        if (auto index = dyn_cast<linalg::IndexOp>(op)) {
          mapping.map(index.getResult(), coords[index.getDim()]);
          continue;
        }
        rewriter.clone(op, mapping);
      }
      return mapping.lookupOrDefault(
          cast<linalg::YieldOp>(body->getTerminator()).getValues()[0]);
    }
    return tensor::ExtractOp::create(rewriter, loc, value, coords);
  }

  /// The element at `coords` of the concatenation of `pieces` along `dim`,
  /// from piece `first` on (`start` its first coordinate there): the piece
  /// the coordinate falls in, chosen by a chain of scf.if.
  Value concatElement(tensor::ConcatOp concat, ArrayRef<Value> coords,
                      unsigned first, int64_t start) {
    ValueRange pieces = concat.getInputs();
    unsigned dim = concat.getDim();
    auto local = [&](unsigned piece, int64_t at) {
      SmallVector<Value> c(coords);
      if (at != 0)
        c[dim] = arith::SubIOp::create(
            rewriter, loc, coords[dim],
            arith::ConstantIndexOp::create(rewriter, loc, at));
      return elementOf(pieces[piece], c, concat);
    };
    if (first + 1 == pieces.size())
      return local(first, start);
    int64_t end =
        start + cast<RankedTensorType>(pieces[first].getType()).getDimSize(dim);
    Value inFirst = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ult, coords[dim],
        arith::ConstantIndexOp::create(rewriter, loc, end));
    Type element = concat.getType().getElementType();
    auto choose = scf::IfOp::create(rewriter, loc, element, inFirst,
                                    /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(&choose.getThenRegion().front());
    scf::YieldOp::create(rewriter, loc, local(first, start));
    rewriter.setInsertionPointToStart(&choose.getElseRegion().front());
    scf::YieldOp::create(rewriter, loc,
                         concatElement(concat, coords, first + 1, end));
    return choose.getResult(0);
  }

  /// Replaces `concat` with the linalg.generic that computes it in place.
  void rewrite(tensor::ConcatOp concat) {
    RankedTensorType type = concat.getType();
    rewriter.setInsertionPoint(concat);
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                          type.getElementType());
    unsigned rank = type.getRank();
    SmallVector<AffineMap> maps = {
        AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext())};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    // The pointwise ops whose bodies the generic takes over, and the
    // slices and empty tensors that may be left unused.
    SmallVector<Operation *> absorbed;
    llvm::SetVector<Operation *> leftovers;
    auto mayBeLeft = [&](Value v) {
      if (Operation *op = v.getDefiningOp();
          isa_and_nonnull<tensor::ExtractSliceOp, tensor::EmptyOp>(op))
        leftovers.insert(op);
    };
    for (Value piece : concat.getInputs()) {
      mayBeLeft(piece);
      auto op = piece.getDefiningOp<linalg::GenericOp>();
      if (!isPointwise(op) || !op->hasOneUse())
        continue;
      absorbed.push_back(op);
      for (Value operand : op->getOperands())
        mayBeLeft(operand);
    }
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{empty}, maps,
        iterators, [&](OpBuilder &b, Location, ValueRange) {
          OpBuilder::InsertionGuard guard(rewriter);
          rewriter.setInsertionPoint(b.getInsertionBlock(),
                                     b.getInsertionPoint());
          SmallVector<Value> coords;
          for (unsigned d = 0; d < rank; ++d)
            coords.push_back(linalg::IndexOp::create(rewriter, loc, d));
          linalg::YieldOp::create(rewriter, loc,
                                  concatElement(concat, coords, 0, 0));
        });
    rewriter.replaceOp(concat, generic.getResults());
    for (Operation *op : absorbed)
      rewriter.eraseOp(op);
    for (Operation *op : leftovers)
      if (op->use_empty())
        rewriter.eraseOp(op);
  }

private:
  RewriterBase &rewriter;
  Location loc;
};

struct FuseConcatenationsPass
    : public tp::impl::FuseConcatenationsPassBase<FuseConcatenationsPass> {
  void runOnOperation() override {
    SmallVector<tensor::ConcatOp> concats;
    getOperation()->walk([&](tensor::ConcatOp concat) {
      if (!concat.getType().hasStaticShape() || !concat->hasOneUse() ||
          llvm::any_of(concat.getInputs(), [](Value in) {
            return !cast<RankedTensorType>(in.getType()).hasStaticShape();
          }))
        return;
      // Only where tp-fuse-elementwise will fuse it: into an all-parallel
      // consumer that reads it through a permutation.
      auto consumer = dyn_cast<linalg::GenericOp>(*concat->getUsers().begin());
      if (!consumer || !consumer.hasPureTensorSemantics() ||
          consumer.getNumParallelLoops() != consumer.getNumLoops())
        return;
      for (OpOperand &use : concat->getUses())
        if (!consumer.isDpsInput(&use) ||
            !consumer.getMatchingIndexingMap(&use).isPermutation())
          return;
      concats.push_back(concat);
    });
    IRRewriter rewriter(&getContext());
    for (tensor::ConcatOp concat : concats)
      Rewriter(rewriter, concat.getLoc()).rewrite(concat);
  }
};

} // namespace
