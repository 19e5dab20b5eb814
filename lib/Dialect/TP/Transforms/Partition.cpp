//===- Partition.cpp - Global program to per-device program ---------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Per function with propagated shardings:
//  1. Record every tensor value's global type and sharding (arguments from
//     `tp.sharding`, results from `tp.shardings`, tp.annotate / tp.reshard
//     from their own) before any type changes.
//  2. Walk the ops in order, making each compute on its shard: result types
//     become shard types, shape-carrying attributes and operands (empty
//     sizes, expand_shape output shapes, slice sizes, constants) follow, a
//     split reduction keeps a non-identity init once, linalg.index over a
//     split loop is offset by the device's position, and tp.reshard becomes
//     collectives (Resharding.h).
//  3. The function type becomes the shard types; `tp.spmd = @mesh` marks it,
//     and its arguments and results keep their global shardings.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Passes.h"

#include "tp/Dialect/TP/IR/TPInterfaces.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Dialect/TP/Transforms/Resharding.h"
#include "tp/Dialect/TP/Transforms/Structure.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::tp {
#define GEN_PASS_DEF_PARTITIONPASS
#include "tp/Dialect/TP/Transforms/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

struct GlobalInfo {
  RankedTensorType type;
  ShardingAttr sharding;
};

class FunctionPartitioner {
public:
  FunctionPartitioner(FunctionOpInterface func, MeshOp mesh)
      : func(func), mesh(mesh) {}

  LogicalResult run();

private:
  LogicalResult record();
  LogicalResult partition(Operation *op);
  LogicalResult partitionLinalg(linalg::LinalgOp op);

  RankedTensorType localType(Value v) {
    const GlobalInfo &info = globals.at(v);
    return info.type.clone(
        getShardShape(info.type.getShape(), info.sharding, mesh));
  }
  ShardingAttr replicated(unsigned rank) {
    return ShardingAttr::get(func->getContext(),
                             FlatSymbolRefAttr::get(mesh.getSymNameAttr()),
                             SmallVector<SmallVector<StringRef>>(rank));
  }
  /// `to` stands for `from` (a replacement): same global type and sharding.
  void alias(Value to, Value from) {
    GlobalInfo info = globals.at(from);
    globals[to] = info;
  }
  /// The axes splitting dimension `dim` of `v`.
  SmallVector<StringRef> dimAxes(Value v, unsigned dim) {
    return globals.at(v).sharding.getDimAxes(dim);
  }
  /// Local size of `v`'s dimension `dim` (static or dynamic).
  OpFoldResult localDimSize(OpBuilder &b, Location loc, Value v, unsigned dim,
                            OpFoldResult globalSize);

  FunctionOpInterface func;
  MeshOp mesh;
  DenseMap<Value, GlobalInfo> globals;
  /// Ops that have a sharding rule, found before types change (rules read
  /// shapes).
  DenseSet<Operation *> ruled;
};

LogicalResult FunctionPartitioner::record() {
  for (auto [index, arg] : llvm::enumerate(func.getArguments())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      continue;
    auto sharding = func.getArgAttrOfType<ShardingAttr>(
        index, TPDialect::kShardingAttrName);
    globals[arg] = {type, sharding ? sharding : replicated(type.getRank())};
  }
  StringAttr shardingsName =
      StringAttr::get(func->getContext(), TPDialect::kShardingsAttrName);
  WalkResult walk =
      func.getFunctionBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
        bool isRuled = isa<ShardingRuleOpInterface>(op);
        if (isRuled)
          ruled.insert(op);
        // Bodies of ruled ops (linalg payloads) work on scalars.
        WalkResult next = isRuled ? WalkResult::skip() : WalkResult::advance();
        if (llvm::none_of(op->getResultTypes(),
                          llvm::IsaPred<RankedTensorType>))
          return next;
        ShardingAttr own = getOwnSharding(op);
        auto shardings = op->getAttrOfType<ArrayAttr>(shardingsName);
        for (auto [i, result] : llvm::enumerate(op->getResults())) {
          auto type = dyn_cast<RankedTensorType>(result.getType());
          if (!type)
            continue;
          ShardingAttr s = own;
          if (!s && shardings)
            s = dyn_cast<ShardingAttr>(shardings[i]);
          if (!s) {
            // Values inside a ruled op's region (none today) or ops that
            // propagation never saw: nothing to partition against.
            if (op->getParentOfType<linalg::LinalgOp>())
              continue;
            op->emitOpError() << "result #" << i
                              << " has no sharding; run --tp-propagate first";
            return WalkResult::interrupt();
          }
          globals[result] = {type, s};
        }
        return next;
      });
  return failure(walk.wasInterrupted());
}

