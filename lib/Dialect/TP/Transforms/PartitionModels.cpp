//===- PartitionModels.cpp - How each op computes on its shard ------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// PartitionableOpInterface models of the upstream ops that have sharding
// rules, of tensor.dim, and of the tp constraints; the context they use.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Partitioning.h"

#include "tp/Dialect/TP/Transforms/Resharding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::tp;

//===----------------------------------------------------------------------===//
// PartitionContext
//===----------------------------------------------------------------------===//

RankedTensorType PartitionContext::getLocalType(Value v) const {
  const GlobalInfo &info = globals.at(v);
  return info.type.clone(
      getShardShape(info.type.getShape(), info.sharding, mesh));
}

ShardingAttr PartitionContext::getReplicated(unsigned rank) const {
  return ShardingAttr::get(mesh->getContext(),
                           FlatSymbolRefAttr::get(mesh.getSymNameAttr()),
                           SmallVector<SmallVector<StringRef>>(rank));
}

OpFoldResult PartitionContext::getLocalDimSize(OpBuilder &b, Location loc,
                                               Value v, unsigned dim,
                                               OpFoldResult globalSize) const {
  int64_t group = mesh.getGroupSize(getDimAxes(v, dim));
  if (auto attr = dyn_cast<Attribute>(globalSize))
    return b.getIndexAttr(cast<IntegerAttr>(attr).getInt() / group);
  if (group == 1)
    return globalSize;
  Value divisor = arith::ConstantIndexOp::create(b, loc, group);
  return arith::DivUIOp::create(b, loc, cast<Value>(globalSize), divisor)
      .getResult();
}

Value PartitionContext::reshard(OpBuilder &b, Location loc, Value v,
                                ShardingAttr from, ShardingAttr to) const {
  if (from == to)
    return v;
  return emitReshardSteps(b, loc, v, mesh, planReshard(from, to));
}

//===----------------------------------------------------------------------===//
// Models
//===----------------------------------------------------------------------===//

namespace {

/// Every known tensor result takes its shard type: ops that compute
/// elementwise or by their operand types alone (collapse_shape, concat, pad,
/// softmax, arith, math).
LogicalResult takeLocalTypes(Operation *op, PartitionContext &context) {
  for (Value r : op->getResults())
    if (context.isKnown(r))
      r.setType(context.getLocalType(r));
  return success();
}

template <typename OpTy>
struct LocalTypesModel
    : public PartitionableOpInterface::ExternalModel<LocalTypesModel<OpTy>,
                                                     OpTy> {
  LogicalResult partition(Operation *op, PartitionContext &context) const {
    return takeLocalTypes(op, context);
  }
};

/// The value an additive reduction starts from: 0.
bool isZeroFill(Value v) {
  auto fill = v.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return false;
  Value scalar = fill.getInputs().front();
  return matchPattern(scalar, m_AnyZeroFloat()) ||
         matchPattern(scalar, m_Zero());
}

/// Linalg structured ops: inits are local already, so results take their
/// types; a split reduction keeps a non-identity init on one device only;
/// linalg.index over a split loop is offset by the device's position.
LogicalResult partitionLinalg(linalg::LinalgOp op, PartitionContext &context) {
  auto setResultTypes = [&] {
    OperandRange inits = op.getDpsInits();
    for (OpResult result : op->getResults())
      result.setType(inits[result.getResultNumber()].getType());
  };
  // Nothing split and nothing pending: only the types change.
  auto isSplit = [&](Value v) { return context.isSplitOrPending(v); };
  if (llvm::none_of(op->getOperands(), isSplit) &&
      llvm::none_of(op->getResults(), isSplit)) {
    setResultTypes();
    return success();
  }
  MeshOp mesh = context.getMesh();
  // Named ops build their maps on each query: ask once.
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned numLoops = maps.empty() ? 0 : maps.front().getNumDims();
  // Which axes split each loop: read off any tensor that has the loop as a
  // dimension (they agree after propagation).
  SmallVector<SmallVector<StringRef>> loopAxes(numLoops);
  // Global loop sizes (the operands may already have shard types).
  SmallVector<int64_t> loopSizes(numLoops, ShapedType::kDynamic);
  SmallVector<bool> seen(numLoops, false);
  auto note = [&](Value v, AffineMap map) {
    if (!context.isKnown(v))
      return;
    for (auto [d, expr] : llvm::enumerate(map.getResults()))
      if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
        unsigned loop = dim.getPosition();
        if (!seen[loop]) {
          loopAxes[loop] = context.getDimAxes(v, d);
          loopSizes[loop] = context.getGlobalType(v).getDimSize(d);
          seen[loop] = true;
        }
      }
  };
  unsigned numInputs = op.getNumDpsInputs();
  for (OpResult result : op->getResults())
    note(result, maps[numInputs + result.getResultNumber()]);
  for (OpOperand &operand : op->getOpOperands())
    note(operand.get(), maps[operand.getOperandNumber()]);

