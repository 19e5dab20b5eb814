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
//     collapsed dimension is the product of its group's factors;
//   - extract_slice / insert_slice / concat / pad: a dimension taken whole
//     is a shared parallel factor; a cut, padded or concatenated one cannot
//     be split.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/IR/TPInterfaces.h"
#include "tp/Dialect/TP/IR/UpstreamChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::tp;

#include "tp/Dialect/TP/IR/TPInterfaces.cpp.inc"

FailureOr<ShardingRule> mlir::tp::getShardingRule(Operation *op) {
  auto iface = dyn_cast<ShardingRuleOpInterface>(op);
  if (!iface)
    return failure();
  FailureOr<ShardingRule> rule = iface.getShardingRule();
  // Splitting a contracted factor leaves pending sums in the results, which
  // the collectives reduce over integers and floats only (a complex<f32>
  // matmul keeps its contraction whole).
  if (succeeded(rule) && llvm::any_of(op->getResultTypes(), [](Type t) {
        auto shaped = dyn_cast<ShapedType>(t);
        return shaped && !shaped.getElementType().isIntOrFloat();
      }))
    for (unsigned f = 0; f < rule->getNumFactors(); ++f)
      if (rule->getFactorKind(f) == FactorKind::Reduction)
        rule->setFactorKind(f, FactorKind::NeedReplication);
  return rule;
}

//===----------------------------------------------------------------------===//
// Shared rules
//===----------------------------------------------------------------------===//

/// A hash of what a rule may depend on (name, properties, types, the number
/// of ops in each region); equal structures hash equally.
static unsigned structuralHash(Operation *op) {
  llvm::hash_code hash =
      llvm::hash_combine(op->getName().getAsOpaquePointer(),
                         op->hashProperties(), op->getNumRegions());
  for (Type t : op->getOperandTypes())
    hash = llvm::hash_combine(hash, t.getAsOpaquePointer());
  for (Type t : op->getResultTypes())
    hash = llvm::hash_combine(hash, t.getAsOpaquePointer());
  for (Region &region : op->getRegions())
    for (Block &block : region)
      hash = llvm::hash_combine(hash, block.getOperations().size());
  return static_cast<unsigned>(hash);
}

/// True when `a` and `b` are the same computation up to their operands,
/// which need only have the same types: same name, properties and result
/// types, and bodies equal op for op, with values inside them used the same
/// way. `inner` maps values defined inside `a` to their counterparts in `b`.
/// A body's values (a linalg op's: a handful) map without a heap allocation.
using InnerValues = llvm::SmallDenseMap<Value, Value, 16>;

static bool sameStructure(Operation *a, Operation *b, InnerValues &inner,
                          bool nested) {
  if (a->getName() != b->getName() ||
      a->getNumOperands() != b->getNumOperands() ||
      a->getNumResults() != b->getNumResults() ||
      a->getNumRegions() != b->getNumRegions() ||
      !a->getName().compareOpProperties(a->getPropertiesStorage(),
                                        b->getPropertiesStorage()))
    return false;
  for (auto [x, y] : llvm::zip(a->getOperands(), b->getOperands())) {
    auto it = inner.find(x);
    if (it != inner.end() ? it->second != y : x.getType() != y.getType())
      return false;
  }
  for (auto [x, y] : llvm::zip(a->getResults(), b->getResults())) {
    if (x.getType() != y.getType())
      return false;
    // Results of the compared ops themselves are not used inside them.
    if (nested)
      inner[x] = y;
  }
  for (auto [ra, rb] : llvm::zip(a->getRegions(), b->getRegions())) {
    if (ra.getBlocks().size() != rb.getBlocks().size())
      return false;
    for (auto [ba, bb] : llvm::zip(ra, rb)) {
      if (ba.getNumArguments() != bb.getNumArguments() ||
          ba.getOperations().size() != bb.getOperations().size())
        return false;
      for (auto [x, y] : llvm::zip(ba.getArguments(), bb.getArguments())) {
        if (x.getType() != y.getType())
          return false;
        inner[x] = y;
      }
      for (auto [oa, ob] : llvm::zip(ba, bb))
        if (!sameStructure(&oa, &ob, inner, /*nested=*/true))
          return false;
    }
  }
  return true;
}

const ShardingRule *ShardingRuleCache::get(Operation *op) {
  // Asked before: one lookup (the interface query costs more).
  if (auto known = byOp.find(op); known != byOp.end())
    return known->second;
  if (!isa<ShardingRuleOpInterface>(op))
    return nullptr;
  auto known = byOp.try_emplace(op, nullptr).first;
  SmallVector<Entry, 1> &bucket = entries[structuralHash(op)];
  InnerValues inner;
  for (const Entry &e : bucket) {
    inner.clear();
    if (sameStructure(e.representative, op, inner, /*nested=*/false))
      return known->second = e.rule;
  }
  FailureOr<ShardingRule> rule = getShardingRule(op);
  const ShardingRule *stored = nullptr;
  if (succeeded(rule)) {
    storage.push_back(std::move(*rule));
    stored = &storage.back();
  }
  bucket.push_back({op, stored});
  return known->second = stored;
}

