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

#endif // TP_DIALECT_TP_IR_TPINTERFACES_TD