  OpBuilder b(op);
  Location loc = op.getLoc();
  // A split reduction: each device sums its part; the init must count once.
  SmallVector<StringRef> partial;
  for (OpResult result : op->getResults())
    if (context.isKnown(result)) {
      partial = context.getSharding(result).getPartialAxes();
      break;
    }
  if (!partial.empty()) {
    for (OpOperand &init : op.getDpsInitsMutable()) {
      // Only an init the body reads adds to the result.
      if (!op.payloadUsesValueFromOperand(&init) || isZeroFill(init.get()))
        continue;
      ReshardStep step{ReshardStep::Kind::ZeroOthers, partial};
      Value zeroed = emitReshardSteps(b, loc, init.get(), mesh, step);
      context.alias(zeroed, init.get());
      init.set(zeroed);
    }
  }
  if (Block *body = op.getBlock()) {
    SmallVector<linalg::IndexOp> indices(body->getOps<linalg::IndexOp>());
    for (linalg::IndexOp index : indices) {
      ArrayRef<StringRef> axes = loopAxes[index.getDim()];
      if (axes.empty())
        continue;
      int64_t globalSize = loopSizes[index.getDim()];
      if (ShapedType::isDynamic(globalSize))
        return op->emitOpError()
               << "uses linalg.index over loop " << index.getDim()
               << ", which is split and of dynamic size; its offset needs a "
                  "static size";
      int64_t localSize = globalSize / mesh.getGroupSize(axes);
      Value position = AxisIndexOp::create(b, loc, mesh.getSymName(), axes);
      Value size = arith::ConstantIndexOp::create(b, loc, localSize);
      Value offset = arith::MulIOp::create(b, loc, position, size);
      OpBuilder inner(index->getContext());
      inner.setInsertionPointAfter(index);
      Value shifted = arith::AddIOp::create(inner, loc, index, offset);
      index.getResult().replaceAllUsesExcept(shifted, shifted.getDefiningOp());
    }
  }
  setResultTypes();
  return success();
}

template <typename OpTy>
struct LinalgModel
    : public PartitionableOpInterface::ExternalModel<LinalgModel<OpTy>, OpTy> {
  LogicalResult partition(Operation *op, PartitionContext &context) const {
    return partitionLinalg(cast<linalg::LinalgOp>(op), context);
  }
};

/// A constant: a splat is rebuilt at the shard type; a dense one is held
/// whole by every device, which keeps its block.
LogicalResult partitionConstant(arith::ConstantOp constant,
                                PartitionContext &context) {
  Value result = constant.getResult();
  if (!context.isKnown(result))
    return success();
  ShardingAttr sharding = context.getSharding(result);
  Location loc = constant.getLoc();
  OpBuilder b(constant);
  b.setInsertionPointAfter(constant);
  auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
  if (splat && !sharding.isPartial()) {
    RankedTensorType local = context.getLocalType(result);
    auto c = arith::ConstantOp::create(
        b, loc,
        SplatElementsAttr::get(local, splat.getSplatValue<Attribute>()));
    c->setAttrs(constant->getDiscardableAttrDictionary());
    context.alias(c.getResult(), result);
    result.replaceAllUsesWith(c.getResult());
    constant->erase();
    return success();
  }
  Value local = context.reshard(
      b, loc, result, context.getReplicated(sharding.getRank()), sharding);
  context.alias(local, result);
  result.replaceAllUsesExcept(local, local.getDefiningOp());
  return success();
}

/// Arith ops: constants as above, every other op elementwise.
template <typename OpTy>
struct ArithModel
    : public PartitionableOpInterface::ExternalModel<ArithModel<OpTy>, OpTy> {
  LogicalResult partition(Operation *op, PartitionContext &context) const {
    if (auto constant = dyn_cast<arith::ConstantOp>(op))
      return partitionConstant(constant, context);
    return takeLocalTypes(op, context);
  }
};

