//===- TPDialect.td - The tp dialect -----------------------*- tablegen -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_IR_TPDIALECT_TD
#define TP_DIALECT_TP_IR_TPDIALECT_TD

include "mlir/IR/OpBase.td"

def TP_Dialect : Dialect {
  let name = "tp";
  let cppNamespace = "::mlir::tp";
  let summary = "Tensor-parallel sharding over a device mesh";
  let description = [{
    The `tp` dialect describes how the tensors of a program are split over a
    mesh of devices, and the collectives that a program split that way needs.

    A program passes through two forms:

    * **Global form** (what users write): tensors have their full, unsharded
      types. A module declares its meshes with `tp.mesh`; `#tp.sharding`
      attributes on function arguments and results and `tp.annotate` ops on
      intermediate values are constraints; `tp.reshard` is an explicit change
      of sharding. After propagation every op that yields a tensor carries
      `tp.shardings = [...]`, one sharding per result.
    * **Local (SPMD) form** (what partitioning produces): every tensor type is
      a per-device shard type, the function carries `tp.spmd = @mesh` and
      keeps the global shardings of its arguments and results, and data moves
      between devices only through the collectives `tp.all_reduce`,
      `tp.all_gather`, `tp.reduce_scatter`, `tp.all_to_all` and
      `tp.all_slice`; `tp.axis_index` gives a device its coordinate.

    ```mlir
    tp.mesh @world ["tp" = 4]

    func.func @mlp(%x: tensor<16x512xf32>,
                   %w1: tensor<512x2048xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"} ]>})
        -> (tensor<16x2048xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"} ]>}) {
      ...
    }
    ```

    The dialect's discardable attributes:

    * `tp.sharding` (a `#tp.sharding`): on function arguments and results
      only; the argument's or result's type must be a ranked tensor (or,
      after bufferization, a ranked memref) that the sharding fits. In a function marked `tp.spmd` the types are local, so
      only the mesh, the axes and the rank are checked.
    * `tp.shardings` (an array of `#tp.sharding`): on any op, one entry per
      result; a result that is not a tensor or memref takes a rank-0,
      non-partial sharding. On a destination-style op after bufferization
      (no results), one entry per buffer it writes (its `outs`).
    * `tp.spmd` (a flat symbol reference to a `tp.mesh`): on a function in
      local form.
    * `tp.origins` (an array of strings, one per result) on ops and
      `tp.origin` (a string) on function arguments and results: where a
      sharding came from, written by `--tp-propagate{record-origins}`.
    * `tp.name` (a string) on function arguments and results: the name the
      tensor has where it came from (a parameter's fully qualified name in
      the PyTorch module, `transformer.h.0.attn.c_attn.weight`); it is kept
      through the passes and recorded in the program manifest.
    * `tp.donate` (an integer) on a function argument: the argument is
      donated to that result (JAX's `donate_argnums`, XLA's input-output
      aliasing): the runtime gives the result the argument's buffer and the
      program writes the result there, in place, with no copy. The result
      must have the argument's type, and the same sharding where either has
      one; one argument per result. The lowering fails, naming both, where
      the result cannot be written in the argument's place (the argument is
      read after the result is written, or the result is not computed into
      a buffer it can take).
    * `tp.manifest` (a string) on a module: the program manifest that
      `--tp-record-manifest` writes while lowering to the CPU runtime.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Names of the dialect's discardable attributes.
    static constexpr ::llvm::StringLiteral kShardingAttrName = "tp.sharding";
    static constexpr ::llvm::StringLiteral kShardingsAttrName = "tp.shardings";
    static constexpr ::llvm::StringLiteral kSpmdAttrName = "tp.spmd";
    static constexpr ::llvm::StringLiteral kOriginsAttrName = "tp.origins";
    static constexpr ::llvm::StringLiteral kOriginAttrName = "tp.origin";
    static constexpr ::llvm::StringLiteral kNameAttrName = "tp.name";
    static constexpr ::llvm::StringLiteral kDonateAttrName = "tp.donate";
    static constexpr ::llvm::StringLiteral kManifestAttrName = "tp.manifest";
    static constexpr ::llvm::StringLiteral kPlanAttrName = "tp.plan";
    /// What a GPU kernel moves and computes (tp-map-linalg-to-gpu), for
    /// tp-report-kernels: {bytes, flops, ops} on a gpu.launch, and
    /// tensor_flops, the part of the flops on tensor cores (mma.sync).
    static constexpr ::llvm::StringLiteral kCostAttrName = "tp.cost";
    /// A unit attribute on each loop of an scf.for nest whose iterations
    /// are independent: each writes its own tile of the outputs, and a
    /// buffer allocated before the nest and freed after it, which only the
    /// nest uses, is each iteration's scratch, written before it is read
    /// (tp-fuse-reductions' row tiles; tp-outline-parallel-loops).
    static constexpr ::llvm::StringLiteral kParallelAttrName = "tp.parallel";
    /// A unit attribute on a function whose first two arguments are the
    /// range [lo, hi) of a parallel loop's iterations it runs: every call of
    /// it becomes tprt_rt_parallel_for (tp-lower-parallel-calls).
    static constexpr ::llvm::StringLiteral kParallelBodyAttrName =
        "tp.parallel_body";

  private:
    void registerAttributes();
  public:
  }];
}

class TP_Op<string mnemonic, list<Trait> traits = []>
    : Op<TP_Dialect, mnemonic, traits>;

#endif // TP_DIALECT_TP_IR_TPDIALECT_TD
