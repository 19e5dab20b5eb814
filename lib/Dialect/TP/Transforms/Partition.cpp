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
//  2. Walk the ops in order; each op's PartitionableOpInterface model makes
//     it compute on its shard (PartitionModels.cpp: result types become
//     shard types, shape-carrying attributes and operands follow, a split
//     reduction keeps a non-identity init once, linalg.index over a split
//     loop is offset by the device's position, tp.reshard becomes
//     collectives). An op without a model stays as it is when its tensors
//     are replicated, and is an error naming it otherwise.
//  3. The function type becomes the shard types; `tp.spmd = @mesh` marks it,
//     and its arguments and results keep their global shardings.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Passes.h"

#include "tp/Dialect/TP/IR/TPInterfaces.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Dialect/TP/Transforms/Partitioning.h"
#include "tp/Dialect/TP/Transforms/Structure.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::tp {
#define GEN_PASS_DEF_PARTITIONPASS
#include "tp/Dialect/TP/Transforms/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

class FunctionPartitioner {
public:
  FunctionPartitioner(FunctionOpInterface func, MeshOp mesh)
      : func(func), context(mesh) {}

  LogicalResult run();

private:
  LogicalResult record();
  LogicalResult partition(Operation *op);

  FunctionOpInterface func;
  PartitionContext context;
};

LogicalResult FunctionPartitioner::record() {
  for (auto [index, arg] : llvm::enumerate(func.getArguments())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      continue;
    auto sharding = func.getArgAttrOfType<ShardingAttr>(
        index, TPDialect::kShardingAttrName);
    context.record(arg, type,
                   sharding ? sharding : context.getReplicated(type.getRank()));
  }
  StringAttr shardingsName =
      StringAttr::get(func->getContext(), TPDialect::kShardingsAttrName);
  WalkResult walk =
      func.getFunctionBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
        // Bodies of ops that partition as a whole (linalg payloads) work on
        // scalars.
        WalkResult next = isa<PartitionableOpInterface>(op)
                              ? WalkResult::skip()
                              : WalkResult::advance();
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
            op->emitOpError() << "result #" << i
                              << " has no sharding; run --tp-propagate first";
            return WalkResult::interrupt();
          }
          context.record(result, type, s);
        }
        return next;
      });
  return failure(walk.wasInterrupted());
}

LogicalResult FunctionPartitioner::partition(Operation *op) {
  if (auto partitionable = dyn_cast<PartitionableOpInterface>(op))
    return partitionable.partition(context);
  // The function's return passes shards on; the function type follows.
  if (op->getParentOp() == func.getOperation() &&
      op->hasTrait<OpTrait::IsTerminator>())
    return success();
  // Without a model, an op runs unchanged on every device: right only when
  // all its tensors are replicated.
  auto split = [&](Value v) { return context.isSplitOrPending(v); };
  if (llvm::any_of(op->getOperands(), split) ||
      llvm::any_of(op->getResults(), split))
    return op->emitOpError()
           << "has split or pending tensors but no partitioning model; "
              "'"
           << op->getName()
           << "' needs a PartitionableOpInterface model to run on shards";
  return success();
}

LogicalResult FunctionPartitioner::run() {
  if (failed(record()))
    return failure();
  for (BlockArgument arg : func.getArguments())
    if (context.isKnown(arg))
      arg.setType(context.getLocalType(arg));
  // Ops in program order; the regions of ops that partition as a whole are
  // theirs.
  SmallVector<Operation *> ops;
  func.getFunctionBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    ops.push_back(op);
    return isa<PartitionableOpInterface>(op) ? WalkResult::skip()
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
                FlatSymbolRefAttr::get(context.getMesh().getSymNameAttr()));
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