OpFoldResult FunctionPartitioner::localDimSize(OpBuilder &b, Location loc,
                                               Value v, unsigned dim,
                                               OpFoldResult globalSize) {
  int64_t group = mesh.getGroupSize(dimAxes(v, dim));
  if (auto attr = dyn_cast<Attribute>(globalSize))
    return b.getIndexAttr(cast<IntegerAttr>(attr).getInt() / group);
  if (group == 1)
    return globalSize;
  Value divisor = arith::ConstantIndexOp::create(b, loc, group);
  return arith::DivUIOp::create(b, loc, cast<Value>(globalSize), divisor)
      .getResult();
}

/// The value an additive reduction starts from: 0.
static bool isZeroFill(Value v) {
  auto fill = v.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return false;
  Value scalar = fill.getInputs().front();
  return matchPattern(scalar, m_AnyZeroFloat()) ||
         matchPattern(scalar, m_Zero());
}

LogicalResult FunctionPartitioner::partitionLinalg(linalg::LinalgOp op) {
  // Inits are local already; results take their types.
  auto setResultTypes = [&] {
    OperandRange inits = op.getDpsInits();
    for (OpResult result : op->getResults())
      result.setType(inits[result.getResultNumber()].getType());
  };
  // Nothing split and nothing pending: only the types change.
  auto isSplit = [&](Value v) {
    auto it = globals.find(v);
    return it != globals.end() && !it->second.sharding.isFullyReplicated();
  };
  if (llvm::none_of(op->getOperands(), isSplit) &&
      llvm::none_of(op->getResults(), isSplit)) {
    setResultTypes();
    return success();
  }
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
    auto it = globals.find(v);
    if (it == globals.end())
      return;
    for (auto [d, expr] : llvm::enumerate(map.getResults()))
      if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
        unsigned loop = dim.getPosition();
        if (!seen[loop]) {
          loopAxes[loop] = it->second.sharding.getDimAxes(d);
          loopSizes[loop] = it->second.type.getDimSize(d);
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
    if (globals.count(result)) {
      partial = globals.at(result).sharding.getPartialAxes();
      break;
    }
  if (!partial.empty()) {
    for (OpOperand &init : op.getDpsInitsMutable()) {
      // Only an init the body reads adds to the result.
      if (!op.payloadUsesValueFromOperand(&init) || isZeroFill(init.get()))
        continue;
      ReshardStep step{ReshardStep::Kind::ZeroOthers, partial};
      Value zeroed = emitReshardSteps(b, loc, init.get(), mesh, step);
      alias(zeroed, init.get());
      init.set(zeroed);
    }
  }
  // linalg.index over a split loop: offset by this device's first index.
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

LogicalResult FunctionPartitioner::partition(Operation *op) {
  Location loc = op->getLoc();
  if (auto annotate = dyn_cast<AnnotateOp>(op)) {
    Value input = annotate.getInput();
    Value out = input;
    if (globals.at(input).sharding != annotate.getSharding()) {
      OpBuilder b(op);
      out = emitReshardSteps(
          b, loc, input, mesh,
          planReshard(globals.at(input).sharding, annotate.getSharding()));
    }
    alias(out, annotate.getResult());
    annotate.getResult().replaceAllUsesWith(out);
    op->erase();
    return success();
  }
  if (auto reshard = dyn_cast<ReshardOp>(op)) {
    OpBuilder b(op);
    Value out =
        emitReshardSteps(b, loc, reshard.getInput(), mesh,
                         planReshard(globals.at(reshard.getInput()).sharding,
                                     reshard.getSharding()));
    alias(out, reshard.getResult());
    if (Operation *last = out.getDefiningOp();
        last && out != reshard.getInput())
      last->setAttr(TPDialect::kShardingsAttrName,
                    ArrayAttr::get(op->getContext(), {reshard.getSharding()}));
    reshard.getResult().replaceAllUsesWith(out);
    op->erase();
    return success();
  }
  // tensor.dim means the global size: a split dimension's local size times
  // the group size.
  if (auto dim = dyn_cast<tensor::DimOp>(op)) {
    Value source = dim.getSource();
    if (!globals.count(source))
      return success();
    std::optional<int64_t> index = dim.getConstantIndex();
    ShardingAttr sharding = globals.at(source).sharding;
    if (!index) {
      if (sharding.isFullyReplicated() ||
          llvm::all_of(sharding.getDims(),
                       [](ArrayAttr axes) { return axes.empty(); }))
        return success();
      return op->emitOpError(
          "queries a dimension of a split tensor by a non-constant index; "
          "its global size is not known here");
    }
    if (*index < 0 || *index >= static_cast<int64_t>(sharding.getRank()))
      return op->emitOpError() << "queries dimension " << *index
                               << " of a tensor of rank " << sharding.getRank();
    int64_t group = mesh.getGroupSize(dimAxes(source, *index));
    if (group == 1)
      return success();
    OpBuilder b(op);
    b.setInsertionPointAfter(op);
    Value factor = arith::ConstantIndexOp::create(b, loc, group);
    auto global = arith::MulIOp::create(b, loc, dim.getResult(), factor);
    dim.getResult().replaceAllUsesExcept(global, global);
    return success();
  }

  // Nothing to do for ops without tensor results.
  if (llvm::none_of(op->getResults(),
                    [&](Value r) { return globals.count(r); }))
    return success();

  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return partitionLinalg(linalgOp);

  if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
    OpBuilder b(op);
    RankedTensorType local = localType(empty.getResult());
    SmallVector<Value> sizes;
    for (auto [d, size] : llvm::enumerate(empty.getType().getShape()))
      if (ShapedType::isDynamic(size))
        sizes.push_back(getValueOrCreateConstantIndexOp(
            b, loc,
            localDimSize(b, loc, empty.getResult(), d,
                         empty.getDynamicSize(d))));
    auto replacement = tensor::EmptyOp::create(b, loc, local.getShape(),
                                               local.getElementType(), sizes);
    replacement->setAttrs(op->getDiscardableAttrDictionary());
    alias(replacement.getResult(), empty.getResult());
    empty.getResult().replaceAllUsesWith(replacement.getResult());
    op->erase();
    return success();
  }

  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    Value result = constant.getResult();
    ShardingAttr sharding = globals.at(result).sharding;
    OpBuilder b(op);
    b.setInsertionPointAfter(op);
    auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
    if (splat && !sharding.isPartial()) {
      RankedTensorType local = localType(result);
      auto c = arith::ConstantOp::create(
          b, loc,
          SplatElementsAttr::get(local, splat.getSplatValue<Attribute>()));
      c->setAttrs(op->getDiscardableAttrDictionary());
      alias(c.getResult(), result);
      result.replaceAllUsesWith(c.getResult());
      op->erase();
      return success();
    }
    // A dense constant: every device holds it whole and keeps its block.
    Value local =
        emitReshardSteps(b, loc, result, mesh,
                         planReshard(replicated(sharding.getRank()), sharding));
    alias(local, result);
    result.replaceAllUsesExcept(local, local.getDefiningOp());
    return success();
  }

  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    RankedTensorType local = localType(expand.getResult());
    // Dynamic output sizes are global values: divide the split ones.
    OpBuilder b(op);
    unsigned dynamicIndex = 0;
    for (int64_t d = 0; d < local.getRank(); ++d) {
      if (!local.isDynamicDim(d))
        continue;
      OpOperand &size = expand.getOutputShapeMutable()[dynamicIndex++];
      OpFoldResult localSize =
          localDimSize(b, loc, expand.getResult(), d, size.get());
      size.set(getValueOrCreateConstantIndexOp(b, loc, localSize));
    }
    expand.setStaticOutputShape(local.getShape());
    expand.getResult().setType(local);
    return success();
  }

  // Slices take split dimensions whole: their sizes become local. `whole` is
  // the tensor the sizes index (the source of an extract, the destination
  // of an insert).
  auto localizeSizes = [&](auto sliceOp, Value whole) {
    SmallVector<int64_t> sizes(sliceOp.getStaticSizes());
    for (unsigned d = 0; d < sizes.size(); ++d)
      if (!dimAxes(whole, d).empty())
        sizes[d] = localType(whole).getDimSize(d);
    sliceOp.setStaticSizes(sizes);
    sliceOp.getResult().setType(localType(sliceOp.getResult()));
    return success();
  };
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return localizeSizes(slice, slice.getSource());
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
    return localizeSizes(insert, insert.getDest());

  // Everything else computes elementwise or by its operand types alone
  // (collapse_shape, concat, pad, softmax, arith, math): its results take
  // their shard types.
  if (!ruled.contains(op) && llvm::any_of(op->getResults(), [&](Value r) {
        return globals.count(r) && !globals.at(r).sharding.isFullyReplicated();
      }))
    return op->emitOpError("has no sharding rule but a split result; cannot "
                           "partition it");
  for (Value r : op->getResults())
    if (globals.count(r))
      r.setType(localType(r));
  return success();
}