/// tensor.empty: the shard shape; dynamic sizes are divided.
struct EmptyModel
    : public PartitionableOpInterface::ExternalModel<EmptyModel,
                                                     tensor::EmptyOp> {
  LogicalResult partition(Operation *op, PartitionContext &context) const {
    auto empty = cast<tensor::EmptyOp>(op);
    if (!context.isKnown(empty.getResult()))
      return success();
    RankedTensorType local = context.getLocalType(empty.getResult());
    // Static sizes: only the type changes, in place (as a linalg op's).
    if (empty.getType().hasStaticShape()) {
      empty.getResult().setType(local);
      return success();
    }
    OpBuilder b(op);
    Location loc = op->getLoc();
    SmallVector<Value> sizes;
    for (auto [d, size] : llvm::enumerate(empty.getType().getShape()))
      if (ShapedType::isDynamic(size))
        sizes.push_back(getValueOrCreateConstantIndexOp(
            b, loc,
            context.getLocalDimSize(b, loc, empty.getResult(), d,
                                    empty.getDynamicSize(d))));
    auto replacement = tensor::EmptyOp::create(b, loc, local.getShape(),
                                               local.getElementType(), sizes);
    replacement->setAttrs(op->getDiscardableAttrDictionary());
    context.alias(replacement.getResult(), empty.getResult());
    empty.getResult().replaceAllUsesWith(replacement.getResult());
    op->erase();
    return success();
  }
};

/// tensor.expand_shape: dynamic output sizes are global values; the split
/// ones are divided.
struct ExpandShapeModel
    : public PartitionableOpInterface::ExternalModel<ExpandShapeModel,
                                                     tensor::ExpandShapeOp> {
  LogicalResult partition(Operation *op, PartitionContext &context) const {
    auto expand = cast<tensor::ExpandShapeOp>(op);
    if (!context.isKnown(expand.getResult()))
      return success();
    RankedTensorType local = context.getLocalType(expand.getResult());
    OpBuilder b(op);
    Location loc = op->getLoc();
    // Each output size as the op gives it (a value, or a constant even where
    // the result type's dimension is dynamic), made local.
    SmallVector<OpFoldResult> sizes = expand.getMixedOutputShape();
    SmallVector<int64_t> staticSizes;
    SmallVector<Value> dynamicSizes;
    for (auto [d, size] : llvm::enumerate(sizes)) {
      OpFoldResult localSize =
          context.getLocalDimSize(b, loc, expand.getResult(), d, size);
      dispatchIndexOpFoldResult(localSize, dynamicSizes, staticSizes);
    }
    expand.getOutputShapeMutable().assign(dynamicSizes);
    expand.setStaticOutputShape(staticSizes);
    expand.getResult().setType(local);
    return success();
  }
};

/// Slices take split dimensions whole: their sizes become local. `whole` is
/// the tensor the sizes index (the source of an extract, the destination of
/// an insert).
template <typename OpTy>
LogicalResult localizeSizes(OpTy slice, Value whole,
                            PartitionContext &context) {
  if (!context.isKnown(slice.getResult()) || !context.isKnown(whole))
    return success();
  SmallVector<int64_t> sizes(slice.getStaticSizes());
  for (unsigned d = 0; d < sizes.size(); ++d)
    if (!context.getDimAxes(whole, d).empty())
      sizes[d] = context.getLocalType(whole).getDimSize(d);
  slice.setStaticSizes(sizes);
  slice.getResult().setType(context.getLocalType(slice.getResult()));
  return success();
}

struct ExtractSliceModel
    : public PartitionableOpInterface::ExternalModel<ExtractSliceModel,
                                                     tensor::ExtractSliceOp> {
  LogicalResult partition(Operation *op, PartitionContext &context) const {
    auto slice = cast<tensor::ExtractSliceOp>(op);
    return localizeSizes(slice, slice.getSource(), context);
  }
};

struct InsertSliceModel
    : public PartitionableOpInterface::ExternalModel<InsertSliceModel,
                                                     tensor::InsertSliceOp> {
  LogicalResult partition(Operation *op, PartitionContext &context) const {
    auto insert = cast<tensor::InsertSliceOp>(op);
    return localizeSizes(insert, insert.getDest(), context);
  }
};

