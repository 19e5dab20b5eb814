//===- TPOps.td - tp dialect operations --------------------*- tablegen -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_IR_TPOPS_TD
#define TP_DIALECT_TP_IR_TPOPS_TD

include "tp/Dialect/TP/IR/TPDialect.td"
include "tp/Dialect/TP/IR/TPAttrs.td"
include "tp/Dialect/TP/IR/CollectiveOpInterface.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// tp.mesh
//===----------------------------------------------------------------------===//

def TP_MeshOp : TP_Op<"mesh", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "A named mesh of devices";
  let description = [{
    Declares a logical mesh of devices: a list of named axes, each with a
    size. The mesh has as many devices as the product of its axis sizes,
    numbered row-major over the axes (the last axis varies fastest).

    ```mlir
    tp.mesh @world ["tp" = 4]
    tp.mesh @grid ["dp" = 2, "tp" = 4]   // devices 0..3 have dp = 0
    ```

    **Constraints:**
    - it sits directly in a `builtin.module`, and its symbol is unique there;
    - it has at least one axis;
    - axis names are not empty and are unique;
    - every axis size is positive;
    - there are as many axis names as axis sizes (generic form).
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    StrArrayAttr:$axis_names,
    DenseI64ArrayAttr:$axis_sizes
  );
  let assemblyFormat = [{
    $sym_name custom<MeshAxes>($axis_names, $axis_sizes) attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Number of axes.
    unsigned getRank() { return getAxisSizes().size(); }
    /// Number of devices: the product of the axis sizes.
    int64_t getNumDevices();
    /// Position of axis `name`, or std::nullopt when the mesh has no such axis.
    std::optional<unsigned> getAxisIndex(::llvm::StringRef name);
    /// Size of axis `name`; the axis must exist.
    int64_t getAxisSize(::llvm::StringRef name);
    /// Number of devices in a group spanned by `axes` (product of their sizes).
    int64_t getGroupSize(::llvm::ArrayRef<::llvm::StringRef> axes);
    int64_t getGroupSize(::mlir::ArrayAttr axes);
  }];
}

//===----------------------------------------------------------------------===//
// Global form: sharding constraints
//===----------------------------------------------------------------------===//

class TP_ShardingOp<string mnemonic, list<Trait> traits = []>
    : TP_Op<mnemonic, traits # [Pure, AllTypesMatch<["input", "result"]>,
        DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let arguments = (ins AnyRankedTensor:$input, TP_ShardingAttr:$sharding);
  let results = (outs AnyRankedTensor:$result);
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::tp::ShardingAttr":$sharding), [{
      build($_builder, $_state, input.getType(), input, sharding);
    }]>
  ];
  let assemblyFormat = [{
    $input $sharding attr-dict `:` type($input)
  }];
}

def TP_AnnotateOp : TP_ShardingOp<"annotate"> {
  let summary = "Constrains the sharding of an intermediate value";
  let description = [{
    Returns its operand unchanged and fixes its sharding: propagation never
    changes it and reshards around it where its neighbours disagree. It is
    the intermediate-value counterpart of the `tp.sharding` attribute on
    function arguments and results.

    ```mlir
    %h2 = tp.annotate %h <@world, [{}, {"tp"} ]> : tensor<16x2048xf32>
    ```

    The sharding is written without its `#tp.sharding` prefix: MLIR reads
    `%h #tp...` as a result number of `%h` (`%h#0`), so the prefixed form
    cannot follow an operand.

    **Constraints:**
    - operand and result (or `into`) have the same shape and element type;
    - the sharding's mesh is a `tp.mesh`, its axes are axes of that mesh, it
      has one entry per dimension, and each static dimension is divisible by
      the total size of the axes splitting it.
  }];
}

def TP_ReshardOp : TP_ShardingOp<"reshard"> {
  let summary = "Explicitly changes the sharding of a value";
  let description = [{
    Returns its operand with the given sharding. Propagation inserts it where
    two constraints meet; partitioning turns it into the collectives that
    move the data (an all-gather, an all-to-all, a free local slice, or the
    reduction of a pending sum).

    ```mlir
    %y = tp.reshard %x <@world, [{"tp"}, {} ]> : tensor<16x512xf32>
    ```

    **Constraints:**
    - operand and result (or `into`) have the same shape and element type;
    - the sharding's mesh is a `tp.mesh`, its axes are axes of that mesh, it
      has one entry per dimension, and each static dimension is divisible by
      the total size of the axes splitting it.
  }];
}