LogicalResult FunctionPartitioner::run() {
  if (failed(record()))
    return failure();
  for (BlockArgument arg : func.getArguments())
    if (globals.count(arg))
      arg.setType(localType(arg));
  // Ops in program order; regions of linalg ops hold scalars only.
  SmallVector<Operation *> ops;
  func.getFunctionBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    ops.push_back(op);
    return isa<linalg::LinalgOp>(op) ? WalkResult::skip()
                                     : WalkResult::advance();
  });
  for (Operation *op : ops)
    if (failed(partition(op)))
      return failure();

  Operation *ret = func.getFunctionBody().back().getTerminator();
  SmallVector<Type> argTypes, resultTypes;
  for (BlockArgument arg : func.getArguments())
    argTypes.push_back(arg.getType());
  for (Value v : ret->getOperands())
    resultTypes.push_back(v.getType());
  func.setType(FunctionType::get(func->getContext(), argTypes, resultTypes));
  func->setAttr(TPDialect::kSpmdAttrName,
                FlatSymbolRefAttr::get(mesh.getSymNameAttr()));
  return success();
}

/// The mesh of a propagated function: the one its argument shardings name.
MeshOp functionMesh(FunctionOpInterface func, SymbolTableCollection &symbols) {
  FlatSymbolRefAttr ref;
  for (unsigned i = 0; i < func.getNumArguments() && !ref; ++i)
    if (auto s = func.getArgAttrOfType<ShardingAttr>(
            i, TPDialect::kShardingAttrName))
      ref = s.getMesh();
  if (!ref)
    func.getFunctionBody().walk([&](Operation *op) {
      if (ref)
        return;
      if (auto a = op->getAttrOfType<ArrayAttr>(TPDialect::kShardingsAttrName))
        for (Attribute s : a)
          if (auto sharding = dyn_cast<ShardingAttr>(s)) {
            ref = sharding.getMesh();
            break;
          }
    });
  if (!ref)
    return MeshOp();
  return symbols.lookupNearestSymbolFrom<MeshOp>(func, ref.getAttr());
}

struct PartitionPass : public tp::impl::PartitionPassBase<PartitionPass> {
  void runOnOperation() override {
    SymbolTableCollection symbols;
    for (auto func : getOperation().getOps<FunctionOpInterface>()) {
      if (func.isExternal() || func->hasAttr(TPDialect::kSpmdAttrName))
        continue;
      MeshOp mesh = functionMesh(func, symbols);
      if (!mesh)
        continue;
      if (failed(checkShardableStructure(func)))
        return signalPassFailure();
      FunctionPartitioner partitioner(func, mesh);
      if (failed(partitioner.run()))
        return signalPassFailure();
    }
  }
};

} // namespace
