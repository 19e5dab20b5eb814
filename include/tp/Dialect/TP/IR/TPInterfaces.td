//===- TPInterfaces.td - tp dialect interfaces -------------*- tablegen -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_IR_TPINTERFACES_TD
#define TP_DIALECT_TP_IR_TPINTERFACES_TD

include "mlir/IR/OpBase.td"

def TP_ShardingRuleOpInterface : OpInterface<"ShardingRuleOpInterface"> {
  let cppNamespace = "::mlir::tp";
  let description = [{
    Describes an op as factors (see `ShardingRule`): which factors index each
    dimension of each operand and result, their sizes, and whether each is
    parallel, a reduction, or must stay whole. Upstream ops get it through
    external models derived from their structure (linalg indexing maps and
    iterator types, elementwise traits, reshape reassociations); a new op
    gets a rule by implementing this interface.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/[{
        Returns the op's rule, or failure when its shapes or attributes do
        not allow one (for example a dynamic size that a factor needs).
      }],
      /*retTy=*/"::mlir::FailureOr<::mlir::tp::ShardingRule>",
      /*methodName=*/"getShardingRule",
      /*args=*/(ins)
    >
  ];
}

def TP_PartitionableOpInterface : OpInterface<"PartitionableOpInterface"> {
  let cppNamespace = "::mlir::tp";
  let description = [{
    Rewrites an op of the global program into what one device computes, for
    `--tp-partition`. The partitioner visits ops in program order and calls
    the op's model once; by then every operand has its shard type, and the
    context (`PartitionContext`, Partitioning.h) holds the global type and
    sharding of every tensor value as propagation left them. The model makes
    the op compute on its shard: result types, shape-carrying attributes and
    operands, device offsets, collectives where the op needs them. A value
    that replaces another is recorded with `PartitionContext::alias`.

    Upstream ops get it through external models beside their sharding rules
    (`registerPartitionModels`): linalg structured ops, tensor.empty,
    constants, reshapes, slices, tensor.dim, elementwise ops, and the tp
    constraints (tp.annotate, tp.reshard become collectives). An op without a
    model is left as it is when all its tensors are replicated, and is an
    error naming it otherwise; a new op needs a model, not a new case in the
    partitioner.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/[{
        Makes the op compute on its shard; emits an error and fails when it
        cannot.
      }],
      /*retTy=*/"::llvm::LogicalResult",
      /*methodName=*/"partition",
      /*args=*/(ins "::mlir::tp::PartitionContext &":$context)
    >
  ];
}

#endif // TP_DIALECT_TP_IR_TPINTERFACES_TD