//===----------------------------------------------------------------------===//
// Local form: collectives
//===----------------------------------------------------------------------===//

class TP_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : TP_Op<mnemonic, traits # [Pure,
        DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let extraClassDeclaration = [{
    /// Size of the device group the collective runs over.
    int64_t getGroupSize(::mlir::tp::MeshOp mesh);
  }];
  let extraClassDefinition = [{
    int64_t $cppClass::getGroupSize(::mlir::tp::MeshOp mesh) {
      return mesh.getGroupSize(getAxes());
    }
  }];
  let hasVerifier = 1;
}

def TP_TensorOrMemRef : AnyTypeOf<[AnyRankedTensor, AnyMemRef],
                                  "ranked tensor or memref">;

/// The collectives that move data have two forms: on tensors they produce a
/// result (what partitioning emits); on memrefs (what one-shot bufferization
/// makes of them) they write an `into` buffer and have no result.
defvar TP_BufferFormDoc = [{

    **Buffer form.** One-shot bufferization turns the op into its form on
    memrefs: the operand is a buffer, the op writes a freshly allocated
    `into` buffer of the result's shape and has no result, and its memory
    effects are a read of the operand and a write of `into`:

    ```mlir
    tp.all_gather %xb over @world ["tp"] dim 1 into %ob
        : memref<16x128xf32> -> memref<16x512xf32>
    ```

    In either form the constraints above hold between the operand and the
    output (the result, or `into`); the operand is a tensor exactly when
    there is a result, and a memref exactly when there is an `into` buffer.
}];

class TP_DataCollectiveOp<string mnemonic, list<Trait> traits = []>
    : TP_Op<mnemonic, traits # [
        DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
        DeclareOpInterfaceMethods<SymbolUserOpInterface>,
        TP_CollectiveOpInterface]> {
  let extraClassDeclaration = [{
    /// Size of the device group the collective runs over.
    int64_t getGroupSize(::mlir::tp::MeshOp mesh);
    /// CollectiveOpInterface (defined with each op in TPOps.cpp).
    ::mlir::tp::CollectiveKind getCollectiveKind();
    std::optional<::mlir::tp::ReductionKind> getReduction();
    ::llvm::SmallVector<int64_t> getCollectiveDims();
    /// True for the form on memrefs (written into `output`).
    bool hasBufferSemantics() { return static_cast<bool>(getOutput()); }
    ::mlir::ShapedType getInputType() {
      return ::llvm::cast<::mlir::ShapedType>(getInput().getType());
    }
    /// The type of what the collective produces: its result, or `into`.
    ::mlir::ShapedType getOutputType() {
      ::mlir::Value produced = hasBufferSemantics()
                                   ? ::mlir::Value(getOutput())
                                   : ::mlir::Value(getResult());
      return ::llvm::cast<::mlir::ShapedType>(produced.getType());
    }
  }];
  let extraClassDefinition = [{
    int64_t $cppClass::getGroupSize(::mlir::tp::MeshOp mesh) {
      return mesh.getGroupSize(getAxes());
    }
    void $cppClass::getEffects(
        ::llvm::SmallVectorImpl<::mlir::SideEffects::EffectInstance<
            ::mlir::MemoryEffects::Effect>> &effects) {
      ::mlir::tp::getCollectiveEffects(getOperation(), effects);
    }
  }];
  let hasVerifier = 1;
}