/// tensor.dim means the global size: a split dimension's local size times
/// the group size.
struct DimModel
    : public PartitionableOpInterface::ExternalModel<DimModel, tensor::DimOp> {
  LogicalResult partition(Operation *op, PartitionContext &context) const {
    auto dim = cast<tensor::DimOp>(op);
    Value source = dim.getSource();
    if (!context.isKnown(source))
      return success();
    std::optional<int64_t> index = dim.getConstantIndex();
    ShardingAttr sharding = context.getSharding(source);
    if (!index) {
      if (llvm::all_of(sharding.getDims(),
                       [](ArrayAttr axes) { return axes.empty(); }))
        return success();
      return op->emitOpError(
          "queries a dimension of a split tensor by a non-constant index; "
          "its global size is not known here");
    }
    if (*index < 0 || *index >= static_cast<int64_t>(sharding.getRank()))
      return op->emitOpError() << "queries dimension " << *index
                               << " of a tensor of rank " << sharding.getRank();
    int64_t group =
        context.getMesh().getGroupSize(context.getDimAxes(source, *index));
    if (group == 1)
      return success();
    OpBuilder b(op);
    b.setInsertionPointAfter(op);
    Location loc = op->getLoc();
    Value factor = arith::ConstantIndexOp::create(b, loc, group);
    auto global = arith::MulIOp::create(b, loc, dim.getResult(), factor);
    dim.getResult().replaceAllUsesExcept(global, global);
    return success();
  }
};

/// tp.annotate: the collectives from its input's sharding to its own.
struct AnnotateModel
    : public PartitionableOpInterface::ExternalModel<AnnotateModel,
                                                     AnnotateOp> {
  LogicalResult partition(Operation *op, PartitionContext &context) const {
    auto annotate = cast<AnnotateOp>(op);
    Value input = annotate.getInput();
    OpBuilder b(op);
    Value out =
        context.reshard(b, op->getLoc(), input, context.getSharding(input),
                        annotate.getSharding());
    context.alias(out, annotate.getResult());
    annotate.getResult().replaceAllUsesWith(out);
    op->erase();
    return success();
  }
};

/// tp.reshard: the collectives it stands for; the last one carries the
/// target sharding.
struct ReshardModel
    : public PartitionableOpInterface::ExternalModel<ReshardModel, ReshardOp> {
  LogicalResult partition(Operation *op, PartitionContext &context) const {
    auto reshard = cast<ReshardOp>(op);
    Value input = reshard.getInput();
    OpBuilder b(op);
    Value out = emitReshardSteps(
        b, op->getLoc(), input, context.getMesh(),
        planReshard(context.getSharding(input), reshard.getSharding()));
    context.alias(out, reshard.getResult());
    if (Operation *last = out.getDefiningOp(); last && out != input)
      last->setAttr(TPDialect::kShardingsAttrName,
                    ArrayAttr::get(op->getContext(), {reshard.getSharding()}));
    reshard.getResult().replaceAllUsesWith(out);
    op->erase();
    return success();
  }
};

template <template <typename> class Model, typename... OpTys>
void attachAll(MLIRContext *ctx) {
  (OpTys::template attachInterface<Model<OpTys>>(*ctx), ...);
}

} // namespace

void mlir::tp::registerPartitionModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TPDialect *) {
    AnnotateOp::attachInterface<AnnotateModel>(*ctx);
    ReshardOp::attachInterface<ReshardModel>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    attachAll<LinalgModel,
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
              >(ctx);
    linalg::SoftmaxOp::attachInterface<LocalTypesModel<linalg::SoftmaxOp>>(
        *ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    attachAll<ArithModel,
#define GET_OP_LIST
#include "mlir/Dialect/Arith/IR/ArithOps.cpp.inc"
              >(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, math::MathDialect *) {
    attachAll<LocalTypesModel,
#define GET_OP_LIST
#include "mlir/Dialect/Math/IR/MathOps.cpp.inc"
              >(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::EmptyOp::attachInterface<EmptyModel>(*ctx);
    tensor::ExpandShapeOp::attachInterface<ExpandShapeModel>(*ctx);
    tensor::ExtractSliceOp::attachInterface<ExtractSliceModel>(*ctx);
    tensor::InsertSliceOp::attachInterface<InsertSliceModel>(*ctx);
    tensor::DimOp::attachInterface<DimModel>(*ctx);
    tensor::CollapseShapeOp::attachInterface<
        LocalTypesModel<tensor::CollapseShapeOp>>(*ctx);
    tensor::ConcatOp::attachInterface<LocalTypesModel<tensor::ConcatOp>>(*ctx);
    tensor::PadOp::attachInterface<LocalTypesModel<tensor::PadOp>>(*ctx);
  });
}
