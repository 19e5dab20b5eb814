//===- Partitioning.h - What partitioning models see ------------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// `--tp-partition` records every tensor value's global type and sharding,
// then asks each op's PartitionableOpInterface model, in program order, to
// compute on its shard. The context below is what a model reads (global
// types, shardings, the mesh) and the bookkeeping it keeps (replacements).
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_TRANSFORMS_PARTITIONING_H
#define TP_DIALECT_TP_TRANSFORMS_PARTITIONING_H

#include "tp/Dialect/TP/IR/TPInterfaces.h"
#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir {
class DialectRegistry;
namespace tp {

class PartitionContext {
public:
  explicit PartitionContext(MeshOp mesh) : mesh(mesh) {}

  MeshOp getMesh() const { return mesh; }

  /// Records `v`'s global type and sharding (before types change).
  void record(Value v, RankedTensorType type, ShardingAttr sharding) {
    globals[v] = {type, sharding};
  }
  /// Whether `v` is a tensor whose global type and sharding are recorded.
  bool isKnown(Value v) const { return globals.count(v); }
  /// The global type and sharding of a known value.
  RankedTensorType getGlobalType(Value v) const { return globals.at(v).type; }
  ShardingAttr getSharding(Value v) const { return globals.at(v).sharding; }
  /// The type of `v`'s shard on one device.
  RankedTensorType getLocalType(Value v) const;
  /// Known and split along some dimension or pending.
  bool isSplitOrPending(Value v) const {
    auto it = globals.find(v);
    return it != globals.end() && !it->second.sharding.isFullyReplicated();
  }
  /// The axes splitting dimension `dim` of a known value.
  SmallVector<StringRef> getDimAxes(Value v, unsigned dim) const {
    return getSharding(v).getDimAxes(dim);
  }
  /// The replicated sharding of rank `rank` over the mesh.
  ShardingAttr getReplicated(unsigned rank) const;
  /// `to` stands for `from` (a replacement): same global type and sharding.
  void alias(Value to, Value from) {
    GlobalInfo info = globals.at(from);
    globals[to] = info;
  }
  /// The local size of `v`'s dimension `dim` whose global size is
  /// `globalSize` (static, or a value computed at run time).
  OpFoldResult getLocalDimSize(OpBuilder &b, Location loc, Value v,
                               unsigned dim, OpFoldResult globalSize) const;
  /// Emits the collectives that take local value `v` from sharding `from` to
  /// `to`; returns `v` itself when they are the same.
  Value reshard(OpBuilder &b, Location loc, Value v, ShardingAttr from,
                ShardingAttr to) const;

private:
  struct GlobalInfo {
    RankedTensorType type;
    ShardingAttr sharding;
  };
  /// Op handles are not const-correct; queries do not change the mesh.
  mutable MeshOp mesh;
  DenseMap<Value, GlobalInfo> globals;
};

/// Attaches PartitionableOpInterface models to the ops that have sharding
/// rules (every linalg structured op, linalg.softmax, arith and math ops,
/// tensor.empty / expand_shape / collapse_shape / extract_slice /
/// insert_slice / concat / pad), to tensor.dim, and to tp.annotate and
/// tp.reshard.
void registerPartitionModels(DialectRegistry &registry);

} // namespace tp
} // namespace mlir

#endif // TP_DIALECT_TP_TRANSFORMS_PARTITIONING_H
