//===- ShardingRuleModels.cpp - Sharding rules of upstream ops ------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// External models of ShardingRuleOpInterface for upstream ops. Every rule is
// derived from the op's structure, never listed per op:
//   - linalg structured ops: one factor per loop, kind from the iterator type,
//     each operand dimension from its indexing map (a plain loop dimension is
//     that factor; a constant is a size-1 dimension; anything else, such as a
//     convolution's `d0 + d1`, leaves the dimension whole and its loops
//     unsplittable);
//   - elementwise ops (the Elementwise trait) on tensors of one shape: one
//     parallel factor per dimension, shared by every tensor;
//   - constants (splat or dense) and tensor.empty: one parallel factor per
//     dimension;
//   - linalg.softmax: parallel except the normalized dimension;
//   - expand_shape / collapse_shape: one factor per expanded dimension; a
//     collapsed dimension is the product of its group's factors.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/IR/TPInterfaces.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::tp;

#include "tp/Dialect/TP/IR/TPInterfaces.cpp.inc"

FailureOr<ShardingRule> mlir::tp::getShardingRule(Operation *op) {
  if (auto iface = dyn_cast<ShardingRuleOpInterface>(op))
    return iface.getShardingRule();
  return failure();
}

//===----------------------------------------------------------------------===//
// Rule builders
//===----------------------------------------------------------------------===//

/// One parallel factor per dimension of `shape`; returns their indices.
static ShardingRule::TensorFactors addDimFactors(ShardingRule &rule,
                                                 ArrayRef<int64_t> shape) {
  ShardingRule::TensorFactors dims;
  for (int64_t size : shape)
    dims.push_back({rule.addFactor(size, FactorKind::Parallel)});
  return dims;
}

static FailureOr<ShardingRule> ruleForLinalg(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics())
    return failure();
  ShardingRule rule;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (auto [size, iterator] : llvm::zip(ranges, iterators))
    rule.addFactor(size, iterator == utils::IteratorType::reduction
                             ? FactorKind::Reduction
                             : FactorKind::Parallel);

  SmallVector<int64_t> unsplittable;
  for (OpOperand &operand : op->getOpOperands()) {
    ShardingRule::TensorFactors dims;
    if (isa<RankedTensorType>(operand.get().getType())) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      for (AffineExpr expr : map.getResults()) {
        if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
          dims.push_back({static_cast<int64_t>(dim.getPosition())});
          continue;
        }
        dims.push_back({});
        // `d0 + d1` and the like: the loops it mixes cannot be split.
        expr.walk([&](AffineExpr sub) {
          if (auto dim = dyn_cast<AffineDimExpr>(sub))
            unsplittable.push_back(dim.getPosition());
        });
      }
    }
    rule.getOperands().push_back(std::move(dims));
  }
  for (int64_t loop : unsplittable)
    rule.setFactorKind(loop, FactorKind::NeedReplication);
  // Result i is the value of init i.
  for (OpOperand &init : op.getDpsInitsMutable())
    rule.getResults().push_back(rule.getOperands()[init.getOperandNumber()]);
  return rule;
}

static FailureOr<ShardingRule> ruleForSource(Operation *op);

static FailureOr<ShardingRule> ruleForElementwise(Operation *op) {
  if (op->hasTrait<OpTrait::ConstantLike>())
    return ruleForSource(op);
  if (!op->hasTrait<OpTrait::Elementwise>() || op->getNumResults() == 0)
    return failure();
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type)
    return failure();
  auto sameShape = [&](Type t) {
    auto other = dyn_cast<RankedTensorType>(t);
    return other && other.getShape() == type.getShape();
  };
  if (!llvm::all_of(op->getResultTypes(), sameShape))
    return failure();
  ShardingRule rule;
  ShardingRule::TensorFactors dims = addDimFactors(rule, type.getShape());
  for (Type operandType : op->getOperandTypes()) {
    if (isa<ShapedType>(operandType) && !sameShape(operandType))
      return failure();
    rule.getOperands().push_back(
        isa<ShapedType>(operandType) ? dims : ShardingRule::TensorFactors{});
  }
  for (unsigned i = 0; i < op->getNumResults(); ++i)
    rule.getResults().push_back(dims);
  return rule;
}

/// Ops with tensor results and no tensor operands (constants, tensor.empty).
static FailureOr<ShardingRule> ruleForSource(Operation *op) {
  if (op->getNumResults() != 1)
    return failure();
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type)
    return failure();
  ShardingRule rule;
  rule.getResults().push_back(addDimFactors(rule, type.getShape()));
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    rule.getOperands().push_back({});
  return rule;
}

