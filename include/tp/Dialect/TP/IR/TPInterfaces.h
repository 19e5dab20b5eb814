//===- TPInterfaces.h - tp dialect interfaces -------------------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_IR_TPINTERFACES_H
#define TP_DIALECT_TP_IR_TPINTERFACES_H

#include "mlir/IR/OpDefinition.h"
#include "tp/Dialect/TP/IR/ShardingRule.h"
#include "llvm/ADT/DenseMap.h"
#include <deque>

namespace mlir::tp {
/// What a partitioning model sees and may do (Partitioning.h).
class PartitionContext;
} // namespace mlir::tp

#include "tp/Dialect/TP/IR/TPInterfaces.h.inc"

namespace mlir {
class DialectRegistry;
namespace tp {

/// Attaches ShardingRuleOpInterface external models to the upstream ops that
/// tp-mlir's inputs use: every linalg structured op, linalg.softmax,
/// elementwise arith and math ops, arith.constant, tensor.empty,
/// tensor.expand_shape / collapse_shape / extract_slice / insert_slice /
/// concat / pad.
void registerShardingRuleModels(DialectRegistry &registry);

/// The rule of `op`, or failure when it has none.
FailureOr<ShardingRule> getShardingRule(Operation *op);

/// Rules shared among ops of the same structure. A rule depends only on an
/// op's name, properties, operand and result types and region bodies, so the
/// 64 identical layers of a stack need one rule per distinct op of a layer.
/// Ops are compared with the first op seen of their structure (the
/// representative), which must stay alive while the cache is used. Each op's
/// answer is also kept by address, so asking again costs one lookup: the
/// passes that share a cache (propagation, the search, reshard insertion)
/// each ask about every op.
class ShardingRuleCache {
public:
  /// The rule of `op`, or null when it has none; owned by the cache.
  const ShardingRule *get(Operation *op);
  /// Drops `op` (and the ops nested in it): call it before erasing an op the
  /// cache may have seen, whose address a new op could get, and which the
  /// cache would otherwise compare against after it was freed.
  void forget(Operation *op);

private:
  struct Entry {
    Operation *representative;
    const ShardingRule *rule;
  };
  /// Representatives by structural hash.
  DenseMap<unsigned, SmallVector<Entry, 1>> entries;
  /// Every op asked about, with its answer.
  DenseMap<Operation *, const ShardingRule *> byOp;
  std::deque<ShardingRule> storage;
};

/// True when `op`'s results are linear in the operands marked in `partial`
/// taken together (the others held fixed): f(sum_i x_i, c) = sum_i f(x_i, c).
/// Then pending sums may flow through `op` unreduced. Known from structure:
/// reshapes, transposes and extract_slice of a partial value; addf/subf of
/// two partials; mulf by, and divf by, a non-partial value; negf; and
/// linalg ops whose bodies combine their partial inputs only that way
/// (matmul with one partial operand accumulates linearly).
bool isLinearIn(Operation *op, ArrayRef<bool> partial);

} // namespace tp
} // namespace mlir

#endif // TP_DIALECT_TP_IR_TPINTERFACES_H
