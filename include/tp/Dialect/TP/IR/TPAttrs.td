//===- TPAttrs.td - tp dialect attributes ------------------*- tablegen -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_IR_TPATTRS_TD
#define TP_DIALECT_TP_IR_TPATTRS_TD

include "tp/Dialect/TP/IR/TPDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

class TP_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<TP_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// ReductionKind
//===----------------------------------------------------------------------===//

def TP_ReductionKind : I32EnumAttr<"ReductionKind",
    "how a collective combines the values of a device group", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Max", 1, "max">,
      I32EnumAttrCase<"Min", 2, "min">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tp";
}

//===----------------------------------------------------------------------===//
// CollectiveKind
//===----------------------------------------------------------------------===//

def TP_CollectiveKind : I32EnumAttr<"CollectiveKind",
    "the kinds of data collective (CollectiveOpInterface, Collectives.h)", [
      I32EnumAttrCase<"AllReduce", 0, "all_reduce">,
      I32EnumAttrCase<"AllGather", 1, "all_gather">,
      I32EnumAttrCase<"ReduceScatter", 2, "reduce_scatter">,
      I32EnumAttrCase<"AllToAll", 3, "all_to_all">,
      I32EnumAttrCase<"AllSlice", 4, "all_slice">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tp";
}

def TP_ReductionKindAttr : EnumAttr<TP_Dialect, TP_ReductionKind, "reduction"> {
  let summary = "Reduction applied by `tp.all_reduce` and `tp.reduce_scatter`";
  let description = [{
    One of `sum`, `max`, `min`. Inside a collective's assembly the keyword
    appears bare (`tp.all_reduce sum ...`); standing alone it is written
    `#tp.reduction<sum>`.

    **Constraints:**
    - the value is one of `sum`, `max`, `min`.
  }];
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// ShardingAttr
//===----------------------------------------------------------------------===//

def TP_ShardingAttr : TP_Attr<"Sharding", "sharding"> {
  let summary = "How a tensor is split over the axes of a device mesh";
  let description = [{
    `#tp.sharding<@mesh, [dims...]>` names a `tp.mesh` and lists, for every
    dimension of the tensor it describes, the mesh axes that split that
    dimension, major to minor: `{}` leaves the dimension whole, `{"tp"}` splits
    it in as many contiguous blocks as axis `tp` has devices, and
    `{"dp", "tp"}` splits it over both axes, `dp` major. Mesh axes that split
    no dimension replicate the tensor over their devices.

    An optional `partial = [axes...]` marks a pending sum: the value on each
    device is one term of a sum over the listed axes that has not been
    reduced yet (a row-parallel matmul's result, before its all-reduce).

    ```mlir
    // Column-split weight on a 1-D mesh.
    #tp.sharding<@world, [{}, {"tp"} ]>
    // Fully replicated.
    #tp.sharding<@world, [{}, {} ]>
    // Replicated shape, pending sum over "tp".
    #tp.sharding<@world, [{}, {} ], partial = ["tp"]>
    // Batch split over "dp", features over "tp", on a 2-D mesh.
    #tp.sharding<@grid, [{"dp"}, {"tp"} ]>
    ```

    The attribute alone does not know its mesh or the tensor (or bufferized
    memref) it describes;
    where it is attached (function arguments and results, `tp.annotate`,
    `tp.reshard`, `tp.shardings`) it is also checked against both.

    **Constraints:**
    - an axis name is not empty;
    - no axis appears twice, within one dimension or across dimensions;
    - no axis is both partial and splitting a dimension;
    - where attached: the mesh is a `tp.mesh` symbol, every axis is an axis
      of that mesh, the value is a ranked tensor or memref, the number of
      dimensions equals its rank, and each static dimension is divisible by
      the product of the sizes of the axes that split it (not checked in
      local form, where types are already per-device).
  }];
  let parameters = (ins
    "::mlir::FlatSymbolRefAttr":$mesh,
    ArrayRefParameter<"::mlir::ArrayAttr", "axes splitting each dimension">:$dims,
    "::mlir::ArrayAttr":$partial
  );
  let builders = [
    AttrBuilder<(ins "::mlir::FlatSymbolRefAttr":$mesh,
                     "::llvm::ArrayRef<::llvm::SmallVector<::llvm::StringRef>>":$dims,
                     CArg<"::llvm::ArrayRef<::llvm::StringRef>", "{}">:$partial)>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Number of tensor dimensions described.
    unsigned getRank() const { return getDims().size(); }
    /// The mesh axes splitting dimension `dim`, major to minor.
    ::llvm::SmallVector<::llvm::StringRef> getDimAxes(unsigned dim) const;
    /// The axes of the pending sum.
    ::llvm::SmallVector<::llvm::StringRef> getPartialAxes() const;
    /// True when some axis of the pending sum is set.
    bool isPartial() const { return !getPartial().empty(); }
    /// True when no dimension is split and nothing is pending.
    bool isFullyReplicated() const;
    /// Every axis used, by dimensions first (in order), then partial.
    ::llvm::SmallVector<::llvm::StringRef> getUsedAxes() const;
  }];
}

#endif // TP_DIALECT_TP_IR_TPATTRS_TD