/// expand_shape / collapse_shape: `expanded` has one factor per dimension;
/// dimension g of `collapsed` is the product of group g's factors.
static ShardingRule ruleForReshape(RankedTensorType expanded,
                                   ArrayRef<ReassociationIndices> groups,
                                   unsigned numOperands, bool expanding) {
  ShardingRule rule;
  ShardingRule::TensorFactors expandedDims =
      addDimFactors(rule, expanded.getShape());
  ShardingRule::TensorFactors collapsedDims;
  for (const ReassociationIndices &group : groups) {
    ShardingRule::DimFactors dim;
    for (int64_t index : group)
      dim.push_back(expandedDims[index].front());
    collapsedDims.push_back(dim);
  }
  rule.getOperands().push_back(expanding ? collapsedDims : expandedDims);
  // Dynamic output sizes of expand_shape are index operands.
  for (unsigned i = 1; i < numOperands; ++i)
    rule.getOperands().push_back({});
  rule.getResults().push_back(expanding ? expandedDims : collapsedDims);
  return rule;
}

//===----------------------------------------------------------------------===//
// External models
//===----------------------------------------------------------------------===//

namespace {

template <typename OpTy>
struct LinalgStructuredModel
    : public ShardingRuleOpInterface::ExternalModel<LinalgStructuredModel<OpTy>,
                                                    OpTy> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    return ruleForLinalg(cast<linalg::LinalgOp>(op));
  }
};

template <typename OpTy>
struct ElementwiseModel
    : public ShardingRuleOpInterface::ExternalModel<ElementwiseModel<OpTy>,
                                                    OpTy> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    return ruleForElementwise(op);
  }
};

template <typename OpTy>
struct SourceModel
    : public ShardingRuleOpInterface::ExternalModel<SourceModel<OpTy>, OpTy> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    return ruleForSource(op);
  }
};

struct SoftmaxModel
    : public ShardingRuleOpInterface::ExternalModel<SoftmaxModel,
                                                    linalg::SoftmaxOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    auto softmax = cast<linalg::SoftmaxOp>(op);
    auto type = dyn_cast<RankedTensorType>(softmax.getInput().getType());
    if (!type || !isa<RankedTensorType>(softmax.getOutput().getType()))
      return failure();
    ShardingRule rule;
    ShardingRule::TensorFactors dims = addDimFactors(rule, type.getShape());
    rule.setFactorKind(dims[softmax.getDimension()].front(),
                       FactorKind::NeedReplication);
    rule.getOperands() = {dims, dims};
    rule.getResults() = {dims};
    return rule;
  }
};

struct ExpandShapeModel
    : public ShardingRuleOpInterface::ExternalModel<ExpandShapeModel,
                                                    tensor::ExpandShapeOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    auto expand = cast<tensor::ExpandShapeOp>(op);
    return ruleForReshape(expand.getResultType(),
                          expand.getReassociationIndices(),
                          op->getNumOperands(), /*expanding=*/true);
  }
};

struct CollapseShapeModel
    : public ShardingRuleOpInterface::ExternalModel<CollapseShapeModel,
                                                    tensor::CollapseShapeOp> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    auto collapse = cast<tensor::CollapseShapeOp>(op);
    return ruleForReshape(collapse.getSrcType(),
                          collapse.getReassociationIndices(),
                          op->getNumOperands(), /*expanding=*/false);
  }
};

template <template <typename> class Model, typename... OpTys>
void attachAll(MLIRContext *ctx) {
  (OpTys::template attachInterface<Model<OpTys>>(*ctx), ...);
}

} // namespace

void mlir::tp::registerShardingRuleModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    attachAll<LinalgStructuredModel,
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
              >(ctx);
    linalg::SoftmaxOp::attachInterface<SoftmaxModel>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    // Every arith op; the model answers for constants and for elementwise
    // ops on tensors (addf, select, cmpf, casts, ...), and fails otherwise.
    attachAll<ElementwiseModel,
#define GET_OP_LIST
#include "mlir/Dialect/Arith/IR/ArithOps.cpp.inc"
              >(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, math::MathDialect *) {
    attachAll<ElementwiseModel,
#define GET_OP_LIST
#include "mlir/Dialect/Math/IR/MathOps.cpp.inc"
              >(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::EmptyOp::attachInterface<SourceModel<tensor::EmptyOp>>(*ctx);
    tensor::ExpandShapeOp::attachInterface<ExpandShapeModel>(*ctx);
    tensor::CollapseShapeOp::attachInterface<CollapseShapeModel>(*ctx);
  });
}
