//===- TPInterfaces.h - tp dialect interfaces -------------------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_IR_TPINTERFACES_H
#define TP_DIALECT_TP_IR_TPINTERFACES_H

#include "mlir/IR/OpDefinition.h"
#include "tp/Dialect/TP/IR/ShardingRule.h"

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

} // namespace tp
} // namespace mlir

#endif // TP_DIALECT_TP_IR_TPINTERFACES_H
