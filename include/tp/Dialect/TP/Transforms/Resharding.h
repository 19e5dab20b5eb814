//===- Resharding.h - Collectives that change a sharding --------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A change of sharding becomes a short sequence of collectives, planned axis by
// axis over a mesh of any rank:
//   partial -> replicated          all_reduce
//   partial -> split               reduce_scatter
//   split   -> replicated          all_gather        (innermost axis first)
//   split dim i -> split dim j     all_to_all
//   replicated -> split            all_slice         (no communication)
//   replicated -> partial          keep the value on one device, zeros
//   elsewhere
// Adjacent steps of one kind on one dimension are merged into one collective
// over several axes.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_TRANSFORMS_RESHARDING_H
#define TP_DIALECT_TP_TRANSFORMS_RESHARDING_H

#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::tp {

struct ReshardStep {
  enum class Kind {
    AllReduce,
    ReduceScatter,
    AllGather,
    AllToAll,
    AllSlice,
    /// Make a replicated value partial: zeros on every device but the first
    /// of each group.
    ZeroOthers,
  };
  Kind kind;
  SmallVector<StringRef> axes;
  /// The dimension gathered, sliced or scattered; for all_to_all, the split
  /// dimension.
  int64_t dim = -1;
  /// For all_to_all, the concatenated dimension.
  int64_t concatDim = -1;
};

StringRef stringifyReshardStepKind(ReshardStep::Kind kind);

/// The steps that turn a value sharded as `from` into one sharded as `to`
/// (same mesh, same rank), in order.
SmallVector<ReshardStep> planReshard(ShardingAttr from, ShardingAttr to);

/// Emits `steps` on `local`, a shard of a value sharded as `from`; returns the
/// shard in the final sharding.
Value emitReshardSteps(OpBuilder &b, Location loc, Value local, MeshOp mesh,
                       ArrayRef<ReshardStep> steps);

} // namespace mlir::tp

#endif // TP_DIALECT_TP_TRANSFORMS_RESHARDING_H
