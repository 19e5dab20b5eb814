//===- CollectiveOpInterface.td - What every collective says -*- tablegen -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_IR_COLLECTIVEOPINTERFACE_TD
#define TP_DIALECT_TP_IR_COLLECTIVEOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def TP_CollectiveOpInterface : OpInterface<"CollectiveOpInterface"> {
  let cppNamespace = "::mlir::tp";
  let description = [{
    What a data collective (`tp.all_reduce`, `tp.all_gather`,
    `tp.reduce_scatter`, `tp.all_to_all`, `tp.all_slice`) tells the passes
    that handle every collective alike: its kind (which names it in reports,
    picks its cost formula and its runtime entry point), its group (mesh and
    axes), its reduction, the dimensions it moves, its bytes per device, and
    what each member of the group holds afterwards (the uniformity analysis).

    The report (`--tp-report`), the uniformity analysis, the cost model and
    the runtime conversion (`--tp-convert-collectives-to-runtime`) read
    collectives only through it. A new collective implements the three
    required methods, adds its case to `CollectiveKind` (TPAttrs.td) and the
    per-kind facts in Collectives.cpp, and its entry point to
    `tprt_rt_calls.def`.
  }];
  let methods = [
    InterfaceMethod<"The kind: its name, cost formula and runtime entry.",
      "::mlir::tp::CollectiveKind", "getCollectiveKind">,
    InterfaceMethod<"How the group's values combine; none for a collective "
                    "that only moves data.",
      "std::optional<::mlir::tp::ReductionKind>", "getReduction">,
    InterfaceMethod<[{
        The dimensions the collective gathers, scatters or slices, in the
        order the runtime call takes them after the shape (`all_to_all`:
        split, then concat). Empty for a collective that is elementwise over
        the whole tensor (`all_reduce`: the runtime takes an element count).
      }],
      "::llvm::SmallVector<int64_t>", "getCollectiveDims">,
    InterfaceMethod<"The mesh the group is taken over.",
      "::mlir::FlatSymbolRefAttr", "getMeshAttr">,
    InterfaceMethod<"The mesh axes that span each group.",
      "::mlir::ArrayAttr", "getAxes">,
    InterfaceMethod<"The operand: a tensor, or a buffer in buffer form.",
      "::mlir::Value", "getInput">,
    InterfaceMethod<"The `into` buffer in buffer form; null on tensors.",
      "::mlir::Value", "getOutput">,
    InterfaceMethod<"The operand's type.", "::mlir::ShapedType",
      "getInputType">,
    InterfaceMethod<"The type of what it produces: its result, or `into`.",
      "::mlir::ShapedType", "getOutputType">,
    InterfaceMethod<"True for the form on memrefs (written into a buffer).",
      "bool", "hasBufferSemantics">,
    InterfaceMethod<"The group's axes by name.",
      "::llvm::SmallVector<::llvm::StringRef>", "getGroupAxes", (ins), [{}],
      [{ return ::mlir::tp::getAxisNames($_op.getAxes()); }]>,
    InterfaceMethod<[{
        The tensor S of the cost formula (CostModel.h), in bytes per device,
        over a group of `groupSize` devices.
      }],
      "double", "getFormulaTensorBytes", (ins "int64_t":$groupSize), [{}],
      [{
        return ::mlir::tp::collectiveFormulaTensorBytes(
            $_op.getCollectiveKind(), groupSize,
            ::mlir::tp::shapedTypeBytes($_op.getInputType()),
            ::mlir::tp::shapedTypeBytes($_op.getOutputType()));
      }]>,
    InterfaceMethod<"Bytes each device sends, by the ring formula.",
      "double", "getBytesPerDevice", (ins "int64_t":$groupSize), [{}],
      [{
        return ::mlir::tp::collectiveBytes(
            $_op.getCollectiveKind(), groupSize,
            $_op.getFormulaTensorBytes(groupSize));
      }]>,
    InterfaceMethod<[{
        The runtime entry point a compiled program calls
        (`tprt_rt_<kind>`, declared by `tprt_rt_calls.def`).
      }],
      "std::string", "getRuntimeEntry", (ins), [{}],
      [{
        return ("tprt_rt_" +
                ::mlir::tp::stringifyCollectiveKind($_op.getCollectiveKind()))
            .str();
      }]>,
    InterfaceMethod<[{
        Local semantics: true when every member of a group receives the same
        tensor (`all_reduce`, `all_gather`), false when each keeps its own
        block (`reduce_scatter`, `all_to_all`, `all_slice`).
      }],
      "bool", "isResultUniformOverGroup", (ins), [{}],
      [{
        return ::mlir::tp::collectiveResultIsUniform($_op.getCollectiveKind());
      }]>
  ];
}

#endif // TP_DIALECT_TP_IR_COLLECTIVEOPINTERFACE_TD
