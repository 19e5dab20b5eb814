//===- Linearity.cpp - Which ops a pending sum may flow through -----------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A partial value is one term of a sum over devices. An op may consume it
// unreduced only if it is linear in it: applying it to each term and summing
// gives the op applied to the sum. Adding a non-partial value (a bias) is not
// linear (the bias would be added once per device); multiplying by one is.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/IR/TPInterfaces.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

enum class Dependence { Independent, Linear, Other };

/// Combines the dependences of a scalar op's operands into its result's.
Dependence combine(Operation *op, ArrayRef<Dependence> in) {
  auto all = [&](Dependence d) {
    return llvm::all_of(in, [&](Dependence x) { return x == d; });
  };
  if (all(Dependence::Independent))
    return Dependence::Independent;
  if (llvm::is_contained(in, Dependence::Other))
    return Dependence::Other;
  // Some operand is linear in the partial inputs.
  if (isa<arith::AddFOp, arith::SubFOp, arith::AddIOp, arith::SubIOp>(op))
    return all(Dependence::Linear) ? Dependence::Linear : Dependence::Other;
  if (isa<arith::NegFOp>(op))
    return Dependence::Linear;
  if (isa<arith::MulFOp, arith::MulIOp>(op))
    return llvm::count(in, Dependence::Linear) == 1 ? Dependence::Linear
                                                    : Dependence::Other;
  if (isa<arith::DivFOp>(op))
    return in[0] == Dependence::Linear && in[1] == Dependence::Independent
               ? Dependence::Linear
               : Dependence::Other;
  return Dependence::Other;
}

/// Linear if every yielded value is linear in the partial block arguments.
/// Accumulators (inits of a reduction) count as linear: partitioning makes a
/// non-zero init count once.
bool isLinearBody(linalg::LinalgOp op, ArrayRef<bool> partial) {
  Block *body = op.getBlock();
  if (!body)
    return false;
  DenseMap<Value, Dependence> dep;
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(&operand);
    bool isInit = op.isDpsInit(&operand);
    Dependence d = Dependence::Independent;
    if (partial[operand.getOperandNumber()])
      d = Dependence::Linear;
    else if (isInit && op.getNumReductionLoops() > 0)
      d = Dependence::Linear;
    dep[arg] = d;
  }
  auto lookup = [&](Value v) {
    auto it = dep.find(v);
    // Values from outside the body (captured constants) are independent.
    return it == dep.end() ? Dependence::Independent : it->second;
  };
  for (Operation &inner : body->without_terminator()) {
    if (isa<linalg::IndexOp>(inner)) {
      dep[inner.getResult(0)] = Dependence::Independent;
      continue;
    }
    SmallVector<Dependence> in;
    for (Value v : inner.getOperands())
      in.push_back(lookup(v));
    Dependence d = combine(&inner, in);
    for (Value r : inner.getResults())
      dep[r] = d;
  }
  return llvm::all_of(body->getTerminator()->getOperands(),
                      [&](Value v) { return lookup(v) == Dependence::Linear; });
}

} // namespace

bool mlir::tp::isLinearIn(Operation *op, ArrayRef<bool> partial) {
  if (llvm::none_of(partial, [](bool p) { return p; }))
    return true;
  // Pure data movement of one partial tensor.
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
          tensor::ExtractSliceOp, linalg::TransposeOp>(op))
    return partial[0];
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return linalgOp.hasPureTensorSemantics() && isLinearBody(linalgOp, partial);
  if (op->hasTrait<OpTrait::Elementwise>() && op->getNumResults() == 1 &&
      isa<RankedTensorType>(op->getResult(0).getType())) {
    SmallVector<Dependence> in;
    for (bool p : partial)
      in.push_back(p ? Dependence::Linear : Dependence::Independent);
    return combine(op, in) == Dependence::Linear;
  }
  return false;
}