def TP_AllReduceOp : TP_DataCollectiveOp<"all_reduce"> {
  let summary = "Reduces a value over a group of devices, result everywhere";
  let description = [{
    Every device of each group spanned by `axes` contributes its `input`;
    every device receives the elementwise reduction (`sum`, `max` or `min`)
    of the group's inputs. Groups are the sets of devices that differ only in
    their coordinates along `axes`.

    ```mlir
    %a = tp.all_reduce sum %x over @world ["tp"] : tensor<16x512xf32>
    ```

    **Constraints:**
    - operand and result (or `into`) have the same shape and element type;
    - `axes` is not empty and names no axis twice;
    - the mesh is a `tp.mesh` and every axis is one of its axes.
  }] # TP_BufferFormDoc;
  let arguments = (ins TP_ReductionKindAttr:$kind, TP_TensorOrMemRef:$input,
                       FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes,
                       Optional<AnyMemRef>:$output);
  let results = (outs Optional<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    custom<ReductionKind>($kind) $input `over` $mesh $axes (`into` $output^)?
    attr-dict `:` custom<SameTypes>(type($input), type($output),
                                          type($result), ref($output))
  }];
  let builders = [
    OpBuilder<(ins "::mlir::tp::ReductionKind":$kind, "::mlir::Value":$input,
                   "::llvm::StringRef":$mesh,
                   "::llvm::ArrayRef<::llvm::StringRef>":$axes), [{
      build($_builder, $_state, input.getType(),
            ::mlir::tp::ReductionKindAttr::get($_builder.getContext(), kind),
            input, ::mlir::FlatSymbolRefAttr::get($_builder.getContext(), mesh),
            $_builder.getStrArrayAttr(axes), /*output=*/::mlir::Value());
    }]>
  ];
}

def TP_AllGatherOp : TP_DataCollectiveOp<"all_gather"> {
  let summary = "Concatenates the shards of a group along one dimension";
  let description = [{
    Every device of each group spanned by `axes` contributes its `input`;
    every device receives the concatenation of the group's inputs along
    dimension `dim`, in the order of the devices' linear index over `axes`
    (major to minor). Dimension `dim` grows by the group size; the others
    are unchanged.

    ```mlir
    %b = tp.all_gather %x over @world ["tp"] dim 1
        : tensor<16x128xf32> -> tensor<16x512xf32>
    ```

    **Constraints:**
    - `axes` is not empty and names no axis twice;
    - the mesh is a `tp.mesh` and every axis is one of its axes;
    - `dim` is a dimension of the operand;
    - operand and result have the same rank and element type, equal sizes
      in every dimension but `dim`, and result size = operand size × group
      size in `dim` (both dynamic, or both static).
  }] # TP_BufferFormDoc;
  let arguments = (ins TP_TensorOrMemRef:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim,
                       Optional<AnyMemRef>:$output);
  let results = (outs Optional<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    $input `over` $mesh $axes `dim` $dim (`into` $output^)? attr-dict `:`
    custom<ResizedTypes>(type($input), type($output), type($result),
                            ref($output))
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::tp::MeshOp":$mesh,
                   "::llvm::ArrayRef<::llvm::StringRef>":$axes, "int64_t":$dim)>
  ];
}

def TP_ReduceScatterOp : TP_DataCollectiveOp<"reduce_scatter"> {
  let summary = "Reduces over a group and leaves each device one block";
  let description = [{
    The reduction of the group's inputs (as `tp.all_reduce`), split along
    dimension `dim` into group-size blocks; the device with linear index `i`
    over `axes` keeps block `i`. Dimension `dim` shrinks by the group size.

    ```mlir
    %c = tp.reduce_scatter sum %x over @world ["tp"] dim 0
        : tensor<16x512xf32> -> tensor<4x512xf32>
    ```

    **Constraints:**
    - `axes` is not empty and names no axis twice;
    - the mesh is a `tp.mesh` and every axis is one of its axes;
    - `dim` is a dimension of the operand;
    - operand and result have the same rank and element type, equal sizes
      in every dimension but `dim`; in `dim` the operand size is divisible by
      the group size and the result size is the quotient (both dynamic, or
      both static).
  }] # TP_BufferFormDoc;
  let arguments = (ins TP_ReductionKindAttr:$kind, TP_TensorOrMemRef:$input,
                       FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes, I64Attr:$dim,
                       Optional<AnyMemRef>:$output);
  let results = (outs Optional<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    custom<ReductionKind>($kind) $input `over` $mesh $axes `dim` $dim
    (`into` $output^)? attr-dict `:`
    custom<ResizedTypes>(type($input), type($output), type($result),
                            ref($output))
  }];
  let builders = [
    OpBuilder<(ins "::mlir::tp::ReductionKind":$kind, "::mlir::Value":$input,
                   "::mlir::tp::MeshOp":$mesh,
                   "::llvm::ArrayRef<::llvm::StringRef>":$axes, "int64_t":$dim)>
  ];
}