void ShardingRuleCache::forget(Operation *op) {
  op->walk([&](Operation *nested) {
    if (!isa<ShardingRuleOpInterface>(nested))
      return;
    byOp.erase(nested);
    auto it = entries.find(structuralHash(nested));
    if (it == entries.end())
      return;
    llvm::erase_if(it->second,
                   [&](const Entry &e) { return e.representative == nested; });
  });
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

/// True when every init of `op` is updated as `init + value` (addf or addi
/// with the init's block argument as one operand).
static bool hasAdditiveCombiners(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (!body)
    return false;
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield)
    return false;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    BlockArgument acc = op.getMatchingBlockArgument(&init);
    unsigned index = init.getOperandNumber() - op.getNumDpsInputs();
    Operation *def = yield.getOperand(index).getDefiningOp();
    if (!def || !isa<arith::AddFOp, arith::AddIOp>(def) ||
        !llvm::is_contained(def->getOperands(), acc))
      return false;
  }
  return true;
}

static FailureOr<ShardingRule> ruleForLinalg(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics())
    return failure();
  ShardingRule rule;
  // Loop sizes from the operand dimensions they index directly (cheaper than
  // inverting the indexing maps; a loop indexed only through `d0 + d1` stays
  // dynamic and is unsplittable anyway).
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges(iterators.size(), ShapedType::kDynamic);
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type)
      continue;
    AffineMap map = maps[operand.getOperandNumber()];
    for (auto [d, expr] : llvm::enumerate(map.getResults()))
      if (auto dim = dyn_cast<AffineDimExpr>(expr))
        if (ShapedType::isDynamic(ranges[dim.getPosition()]))
          ranges[dim.getPosition()] = type.getDimSize(d);
  }
  for (auto [size, iterator] : llvm::zip(ranges, iterators))
    rule.addFactor(size, iterator == utils::IteratorType::reduction
                             ? FactorKind::Reduction
                             : FactorKind::Parallel);

  SmallVector<int64_t> unsplittable;
  for (OpOperand &operand : op->getOpOperands()) {
    ShardingRule::TensorFactors dims;
    if (isa<RankedTensorType>(operand.get().getType())) {
      AffineMap map = maps[operand.getOperandNumber()];
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
  // A split reduction leaves a pending *sum*: only an additive combiner may
  // be split (a max or min reduction keeps its loops whole).
  if (op.getNumReductionLoops() > 0 && !hasAdditiveCombiners(op))
    for (auto [loop, iterator] : llvm::enumerate(iterators))
      if (iterator == utils::IteratorType::reduction)
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

/// A dimension kept whole by a slice, pad or concat is one parallel factor
/// shared by the tensors that carry it; a dimension that is cut, padded or
/// concatenated gets one unsplittable factor per tensor.
static ShardingRule::DimFactors unsplittableDim(ShardingRule &rule,
                                                int64_t size) {
  return {rule.addFactor(size, FactorKind::NeedReplication)};
}

/// extract_slice: source dimension d and its result dimension share a factor
/// when the slice takes d whole; dropped unit dimensions take none.
static FailureOr<ShardingRule> ruleForExtractSlice(tensor::ExtractSliceOp op) {
  RankedTensorType srcType = op.getSourceType();
  RankedTensorType resultType = op.getResultType();
  llvm::SmallBitVector dropped = op.getDroppedDims();
  ShardingRule rule;
  ShardingRule::TensorFactors src, result;
  for (int64_t d = 0; d < srcType.getRank(); ++d) {
    int64_t size = srcType.getDimSize(d);
    bool whole =
        !ShapedType::isDynamic(size) && op.isDynamicOffset(d) == false &&
        op.getStaticOffsets()[d] == 0 && op.getStaticSizes()[d] == size &&
        op.getStaticStrides()[d] == 1;
    if (dropped.test(d)) {
      src.push_back(size == 1 ? ShardingRule::DimFactors{}
                              : unsplittableDim(rule, size));
      continue;
    }
    if (whole) {
      ShardingRule::DimFactors f = {rule.addFactor(size, FactorKind::Parallel)};
      src.push_back(f);
      result.push_back(f);
      continue;
    }
    src.push_back(unsplittableDim(rule, size));
    result.push_back(
        unsplittableDim(rule, resultType.getDimSize(result.size())));
  }
  rule.getOperands().push_back(src);
  for (unsigned i = 1; i < op->getNumOperands(); ++i)
    rule.getOperands().push_back({});
  rule.getResults().push_back(result);
  return rule;
}

/// insert_slice: destination and result share every factor; a source
/// dimension shares the destination's when it covers it whole.
static FailureOr<ShardingRule> ruleForInsertSlice(tensor::InsertSliceOp op) {
  RankedTensorType srcType = op.getSourceType();
  RankedTensorType destType = op.getDestType();
  llvm::SmallBitVector dropped = op.getDroppedDims();
  ShardingRule rule;
  ShardingRule::TensorFactors src, dest;
  for (int64_t d = 0; d < destType.getRank(); ++d) {
    int64_t size = destType.getDimSize(d);
    bool whole = !ShapedType::isDynamic(size) && !op.isDynamicOffset(d) &&
                 op.getStaticOffsets()[d] == 0 &&
                 op.getStaticSizes()[d] == size &&
                 op.getStaticStrides()[d] == 1;
    if (whole && !dropped.test(d)) {
      ShardingRule::DimFactors f = {rule.addFactor(size, FactorKind::Parallel)};
      dest.push_back(f);
      src.push_back(f);
      continue;
    }
    dest.push_back(unsplittableDim(rule, size));
    if (!dropped.test(d))
      src.push_back(unsplittableDim(rule, srcType.getDimSize(src.size())));
  }
  rule.getOperands().push_back(src);
  rule.getOperands().push_back(dest);
  for (unsigned i = 2; i < op->getNumOperands(); ++i)
    rule.getOperands().push_back({});
  rule.getResults().push_back(dest);
  return rule;
}

static FailureOr<ShardingRule> ruleForConcat(tensor::ConcatOp op) {
  RankedTensorType type = op.getResultType();
  int64_t axis = op.getDim();
  ShardingRule rule;
  ShardingRule::TensorFactors shared;
  for (int64_t d = 0; d < type.getRank(); ++d)
    shared.push_back(d == axis
                         ? ShardingRule::DimFactors{}
                         : ShardingRule::DimFactors{rule.addFactor(
                               type.getDimSize(d), FactorKind::Parallel)});
  auto withAxis = [&](RankedTensorType t) {
    ShardingRule::TensorFactors dims = shared;
    dims[axis] = unsplittableDim(rule, t.getDimSize(axis));
    return dims;
  };
  for (Value input : op.getInputs())
    rule.getOperands().push_back(
        withAxis(cast<RankedTensorType>(input.getType())));
  rule.getResults().push_back(withAxis(type));
  return rule;
}

static FailureOr<ShardingRule> ruleForPad(tensor::PadOp op) {
  RankedTensorType srcType = op.getSourceType();
  RankedTensorType resultType = op.getResultType();
  ShardingRule rule;
  ShardingRule::TensorFactors src, result;
  for (int64_t d = 0; d < srcType.getRank(); ++d) {
    bool unpadded = !ShapedType::isDynamic(op.getStaticLow()[d]) &&
                    !ShapedType::isDynamic(op.getStaticHigh()[d]) &&
                    op.getStaticLow()[d] == 0 && op.getStaticHigh()[d] == 0;
    if (unpadded) {
      ShardingRule::DimFactors f = {
          rule.addFactor(srcType.getDimSize(d), FactorKind::Parallel)};
      src.push_back(f);
      result.push_back(f);
      continue;
    }
    src.push_back(unsplittableDim(rule, srcType.getDimSize(d)));
    result.push_back(unsplittableDim(rule, resultType.getDimSize(d)));
  }
  rule.getOperands().push_back(src);
  for (unsigned i = 1; i < op->getNumOperands(); ++i)
    rule.getOperands().push_back({});
  rule.getResults().push_back(result);
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
    if (!hasExactReassociation(op))
      return failure();
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
    if (!hasExactReassociation(op))
      return failure();
    return ruleForReshape(collapse.getSrcType(),
                          collapse.getReassociationIndices(),
                          op->getNumOperands(), /*expanding=*/false);
  }
};

/// A model that forwards to a rule builder taking the concrete op.
template <typename OpTy, FailureOr<ShardingRule> (*Build)(OpTy)>
struct FunctionModel
    : public ShardingRuleOpInterface::ExternalModel<FunctionModel<OpTy, Build>,
                                                    OpTy> {
  FailureOr<ShardingRule> getShardingRule(Operation *op) const {
    return Build(cast<OpTy>(op));
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
    tensor::ExtractSliceOp::attachInterface<
        FunctionModel<tensor::ExtractSliceOp, ruleForExtractSlice>>(*ctx);
    tensor::InsertSliceOp::attachInterface<
        FunctionModel<tensor::InsertSliceOp, ruleForInsertSlice>>(*ctx);
    tensor::ConcatOp::attachInterface<
        FunctionModel<tensor::ConcatOp, ruleForConcat>>(*ctx);
    tensor::PadOp::attachInterface<FunctionModel<tensor::PadOp, ruleForPad>>(
        *ctx);
  });
}