def TP_AllToAllOp : TP_DataCollectiveOp<"all_to_all"> {
  let summary = "Moves a group's split from one dimension to another";
  let description = [{
    Each device splits its `input` along `split` into group-size blocks and
    sends block `j` to the device with linear index `j` over `axes`; each
    device concatenates what it receives along `concat`, in source order.
    Dimension `split` shrinks by the group size, `concat` grows by it: a
    tensor split on `concat` becomes split on `split`.

    ```mlir
    %d = tp.all_to_all %x over @world ["tp"] split 1 concat 0
        : tensor<4x512xf32> -> tensor<16x128xf32>
    ```

    **Constraints:**
    - `axes` is not empty and names no axis twice;
    - the mesh is a `tp.mesh` and every axis is one of its axes;
    - `split` and `concat` are distinct dimensions of the operand;
    - operand and result have the same rank and element type and equal sizes
      outside `split` and `concat`; the operand's `split` size is divisible by
      the group size and the result's is the quotient; the result's `concat`
      size is the operand's times the group size (both dynamic, or both
      static).
  }] # TP_BufferFormDoc;
  let arguments = (ins TP_TensorOrMemRef:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$split_dim,
                       I64Attr:$concat_dim, Optional<AnyMemRef>:$output);
  let results = (outs Optional<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    $input `over` $mesh $axes `split` $split_dim `concat` $concat_dim
    (`into` $output^)? attr-dict `:`
    custom<ResizedTypes>(type($input), type($output), type($result),
                            ref($output))
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::tp::MeshOp":$mesh,
                   "::llvm::ArrayRef<::llvm::StringRef>":$axes,
                   "int64_t":$split_dim, "int64_t":$concat_dim)>
  ];
}

def TP_AllSliceOp : TP_DataCollectiveOp<"all_slice"> {
  let summary = "Keeps this device's block of a replicated value (no communication)";
  let description = [{
    The inverse of `tp.all_gather` on a value replicated over the group: the
    device with linear index `i` over `axes` keeps block `i` of `input` split
    along `dim` into group-size blocks. No data moves between devices.

    ```mlir
    %e = tp.all_slice %x over @world ["tp"] dim 1
        : tensor<16x512xf32> -> tensor<16x128xf32>
    ```

    **Constraints:**
    - `axes` is not empty and names no axis twice;
    - the mesh is a `tp.mesh` and every axis is one of its axes;
    - `dim` is a dimension of the operand;
    - operand and result have the same rank and element type, equal sizes
      in every dimension but `dim`; in `dim` the operand size is divisible by
      the group size and the result size is the quotient (both dynamic, or
      both static).
  }] # TP_BufferFormDoc;
  let arguments = (ins TP_TensorOrMemRef:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim,
                       Optional<AnyMemRef>:$output);
  let results = (outs Optional<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    $input `over` $mesh $axes `dim` $dim (`into` $output^)? attr-dict `:`
    custom<ResizedTypes>(type($input), type($output), type($result),
                            ref($output))
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::tp::MeshOp":$mesh,
                   "::llvm::ArrayRef<::llvm::StringRef>":$axes, "int64_t":$dim)>
  ];
}

def TP_AxisIndexOp : TP_CollectiveOp<"axis_index"> {
  let summary = "This device's linear index over some mesh axes";
  let description = [{
    The device's coordinate along `axes`, linearized major to minor: over
    `["dp", "tp"]` on a `["dp" = 2, "tp" = 4]` mesh it is `dp * 4 + tp`. It
    is the block index that `tp.all_slice` and `tp.reduce_scatter` keep.

    ```mlir
    %i = tp.axis_index @world ["tp"] : index
    ```

    **Constraints:**
    - `axes` is not empty and names no axis twice;
    - the mesh is a `tp.mesh` and every axis is one of its axes.
  }];
  let arguments = (ins FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes);
  let results = (outs Index:$result);
  let assemblyFormat = "$mesh $axes attr-dict `:` type($result)";
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$mesh,
                   "::llvm::ArrayRef<::llvm::StringRef>":$axes), [{
      build($_builder, $_state, $_builder.getIndexType(),
            ::mlir::FlatSymbolRefAttr::get($_builder.getContext(), mesh),
            $_builder.getStrArrayAttr(axes));
    }]>
  ];
}

#endif // TP_DIALECT_TP_IR_TPOPS_TD
