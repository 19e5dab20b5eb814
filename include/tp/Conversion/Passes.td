//===- Passes.td - Lowerings of the tp dialect -------------*- tablegen -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_CONVERSION_PASSES_TD
#define TP_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def RecordManifestPass : Pass<"tp-record-manifest", "::mlir::ModuleOp"> {
  let summary = "Records what the runtime needs to know of each function before lowering loses it";
  let description = [{
    For every public function with a body, records its mesh and, for each
    argument and result, the global shape, element type and sharding, as the
    module attribute `tp.manifest` (a string, the program manifest that
    `tp-compile` embeds and the runtime reads). Functions in local form
    (`tp.spmd = @mesh`) have per-device types; the global shapes come from
    their shardings. Functions without `tp.spmd` run unsharded on one device.

    Example: for

    ```mlir
    tp.mesh @world ["tp" = 4]
    func.func @f(%x: tensor<16x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"} ]>})
        -> (tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {} ]>})
        attributes {tp.spmd = @world}
    ```

    the manifest reads

    ```
    tprt-manifest 4
    abi 4
    target cpu
    func "f" 1 1
    mesh "world" 1 "tp" 4
    arg 0 f32 2 16 512 s=/0|
    result 0 f32 2 16 512 s=/|
    end
    ```

    An argument or result with a `tp.name` (a parameter's name in the
    module it was imported from) has it quoted at the end of its line:
    `arg 2 f32 2 64 256 s=/0| "h.0.mlp.c_fc.weight"`.

    Version 4 promises that the program never writes its inputs, and the
    runtime lets a rank read a contiguous shard (a whole tensor, or one split
    along its leading dimension) from the caller's memory instead of copying
    it: `tp-protect-inputs`, which the lowering pipelines run right before
    bufferization, keeps that promise. The one exception is an argument
    donated to a result (`tp.donate`): a line `donate <result> <arg>` after
    the results says so, the entry point then takes no buffer for that
    result (the program writes it in the argument's, `tp-drop-donated-results`),
    and the runtime gives the argument a buffer of its own.

    Names are quoted (`\"`, `\\` and `\xNN` escapes inside), so function,
    mesh and axis names may hold spaces; `abi` is the runtime ABI the code
    was compiled against, `target` the backend it runs on (`cpu`, or `cuda`
    for `--tp-lower-to-cuda`).

    As the first pass of the lowerings it also refuses, with a diagnostic,
    what they cannot lower: an element type or shape the runtime does not
    take, an attribute named like one of `llvm.func`'s own, and a
    `tensor.expand_shape` whose `output_shape` disagrees with its result
    type (MLIR 22's verifier accepts it; bufferization would not).

    A sharding `s=D0/D1/...|P` lists, per dimension, the indices of the mesh
    axes that split it (comma-separated, major to minor), then the partial
    axes. Element types other than f32, f64, f16, bf16, i32 and i64, and
    arguments that are not ranked tensors, are errors. The ops' shardings
    (`tp.shardings`, `tp.origin(s)`) and the names (`tp.name`) are then
    dropped: they live on in the manifest, and lowering would copy them onto
    ops they do not describe. The arguments' and results' `tp.sharding`
    stay until `tp-convert-collectives-to-runtime`: `tp-fold-addends-into-gemm`
    reads which inputs every device of a group shares.

    A function attribute whose name is one of llvm.func's own (`linkage`,
    `personality`, ...) is an error: the LLVM lowering would take it as
    that attribute, whatever its value.

    `matmul-precision` other than `highest` adds a line after `target`,
    `precision high` (TF32 inputs, PyTorch's `allow_tf32`, JAX's default on
    GPUs) or `precision medium` (bf16 inputs), which CUDA ranks follow in
    cuBLAS's compute type; CPU ranks compute IEEE f32 at every setting. A
    name other than the three is an error naming them.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "The backend the program is lowered for: cpu or cuda">,
    Option<"matmulPrecision", "matmul-precision", "std::string",
           /*default=*/"\"highest\"",
           "How the program's f32 GEMMs may compute: highest (IEEE f32), "
           "high (TF32 inputs), medium (bf16 inputs), f32 accumulation in "
           "each; recorded as the manifest's `precision` line when not "
           "highest">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def DonateBuffersPass : Pass<"tp-donate-buffers", "::mlir::ModuleOp"> {
  let summary = "A donated argument (tp.donate) is made writable, and the result's chain of destinations starts at it";
  let description = [{
    Part of the lowerings, before outlining and bufferization. For each
    argument donated to a result (`tp.donate = <result>`), the argument is
    marked `bufferization.writable = true`, and where the result is made by
    destination-style ops whose chain of destinations (`outs`, an insert's
    destination) starts at a `tensor.empty` of the argument's type, it starts
    at the argument instead: an empty tensor's contents are undefined, so no
    value changes. One-shot bufferization then writes the result in the
    argument's buffer where that keeps what the program computes, and gives
    it a buffer of its own where it does not (the argument is read after the
    result is written), which `tp-drop-donated-results` refuses.

    Example:

    ```mlir
    func.func @step(%w: tensor<8xf32> {tp.donate = 0 : i64}, %g: tensor<8xf32>) -> tensor<8xf32> {
      %e = tensor.empty() : tensor<8xf32>
      %new = linalg.sub ins(%w, %g : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
      return %new : tensor<8xf32>
    }
    ```

    becomes

    ```mlir
    func.func @step(%w: tensor<8xf32> {bufferization.writable = true, tp.donate = 0 : i64}, %g: tensor<8xf32>) -> tensor<8xf32> {
      %new = linalg.sub ins(%w, %g : tensor<8xf32>, tensor<8xf32>) outs(%w : tensor<8xf32>) -> tensor<8xf32>
      return %new : tensor<8xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def DropDonatedResultsPass
    : Pass<"tp-drop-donated-results", "::mlir::ModuleOp"> {
  let summary = "After bufferization, a result written in its donated argument's buffer leaves the signature";
  let description = [{
    Part of the lowerings, right after one-shot bufferization. A result whose
    argument was donated to it (`tp.donate`) must now be that argument's
    buffer (through casts at most): the program wrote it in place. The
    result leaves the function's signature and its returns, and the
    argument its `tp.donate`; the entry point then takes no buffer for the
    result, and the manifest's `donate` line (`tp-record-manifest`) tells
    the runtime that the result is the argument's buffer. A result that
    bufferization gave a buffer of its own (the argument is read after the
    result is written, or the result is made by an op that cannot write into
    it) is an error naming both.

    Example:

    ```mlir
    func.func @step(%w: memref<8xf32> {tp.donate = 0 : i64}, %g: memref<8xf32>) -> memref<8xf32> {
      linalg.sub ins(%w, %g : memref<8xf32>, memref<8xf32>) outs(%w : memref<8xf32>)
      return %w : memref<8xf32>
    }
    ```

    becomes

    ```mlir
    func.func @step(%w: memref<8xf32>, %g: memref<8xf32>) {
      linalg.sub ins(%w, %g : memref<8xf32>, memref<8xf32>) outs(%w : memref<8xf32>)
      return
    }
    ```
  }];
}

def PlanArenaPass : Pass<"tp-plan-arena", "::mlir::ModuleOp"> {
  let summary = "Lays out an entry point's intermediate buffers as offsets in one arena, by liveness";
  let description = [{
    Part of the lowerings, after `tp-convert-gemm-to-blas` (whose matcher
    folds ops into a GEMM whose output is a fresh allocation) and, on CUDA,
    `tp-upload-constants`. In each public function of the manifest, the
    buffers it allocates and frees in its body (statically shaped, identity
    layout, whole-byte elements, freed once and not returned) get offsets in
    one arena: a buffer is live from its `memref.alloc` to its
    `memref.dealloc`, and buffers share bytes only when their lives do not
    overlap (first fit, largest first, 64-byte aligned). The arena becomes
    the function's last argument (`memref<Nxi8>`), each buffer a
    `memref.view` of it, its free goes, and the manifest gets an
    `arena <bytes>` line: the runtime allocates the arena once per session
    and rank and passes it as the entry point's last buffer, so a run
    allocates none of these buffers. Buffers made inside loops or in the
    functions a driver calls keep their own allocations.

    Example:

    ```mlir
    func.func @f(%x: memref<8xf32>, %out: memref<8xf32>) {
      %a = memref.alloc() : memref<8xf32>
      ...
      memref.dealloc %a : memref<8xf32>
      %b = memref.alloc() : memref<16xf32>
      ...
      memref.dealloc %b : memref<16xf32>
      return
    }
    ```

    becomes

    ```mlir
    func.func @f(%x: memref<8xf32>, %out: memref<8xf32>, %arena: memref<64xi8>) {
      %c0 = arith.constant 0 : index
      %a = memref.view %arena[%c0][] : memref<64xi8> to memref<8xf32>
      ...
      %c0_0 = arith.constant 0 : index
      %b = memref.view %arena[%c0_0][] : memref<64xi8> to memref<16xf32>
      ...
      return
    }
    ```

    with `arena 64` in `f`'s manifest entry (both buffers at offset 0: their
    lives do not overlap).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def ProtectInputsPass : Pass<"tp-protect-inputs", "::mlir::ModuleOp"> {
  let summary = "Marks the inputs a program might write not writable, so that bufferization copies them first";
  let description = [{
    The manifest (version 4) promises that a program never writes its
    inputs: the runtime lets ranks read their shards in the caller's memory.
    One-shot bufferization keeps the promise for an argument marked
    `bufferization.writable = false` by copying it before writing into it.
    This pass, run right before bufferization by the lowering pipelines,
    marks each tensor argument of a public function that something may
    write into, and only those: bufferization removes each mark again by
    rebuilding the function's array of argument attributes, which is
    quadratic in the marks where a driver takes thousands of weights, and a
    weight its layer only reads needs none.

    An argument may be written unless every use of it reads it: an input of
    a destination-style op (`ins` of a linalg op), `tensor.extract`,
    `tensor.dim`, a view (`tensor.extract_slice`, `tensor.expand_shape`,
    `tensor.collapse_shape`, `tensor.cast`) whose own uses all read, and an
    operand of a call to a private function whose matching argument is only
    read, recursively. Anything else (an init, `outs`, of a linalg op, a
    collective, a return, a loop's iteration argument) counts as a possible
    write. An argument that already has a `bufferization.writable` keeps it.

    Example:

    ```mlir
    func.func @f(%w: tensor<8x8xf32>, %r: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
      %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%r : tensor<4x8xf32>) -> tensor<4x8xf32>
      return %y : tensor<4x8xf32>
    }
    ```

    becomes

    ```mlir
    func.func @f(%w: tensor<8x8xf32>, %r: tensor<4x8xf32> {bufferization.writable = false}, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    ```

    where bufferization then accumulates into a copy of `%r`.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def FreeBuffersEarlyPass : Pass<"tp-free-buffers-early", "::mlir::ModuleOp"> {
  let summary = "Frees each buffer right after its last use instead of at the end of its block";
  let description = [{
    MLIR's ownership-based deallocation frees the buffers a block allocates
    at the end of the block. In straight-line code that is the end of the
    function: a driver calling N layers holds every layer's output until the
    last layer returns (memory linear in the depth), and a layer holds each
    of its intermediates (attention scores, the MLP's hidden activations)
    until it returns. This pass moves each `memref.dealloc` of a buffer
    allocated in the same block up to just after the last op of the block
    that uses the buffer or a view of it, so the allocator hands that memory,
    still in cache, to the next buffer.

    A dealloc moves only when every use of the buffer and of its views is
    known not to keep it: an op whose memory effects are reads and writes of
    its operands (linalg ops, copies, loads and stores, the collectives'
    buffer forms) and that yields no memref, a call (a callee cannot keep a
    memref past its return), a view (its own uses followed), or the dealloc
    itself. Anything else (a terminator: a return, a yield out of a region,
    a branch; a loop carrying the buffer; a pointer taken as an integer)
    leaves the dealloc where it is. Runs on buffers
    after deallocation, before the collectives become runtime calls; the CPU
    lowering runs it (not its `reference` variant, nor the CUDA lowering,
    whose stream-ordered frees it has not been checked against).

    Example:

    ```mlir
    %a = memref.alloc() : memref<16x64xf32>
    call @layer(%x, %w0, %a) : (memref<16x64xf32>, memref<64x64xf32>, memref<16x64xf32>) -> ()
    %b = memref.alloc() : memref<16x64xf32>
    call @layer(%a, %w1, %b) : (memref<16x64xf32>, memref<64x64xf32>, memref<16x64xf32>) -> ()
    memref.copy %b, %out : memref<16x64xf32> to memref<16x64xf32>
    memref.dealloc %a : memref<16x64xf32>
    memref.dealloc %b : memref<16x64xf32>
    ```

    becomes

    ```mlir
    %a = memref.alloc() : memref<16x64xf32>
    call @layer(%x, %w0, %a) : (memref<16x64xf32>, memref<64x64xf32>, memref<16x64xf32>) -> ()
    %b = memref.alloc() : memref<16x64xf32>
    call @layer(%a, %w1, %b) : (memref<16x64xf32>, memref<64x64xf32>, memref<16x64xf32>) -> ()
    memref.dealloc %a : memref<16x64xf32>
    memref.copy %b, %out : memref<16x64xf32> to memref<16x64xf32>
    memref.dealloc %b : memref<16x64xf32>
    ```
  }];
}

def CopyRepeatedResultsPass
    : Pass<"tp-copy-repeated-results", "::mlir::ModuleOp"> {
  let summary = "A tensor or buffer returned more than once is copied for each repeat, so that every result is its own buffer";
  let description = [{
    Results become out-parameters, one buffer each. A function that returns
    the same tensor twice would need one buffer to be two out-parameters,
    and MLIR 22's `buffer-results-to-out-params` with hoisted allocations
    (as `--tp-lower-to-cpu` runs it) crashes on it. This pass gives each
    repeat its own copy (`linalg.copy` into a `tensor.empty`; on memrefs a
    `memref.alloc` and `memref.copy`). Distinct tensors can bufferize to
    one buffer (a returned `tensor.empty` that an op also writes into in
    place), so `--tp-lower-to-cpu` and `--tp-lower-to-cuda` run it twice:
    on tensors before bufferization and on memrefs after it.

    Example:

    ```mlir
    return %y, %y : tensor<4xf32>, tensor<4xf32>
    ```

    becomes

    ```mlir
    %e = tensor.empty() : tensor<4xf32>
    %c = linalg.copy ins(%y : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    return %y, %c : tensor<4xf32>, tensor<4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::memref::MemRefDialect", "::mlir::tensor::TensorDialect"];
}

def ReturnBuffersUnreshapedPass
    : Pass<"tp-return-buffers-unreshaped", "::mlir::ModuleOp"> {
  let summary = "A returned reshape of a fresh buffer becomes a fresh buffer of the result's shape, so that no copy into the out-parameter is left";
  let description = [{
    Runs on memrefs, after bufferization and before
    `buffer-results-to-out-params`, which hands a returned `memref.alloc` the
    caller's out-parameter but copies anything else into it. A model whose
    result is a reshape of what it computes (`[batch, seq, d]` returned as
    `[batch * seq, d]`: a GPT block's output, a model's logits) returned a
    `memref.collapse_shape` of a buffer, and each run copied the whole result
    once more. Here the buffer is allocated at the result's shape instead and
    the computation writes it through the inverse reshape, which for buffers
    with identity layouts is a view of the same memory. Only static,
    identity-layout allocations in the function's entry block, returned by
    a single-block function through one `memref.collapse_shape` or
    `memref.expand_shape` and by no other result, are rewritten.

    Example:

    ```mlir
    %a = memref.alloc() : memref<4x128x768xf32>
    linalg.fill ins(%zero : f32) outs(%a : memref<4x128x768xf32>)
    %r = memref.collapse_shape %a [[0, 1], [2]] : memref<4x128x768xf32> into memref<512x768xf32>
    return %r : memref<512x768xf32>
    ```

    becomes

    ```mlir
    %r = memref.alloc() : memref<512x768xf32>
    %a = memref.expand_shape %r [[0, 1], [2]] output_shape [4, 128, 768] : memref<512x768xf32> into memref<4x128x768xf32>
    linalg.fill ins(%zero : f32) outs(%a : memref<4x128x768xf32>)
    return %r : memref<512x768xf32>
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def DecomposeAggregatesPass
    : Pass<"tp-decompose-aggregates", "::mlir::ModuleOp"> {
  let summary = "Decomposes aggregate linalg ops (linalg.softmax) into the structured ops that lower to loops";
  let description = [{
    `linalg.softmax` and other ops with `AggregatedOpInterface` do not lower
    to loops themselves; this pass replaces each with its decomposition (for
    softmax: a max reduction, a subtract-and-exp, a sum reduction and a
    division, all `linalg.generic`). Part of `--tp-lower-to-cpu`, before
    bufferization.

    Example:

    ```mlir
    %p = linalg.softmax dimension(1) ins(%s : tensor<8x8xf32>)
                                     outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
    ```

    becomes `linalg.fill` + `linalg.generic` (max), `linalg.generic` (exp of
    the difference), `linalg.fill` + `linalg.generic` (sum) and
    `linalg.generic` (division).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def WidenReductionsPass : Pass<"tp-widen-reductions", "::mlir::ModuleOp"> {
  let summary = "Sums and products of f16 and bf16 accumulate in f32 and round once";
  let description = [{
    Part of every lowering (`--tp-lower-to-cpu`, its `reference`, and
    `--tp-lower-to-cuda`), on tensors, after `tp-decompose-aggregates`. A
    sum whose accumulator is bf16 stops growing once it is 256 times its
    terms (the spacing of bf16 at 256 is 2): the sum of squares of 4096
    values in [-1, 1) comes out 256, not about 1365, and a Llama-7B
    RMSNorm over it is off by more than a factor of two; a softmax's sum
    over 2048 keys likewise. PyTorch and XLA accumulate such reductions in
    f32 and round the result once, and so does every lowering here after
    this pass, the reference that `tp-run --verify` compares with included.

    Each `linalg.generic` on statically shaped tensors with one f16 or bf16
    output and a reduction loop, whose body is `addf(f(inputs), out)` or
    `mulf(f(inputs), out)` (`out` used by that op alone; one input, or
    several: a layernorm's variance from the activations and their mean),
    becomes the same reduction into an f32 tensor: its initial value
    widened (a fill's constant, or an elementwise `extf`), `f(inputs)`
    computed as before and widened, then combined in f32. A `linalg.generic` reading the result
    reads the f32 tensor and rounds it (`truncf`) where it reads it, so
    that it still fuses (a normalization's row kernel, a softmax's
    division); any other user reads a rounded copy. Contractions (the
    GEMMs and attention products, which the GEMM calls and the attention
    kernel already accumulate in f32) are left as they are, and so are max
    and min reductions (exact in any type) unless `extrema` is set: the CPU
    lowering sets it, because a narrow accumulator is rounded on every
    iteration, which keeps LLVM from vectorizing the loop (a bf16 softmax's
    row maximum was a scalar loop, the hottest of the block's non-GEMM
    code), while an f32 one is the extremum of the widened values, rounded
    once: exactly the narrow result.

    Example:

    ```mlir
    %ss = linalg.generic {indexing_maps = [#se, #s], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<8x4096xbf16>) outs(%zero : tensor<8xbf16>) {
    ^bb0(%v: bf16, %acc: bf16):
      %v2 = arith.mulf %v, %v : bf16
      %r = arith.addf %v2, %acc : bf16
      linalg.yield %r : bf16
    } -> tensor<8xbf16>
    ```

    becomes

    ```mlir
    %z = linalg.fill ins(%cst : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
    %ss = linalg.generic {indexing_maps = [#se, #s], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<8x4096xbf16>) outs(%z : tensor<8xf32>) {
    ^bb0(%v: bf16, %acc: f32):
      %v2 = arith.mulf %v, %v : bf16
      %w = arith.extf %v2 : bf16 to f32
      %r = arith.addf %w, %acc : f32
      linalg.yield %r : f32
    } -> tensor<8xf32>
    ```

    and the normalization that read `%ss` reads it as f32, its body
    starting with `arith.truncf` of it to bf16.
  }];
  let options = [
    Option<"extrema", "extrema", "bool", /*default=*/"false",
           "Widen max and min reductions (maxnumf, minnumf, maximumf, minimumf) too">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FuseConcatenationsPass
    : Pass<"tp-fuse-concatenations", "::mlir::ModuleOp"> {
  let summary = "A concatenation read by a pointwise op becomes a linalg.generic that reads its operands' sources in place, for tp-fuse-elementwise";
  let description = [{
    Part of `--tp-lower-to-cpu` and `--tp-lower-to-cuda`, on tensors, before
    `tp-fuse-elementwise`. A `tensor.concat` copies its operands into a new
    tensor, which its consumer then reads: rotary embeddings' rotate-half
    (`concat(-x[..., D/2:], x[..., :D/2])`, as Hugging Face's Llama writes
    it) is a negation, two copies and the rotation that reads them, four
    kernels on a GPU. Each statically shaped concatenation whose one use is
    an input of an all-parallel `linalg.generic` (read through a
    permutation) becomes an all-parallel `linalg.generic` of no inputs:
    at each point (`linalg.index`), a chain of `scf.if` on the coordinate
    along the concatenated dimension picks the operand the point falls in,
    and the element is read where it comes from, at the shifted
    coordinates (`tensor.extract`):
    - an operand that is a slice (static offsets and sizes, unit strides,
      no rank dropped) is read in the slice's source, at the offsets;
    - an operand computed by an all-parallel `linalg.generic` used only by
      the concatenation, every operand read through the identity (the
      negation), gets that op's body, on its inputs' elements (read the
      same way); the op goes away;
    - any other operand is read as it is.
    `tp-fuse-elementwise` then fuses the generic into its consumer: the
    rotation reads x in place and writes its result, one loop (one kernel).
    Nothing else changes: the values are the same, bit for bit.

    Example:

    ```mlir
    %lo = tensor.extract_slice %x[0, 0] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
    %hi = tensor.extract_slice %x[0, 8] [8, 8] [1, 1] : tensor<8x16xf32> to tensor<8x8xf32>
    %n = linalg.generic {negf} ins(%hi : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>)
    %r = tensor.concat dim(1) %n, %lo : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
    ```

    becomes

    ```mlir
    %r = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
        outs(%e2 : tensor<8x16xf32>) {
    ^bb0(%out: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %in = arith.cmpi ult, %j, %c8 : index
      %v = scf.if %in -> (f32) {
        %j8 = arith.addi %j, %c8 : index
        %h = tensor.extract %x[%i, %j8] : tensor<8x16xf32>
        %neg = arith.negf %h : f32
        scf.yield %neg : f32
      } else {
        %j0 = arith.subi %j, %c8 : index
        %l = tensor.extract %x[%i, %j0] : tensor<8x16xf32>
        scf.yield %l : f32
      }
      linalg.yield %v : f32
    } -> tensor<8x16xf32>
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FuseElementwisePass : Pass<"tp-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Fuses chains of elementwise linalg ops on tensors into single loops";
  let description = [{
    Part of `--tp-lower-to-cpu`, before bufferization: an elementwise
    (all-parallel) producer with a single use is fused into its consumer
    when the consumer is elementwise too, so that a bias add, a GELU and a
    residual become one loop nest over memory instead of three, with no
    intermediate buffers; LLVM vectorizes the fused loop. Contractions are
    never fused into (they stay GEMMs for `tp-convert-gemm-to-blas`), and
    reductions keep their own loops.

    Example: `%h = linalg.generic {addf}(%mm, %bias)` followed by
    `%g = linalg.generic {tanh-GELU}(%h)` becomes one `linalg.generic`
    reading `%mm` and `%bias` and computing both bodies.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def UnshareFillsPass : Pass<"tp-unshare-fills", "::mlir::ModuleOp"> {
  let summary = "Every destination of a shared fill gets its own fill of its own empty tensor";
  let description = [{
    Part of `--tp-lower-to-cpu` and `--tp-lower-to-cuda` (not the
    reference), on tensors, after the fusion passes. One zeroed tensor as
    the destination of several ops (a model that fills once for every GEMM
    of a shape, as `test/Dialect/TP/propagate/llama.mlir` does, or the CSE
    of `tp-fuse-reductions`) bufferizes as one buffer zeroed once and
    copied for every destination but the last: on a GPU, a fill kernel and
    a copy kernel each. An empty tensor shared with unrelated ops would
    have the fill zero a buffer an earlier op wrote. Every fill of an empty
    tensor gets its own empty tensor, and each destination in the fill's
    block its own fill (the earliest keeps the original): fresh buffers,
    whose zeroing `tp-convert-gemm-to-blas` drops and a row kernel's
    reduction starts from in a register.

    Example: `%z = linalg.fill ins(%zero) outs(%e)` used by two
    `linalg.matmul` as their init becomes two fills, each of its own
    `tensor.empty`, one per matmul.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FoldAddendsIntoGemmPass
    : Pass<"tp-fold-addends-into-gemm", "::mlir::ModuleOp"> {
  let summary = "A GEMM's accumulator starts from the bias and residual added to its result";
  let description = [{
    Part of `--tp-lower-to-cpu` and `--tp-lower-to-cuda`, after the fusion
    passes, on tensors. A sum into a zeroed accumulator (a
    GEMM: `linalg.fill 0` as its init, a body yielding `addf(acc, ...)`)
    whose result goes only to an elementwise `linalg.generic` that adds
    inputs to it (`%mm + %bias`, then `+ %residual`) starts from those
    inputs instead: a new loop writes their sum into the accumulator (or a
    single whole-tensor addend is the accumulator itself), the GEMM adds its
    product to it (`tp-convert-gemm-to-blas` finds no zeroing fill and calls
    BLAS with beta = 1, PyTorch's `addmm(bias, x, W)`), and the consumer
    loses those adds: it goes away when it only copied the sum, and keeps
    the rest (a GELU) otherwise. The accumulator is no longer zeroed, then
    read back and written again by the bias add: one pass over the GEMM's
    output less. The sum is the same up to the order of the float additions
    (bias + sum instead of sum + bias).

    A partial sum (a row-parallel GEMM) whose `tp.all_reduce sum` goes to
    such a consumer (Megatron's output projections: all-reduce, then bias
    and residual) starts from the addends on the first member of the
    reduction's group only, from zero on the others (`scf.if` on
    `tp.axis_index`): the all-reduce adds them once, and the pass after it
    goes away. An addend moves there only if it is the same on every member
    of the group: the analysis in `tp/Dialect/TP/IR/Uniformity.h` (MLIR's
    sparse dataflow, one function at a time, with summaries across calls to
    private functions: linear in the calls) follows it back to
    arguments whose `tp.sharding` neither splits nor leaves pending a sum
    over the group's axes, and to values all-reduced or all-gathered over
    them.

    Only f32 GEMMs (and f16 and bf16 ones with `narrow`: the CUDA
    lowering and its emulation, where cuBLAS reads C in its own type and
    rounds D once; the CPU's libraries would widen a copy of C) with static
    shapes, whose result (or its all-reduce) has
    that one use, read through the identity map, and only adds of the
    consumer's inputs that come before anything else it computes with the
    sum (defined before the all-reduce, for a partial sum). Runs after
    `tp-fuse-reductions`. Not part of `--tp-lower-to-cpu{reference}`.

    Example:

    ```mlir
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<512x768xf32>) -> tensor<512x768xf32>
    %mm = linalg.matmul ins(%x, %w : tensor<512x768xf32>, tensor<768x768xf32>)
                        outs(%z : tensor<512x768xf32>) -> tensor<512x768xf32>
    %y = linalg.generic {indexing_maps = [#id, #row, #id, #id], ...}
        ins(%mm, %bias, %res : tensor<512x768xf32>, tensor<768xf32>, tensor<512x768xf32>)
        outs(%e : tensor<512x768xf32>) {
    ^bb0(%m: f32, %b: f32, %r: f32, %o: f32):
      %0 = arith.addf %m, %b : f32
      %1 = arith.addf %0, %r : f32
      linalg.yield %1 : f32
    } -> tensor<512x768xf32>
    ```

    becomes

    ```mlir
    %init = linalg.generic {indexing_maps = [#row, #id, #id], ...}
        ins(%bias, %res : tensor<768xf32>, tensor<512x768xf32>)
        outs(%e2 : tensor<512x768xf32>) {
    ^bb0(%b: f32, %r: f32, %o: f32):
      %0 = arith.addf %b, %r : f32
      linalg.yield %0 : f32
    } -> tensor<512x768xf32>
    %y = linalg.matmul ins(%x, %w : tensor<512x768xf32>, tensor<768x768xf32>)
                       outs(%init : tensor<512x768xf32>) -> tensor<512x768xf32>
    ```
  }];
  let options = [
    Option<"narrow", "narrow", "bool", /*default=*/"false",
           "Fold into f16 and bf16 GEMMs too">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FuseReductionsPass : Pass<"tp-fuse-reductions", "::mlir::ModuleOp"> {
  let summary = "Runs row-wise chains with reductions (layernorm, softmax) one tile of rows at a time";
  let description = [{
    Part of `--tp-lower-to-cpu`, after `tp-fuse-elementwise`, on tensors: a
    layernorm (sum, sum of squares, normalization) or a softmax with its
    scale and mask (scale-and-mask, max, subtract-exp, sum, divide) makes a
    pass over memory per op. Each of these ops works row by row: its
    leading loops are parallel and index its operands and results first.
    The chain's last op (an all-parallel `linalg.generic` reading a
    reduction's result along its leading loops) is tiled over those loops
    (`scf.for`, one row at a time but for the innermost row loop, which
    takes as many rows as fit in about 8 KiB), and its producers in the
    chain are fused into the tile (upstream's tile-and-fuse through
    `TilingInterface`): the activations are read from memory once and every
    intermediate is a tile-sized buffer that stays in cache. The tiles'
    unit dimensions are dropped (fewer loops for LLVM: without that, the
    tiling cost 28% more compile time on a 4-layer GPT).

    The CSE that follows fusion merges equal empty tensors and equal fills,
    so the zeroed accumulators of GEMMs of one shape become one value on an
    empty tensor other ops write too: `tp-unshare-fills`, after it in the
    pipeline, gives each destination its own again.

    A producer joins the chain only if every use of it is in the chain and
    reads it along the rows: nothing is computed twice, and GEMMs are never
    pulled in (they stay `tp-convert-gemm-to-blas`'s). Shapes must be
    static. Not part of the CUDA lowering (each tile would be a kernel
    launch).

    Example: a softmax over the last dimension of `tensor<4x12x128x128xf32>`,
    decomposed by `tp-decompose-aggregates`, becomes

    ```mlir
    scf.for %b = %c0 to %c4 step %c1 iter_args(%o0 = %out) -> (tensor<4x12x128x128xf32>) {
      scf.for %h = %c0 to %c12 step %c1 iter_args(%o1 = %o0) -> (tensor<4x12x128x128xf32>) {
        scf.for %i = %c0 to %c128 step %c16 iter_args(%o2 = %o1) -> (tensor<4x12x128x128xf32>) {
          // scale-and-mask, max, subtract-exp, sum and divide on
          // tensor<16x128xf32> tiles (the tiles' unit dimensions dropped)
          %t = tensor.insert_slice %quotient into %o2[%b, %h, %i, 0] [1, 1, 16, 128] [1, 1, 1, 1]
          scf.yield %t : tensor<4x12x128x128xf32>
        }
        ...
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def LowerRowLoopsPass : Pass<"tp-lower-row-loops", "::mlir::func::FuncOp"> {
  let summary = "Row-wise ops become loops LLVM vectorizes: a reduction's accumulator in a register, inputs invariant along the row loaded before it";
  let description = [{
    Part of `--tp-lower-to-cpu` (not `--reference`), on buffers, before
    `convert-linalg-to-loops`. That pass loads every input, and a
    reduction's accumulator, on every iteration of the innermost loop; where
    the buffers may alias (buffers passed to a layer function, tiles of one
    arena at offsets known per row) LLVM can move none of those loads out,
    and the loop stays scalar: a reduction waits on each iteration for the
    previous store of its accumulator, and a normalization reloads its row's
    mean and variance and recomputes its `rsqrt` on every element.

    Two kinds of `linalg.generic`, with maps of loop dimensions and
    constants, become `scf.for` loops here:
    - a single-output reduction whose only reduction loop is its innermost
      (a layernorm's sums, a softmax's max and sum): the innermost loop
      carries the accumulator as an iter_arg (loaded before, stored after).
      A float `addf`, `maximumf`, `minimumf`, `maxnumf` or `minnumf` that
      combines it is marked `reassoc`, so that LLVM vectorizes the reduction
      (partial results in vector lanes, combined at the end, as PyTorch's
      and XLA's are): the terms are added in another order, within
      `--verify`'s tolerance of the plain lowering's sequential order;
    - an elementwise op (every loop parallel, at least two) whose outputs
      all move along the innermost loop and one of whose inputs does not (a
      normalization reading its row's statistics, a bias along the rows of
      a transposed op).

    In both, the inputs that do not move along the innermost loop are loaded
    before it, and what the body computes from them and the outer indices
    alone moves out of it (MLIR's loop-invariant code motion). Linalg's
    semantics allow it: an op reads its inputs and writes its outputs, and
    bufferization never makes an output overwrite what the op still reads.

    Example: a layernorm's normalization of a `memref<512x768xf32>`

    ```mlir
    linalg.generic {iterator_types = ["parallel", "parallel"], ...}
        ins(%x, %mean, %var : memref<512x768xf32>, memref<512xf32>, memref<512xf32>)
        outs(%y : memref<512x768xf32>) {
    ^bb0(%v: f32, %m: f32, %s: f32, %out: f32):
      %e = arith.addf %s, %eps : f32
      %r = math.rsqrt %e : f32
      %d = arith.subf %v, %m : f32
      %n = arith.mulf %d, %r : f32
      linalg.yield %n : f32
    }
    ```

    becomes

    ```mlir
    scf.for %i = %c0 to %c512 step %c1 {
      %m = memref.load %mean[%i] : memref<512xf32>
      %s = memref.load %var[%i] : memref<512xf32>
      %e = arith.addf %s, %eps : f32
      %r = math.rsqrt %e : f32
      scf.for %j = %c0 to %c768 step %c1 {
        %v = memref.load %x[%i, %j] : memref<512x768xf32>
        %d = arith.subf %v, %m : f32
        %n = arith.mulf %d, %r : f32
        memref.store %n, %y[%i, %j] : memref<512x768xf32>
      }
    }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def ApproximateMathPass : Pass<"tp-approximate-math", "::mlir::ModuleOp"> {
  let summary = "Replaces transcendental math ops (tanh, exp, log, erf, ...) by polynomial approximations that vectorize";
  let description = [{
    Part of `--tp-lower-to-cpu`: upstream MLIR's polynomial approximations
    (accurate to a few ulp in f32) instead of scalar libm calls, so that the
    loops of GELU and softmax stay plain arithmetic that LLVM vectorizes.
    The sharded program and its unsharded reference use the same
    approximations.

    Example: `%t = math.tanh %x : f32` becomes a clamp, a rational
    polynomial of `%x` and a select, all `arith` ops.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def CheckSliceOffsetsPass : Pass<"tp-check-slice-offsets", "::mlir::ModuleOp"> {
  let summary = "Checks the bounds of every slice offset computed at run time: an error status, never memory outside a buffer";
  let description = [{
    Part of both lowerings, after `tp-convert-collectives-to-runtime` (the
    host functions take the rank context). A slice whose offset is known only
    at run time (a KV cache written at a decode step's position, read from a
    0-d integer input) would touch memory outside its buffer for an offset
    out of bounds. Each dynamic offset of a `memref.subview` of a statically
    shaped buffer, with static size and stride, is checked where it is
    computed: outside `[0, dim - 1 - (size - 1) * stride]` the host code
    calls `tprt_rt_index_error` (the rank fails with TPRT_INVALID_ARGUMENT,
    naming the offset, its bounds and the op's location) and the slice is
    taken at offset 0, so that nothing outside the buffer is read or written
    before the run ends.

    An offset proven in bounds needs no check: an induction variable of an
    `scf.for` with constant bounds (its last value computed with the step),
    or a value whose integer range (MLIR's `IntegerRangeAnalysis`) lies in
    them. A check would be a `select` that hides the offset's affine form
    from LLVM: the loops of row-wise fused ops, which read one tile of an
    arena and write another, would not vectorize (an unknown dependence).

    Example:

    ```mlir
    %v = memref.subview %cache[0, %i] [2, 1] [1, 1] : memref<2x6xf32> to ...
    ```

    becomes

    ```mlir
    %p = arith.index_cast %i : index to i64
    %ok = ... 0 <= %p <= 5 ...
    scf.if %bad { func.call @tprt_rt_index_error(%ctx, %p, %c5, %what) }
    %safe = arith.select %ok, %i, %c0 : index
    %v = memref.subview %cache[0, %safe] [2, 1] [1, 1] : ...
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect"];
}

def ConvertCollectivesToRuntimePass
    : Pass<"tp-convert-collectives-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Buffer-form collectives become calls into the tprt runtime, with the rank context passed explicitly";
  let description = [{
    Every function with a body gets a leading `!llvm.ptr` argument: the rank
    context (`tprt_rank_context *`) that the runtime passes to entry points;
    calls between such functions pass it on. Each collective in buffer form
    becomes a call to its `tprt_rt_*` entry point (runtime/include/tprt/
    tprt.h) with bare pointers to contiguous buffers (an operand with a
    strided layout is copied to a contiguous one first), the shape, the
    element type and reduction codes, and the mesh axes packed into an
    `i64`; `tp.axis_index` becomes `tprt_rt_axis_index`. Run after one-shot
    bufferization.

    Example:

    ```mlir
    tp.all_reduce sum %a over @world ["tp"] into %b : memref<16x512xf32>
    ```

    becomes (pointers taken with `memref.extract_aligned_pointer_as_index`)

    ```mlir
    func.call @tprt_rt_all_reduce(%ctx, %pa, %pb, %c8192_i64, %c0_i32, %c0_i32, %c1_i64)
        : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i32, i32, i64) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect"];
}

def ConvertGemmToBlasPass : Pass<"tp-convert-gemm-to-blas", "::mlir::ModuleOp"> {
  let summary = "Contractions on buffers (matmuls, batch matmuls, attention's generics) become GEMM calls through the runtime, with their epilogues";
  let description = [{
    Runs on buffers, after `tp-convert-collectives-to-runtime` (whose rank
    context, the first function argument, it passes along). The GEMM
    recogniser that every lowering shares (`tp/Conversion/Common/Gemm.h`)
    finds each linalg contraction on statically shaped float memrefs of one
    type (a named matmul or batch matmul, or a generic that multiplies and
    accumulates) whose operands can be seen as row-major matrices: the m, n
    and k loops must each be adjacent and in the same order in the operands
    that hold them, with one group innermost in each operand (A and B may be
    stored transposed, C may not); batch loops, each with its own stride per
    operand. Where the m or n loops are not adjacent in order (grouped-query
    attention: a group's query heads sit between the sequence and the head
    dimension of the queries), one of them becomes a batch loop instead,
    with stride 0 in the operand that does not hold it (the keys and values
    a group shares), the one that leaves the largest matrices. A call takes
    two batch loops; more become `scf.for` loops around it (a grouped-query
    attention's batch), each call at its operands' offsets. Each becomes `tprt_rt_gemm(ctx, &desc, A, B, C, D,
    bias)`: D = act(op(A) op(B) + C + bias), its shape, strides, element type
    (f32, or f16 and bf16 accumulated in f32) and epilogue in a constant
    `tprt_gemm_desc` (a private global, one per distinct descriptor), which
    the runtime runs with OpenBLAS on the CPU and cuBLAS or cuBLASLt on
    CUDA.

    The GEMM adds into its output (C is D), unless the output is a fresh
    buffer whose first use is a zero `linalg.fill` (as `matmul(A, B,
    fill(0))` bufferizes) and nothing else uses it before the GEMM (uses
    nested in later ops, such as a loop over the rows, come after): then the
    fill goes and C is left out (null), one pass over the output less.

    With `epilogues` (as `--tp-lower-to-cuda` runs it), the loops around a
    GEMM that its call can do go into it too:
    - the loop just before it that writes its output from a bias (an input
      read by the output's column dimensions only) and/or a residual (read
      as the output is), as `tp-fold-addends-into-gemm` leaves them: the bias
      becomes the call's bias (cuBLASLt's `BIAS` epilogue), the residual its
      C (beta = 1, C apart from D);
    - the elementwise loop just after it that computes GELU in its tanh form
      from the GEMM's fresh output into another buffer of its shape
      (recognised by evaluating its body across GELU's curve, whatever the
      arrangement of its arithmetic): the call writes that buffer (`GELU`,
      or `GELU_BIAS` with a bias), and the fresh buffer goes.

    Strided inputs are copied to contiguous buffers; other contractions
    (strided outputs, other element types, loops that do not form matrices)
    are left to the loop lowering.

    Example:

    ```mlir
    linalg.matmul ins(%a, %b : memref<16x512xf32>, memref<512x128xf32>)
                  outs(%c : memref<16x128xf32>)
    ```

    becomes a descriptor of {dtype, trans_a, trans_b, epilogue, M, N, K,
    lda, ldb, ldc, ldd, batch0, batch1, then the batch strides of A, B, C
    and D} and a call:

    ```mlir
    llvm.mlir.global private constant @__tp_gemm_desc(dense<[0, 0, 0, 0, 16,
        128, 512, 512, 128, 128, 128, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]>
        : tensor<21xi64>) : !llvm.array<21 x i64>
    %desc = llvm.mlir.addressof @__tp_gemm_desc : !llvm.ptr
    func.call @tprt_rt_gemm(%ctx, %desc, %pa, %pb, %pc, %pc, %null)
    ```

    and the per-head score contraction of attention,
    `(b, h, i, j, d): Q(b, i, h, d) * K(b, j, h, d) -> S(b, h, i, j)`, is a
    batch (b, h) of `Q K^T` with lda = ldb = H*D.

    With `narrow-only`, f32 contractions stay loops: the reference lowering
    (`tp-lower-to-cpu{reference}`) keeps only the f16/bf16 GEMMs as calls,
    because their contract is f32 accumulation, which MLIR's own loops on
    f16/bf16 memrefs (rounding every partial sum) do not honour.
  }];
  let options = [
    Option<"narrowOnly", "narrow-only", "bool", /*default=*/"false",
           "Convert only f16 and bf16 contractions; f32 ones stay loops">,
    Option<"epilogues", "epilogues", "bool", /*default=*/"false",
           "Fold the bias and residual loop before a GEMM and the GELU after it into its call">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect"];
}

def LowerStridedCopiesPass
    : Pass<"tp-lower-strided-copies", "::mlir::ModuleOp"> {
  let summary = "Copies between buffers that memcpy cannot do become linalg.copy (loops), not calls to MLIR's memrefCopy";
  let description = [{
    The memref-to-LLVM conversion lowers `memref.copy` between contiguous
    buffers to a memcpy and every other copy to a call to `memrefCopy`, a
    function of MLIR's C runner utils. A program library must not depend on
    a symbol outside itself, so this pass turns the other copies into
    `linalg.copy`, which the loop lowering expands. Part of
    `--tp-lower-to-cpu`, before the linalg-to-loops conversion. With
    `every-copy` (as `--tp-lower-to-cuda` runs it) contiguous copies become
    `linalg.copy` too: their buffers are in device memory, which a host
    memcpy cannot reach, and the copy becomes a kernel.

    Example:

    ```mlir
    memref.copy %sub, %dense : memref<4x8xf32, strided<[16, 1], offset: 8>> to memref<4x8xf32>
    ```

    becomes

    ```mlir
    linalg.copy ins(%sub : memref<4x8xf32, strided<[16, 1], offset: 8>>) outs(%dense : memref<4x8xf32>)
    ```
  }];
  let options = [
    Option<"everyCopy", "every-copy", "bool", /*default=*/"false",
           "Contiguous copies become linalg.copy too (device buffers)">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def OutlineParallelLoopsPass
    : Pass<"tp-outline-parallel-loops", "::mlir::ModuleOp"> {
  let summary = "Ops with independent iterations become a function of an iteration range, called on the whole range, for the rank's threads to share";
  let description = [{
    Part of `--tp-lower-to-cpu` (not `--reference`, not
    `--emulate-gpu-mapping`), on buffers, after the GEMM matcher and before
    `tp-plan-arena`. A rank thread runs every op but its GEMMs alone while
    the rest of its OpenMP team (the cores its GEMMs use) waits; this pass
    and `tp-lower-parallel-calls` give such ops to the whole team.

    Two kinds of ops at the top of a function body are outlined when they
    have at least two iterations and their linalg ops read and write at
    least `min-bytes` in all (waking the team costs about a microsecond):
    - a perfect nest of `scf.for` loops marked `tp.parallel`, with constant
      bounds (`tp-fuse-reductions`' row tiles): its iterations, collapsed
      into one range, the innermost loop fastest. A buffer allocated before
      the nest and freed after it that only the nest uses is each
      iteration's scratch (so says `tp.parallel`): the function allocates
      its own (on the stack up to 64 KiB in all, else on the heap once);
    - a linalg op on buffers without `linalg.index` whose maps are made of
      loop dimensions and constants: its iterations along one parallel loop
      (the one with the most iterations that is not the innermost, unless
      the innermost is the only one), each operand indexed by that loop
      taken as a subview of the range.

    The function, private and marked `tp.parallel_body`, takes the range
    `[lo, hi)` and then the values the op uses from outside it: memrefs with
    a static shape and an identity layout, and scalars; constants and views
    of those are made again inside. An op that uses anything else, or holds
    a call, stays where it is. The op becomes a call of the function on the
    whole range.

    Example: the GELU of a `memref<512x3072xf32>`

    ```mlir
    linalg.generic {iterator_types = ["parallel", "parallel"], ...}
        ins(%x : memref<512x3072xf32>) outs(%y : memref<512x3072xf32>) {...}
    ```

    becomes

    ```mlir
    call @f_parallel_0(%c0, %c512, %x, %y) : (index, index, memref<512x3072xf32>, memref<512x3072xf32>) -> ()
    ...
    func.func private @f_parallel_0(%lo: index, %hi: index, %x: memref<512x3072xf32>, %y: memref<512x3072xf32>) attributes {tp.parallel_body} {
      %n = arith.subi %hi, %lo : index
      %xs = memref.subview %x[%lo, 0] [%n, 3072] [1, 1] : ...
      %ys = memref.subview %y[%lo, 0] [%n, 3072] [1, 1] : ...
      linalg.generic {...} ins(%xs : ...) outs(%ys : ...) {...}
      return
    }
    ```
  }];
  let options = [
    Option<"minBytes", "min-bytes", "int64_t", /*default=*/"131072",
           "Outline only ops whose linalg ops read and write at least this many bytes">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"];
}

def LowerParallelCallsPass
    : Pass<"tp-lower-parallel-calls", "::mlir::ModuleOp"> {
  let summary = "Calls of a tp.parallel_body function become tprt_rt_parallel_for, with its arguments packed in a struct";
  let description = [{
    Part of `--tp-lower-to-cpu`, in the LLVM dialect, after the host's
    conversion to it and before `tp-call-runtime-through-table`. For each
    function marked `tp.parallel_body` (made by
    `tp-outline-parallel-loops`), whose first two parameters are the range
    `[lo, hi)` (i64), this pass adds an internal task
    `@F_task(ptr %args, i64 %lo, i64 %hi)` that loads the other parameters
    from the struct `%args` points to and calls `@F`. Each call of `@F`
    stores its other arguments in a struct on the caller's stack (one slot
    per call, made in the entry block) and becomes

    ```mlir
    llvm.call @tprt_rt_parallel_for(%ctx, %task, %args, %lo, %hi)
    ```

    where `%ctx` is the caller's rank context (its first parameter): the
    runtime splits the range over the rank's OpenMP team. A call from a
    function without a rank context is an error.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def FuseAttentionPass : Pass<"tp-fuse-attention", "::mlir::func::FuncOp"> {
  let summary = "Attention on buffers (scores, their scale and masks, softmax, weighted sum) becomes one flash-style gpu.launch that never writes the scores";
  let description = [{
    Runs in the CUDA lowering (and `--emulate-gpu-mapping`) on bufferized
    IR before the GEMM matcher, and replaces each sequence, in order in one
    block (allocations, frees and pure ops may lie between), of
    - a fill of a fresh scores buffer with 0 and the contraction
      `S[..., q, k] += Q[...] * K[...]` over one head dimension (each
      operand optionally widened), where a dimension of S before the last
      is read by the queries and not by the keys (the last such is the
      query's; the others are batch dimensions the keys and values are
      shared by, as grouped-query attention's query heads share their
      key/value head);
    - any pointwise ops on the scores (their scale, an additive mask, a
      mask from `linalg.index` comparisons), in place or into a fresh
      buffer of their shape, their other operands unchanged here;
    - the softmax over the last dimension: a max-reduction from a fill of
      at most -1e30 (or NaN, which maxnumf ignores), `exp(S - max)`, a sum-reduction from a fill of 0 (in f32 for f16 and
      bf16 scores, as `tp-widen-reductions` leaves it) and
      `S / sum`;
    - the contraction `O[...] += P[..., q, k] * V[...]` over the keys, from
      a fill of 0 (or onto what O holds), where the values do not read the
      query dimension;
    when the scores and the softmax's rows are used by nothing else (but
    their frees), the output shares no memory with what the kernel reads
    (as `tp-map-linalg-to-gpu` judges it: in a layer function the arguments
    may), the shapes are static, both head dimensions are at most 128, and
    the kernel is faster on the cost model's machine (`cost-model`, as
    `--tp-propagate`'s): against the two GEMMs at their rate (tensor cores
    for 16-bit operands, and for f32 at `matmul-precision` high or medium)
    plus the scores' four trips through memory and the launches of the
    GEMMs' calls (one per batch loop beyond two: grouped-query attention's
    batch) and the softmax (2 us each), the kernel's multiply-adds run on
    tensor cores where it uses them, else on the CUDA cores; contractions
    no GEMM call takes would run as loops, and always fuse. The GPT-2-small
    attention in f32 fuses, and so does a Llama-7B-sized one in bf16 (2048
    tokens), on tensor cores.

    **The tensor-core kernel** (`tensor-cores`, on by default; the CUDA
    lowering turns it off before sm_80) takes queries and keys of one
    16-bit type (f16 or bf16), 16-bit values, a head dimension that is a
    multiple of 16 and a feature count that is a multiple of 8: a block per
    64 consecutive queries of one (batch, head, ...) index, 4 warps of 16
    rows. The queries are staged in workgroup memory and each warp loads
    its `nvgpu.mma.sync` A fragments once (m16n8k16: a lane of group g =
    lane / 4 and t = lane % 4 holds rows g and g + 8); then per tile of 64
    keys the keys (key-major) and the values (feature-major) are staged,
    each row padded by 8 elements, zeros past the last key; where an
    operand's head dimension is its innermost, of unit stride, with its
    offset and other strides multiples of 8, each thread stages 16 bytes
    at a time (aligned vector loads). A warp's scores
    are 8 m16n8 f32 accumulators (head dimension / 16 mma.sync each); each
    score is rounded as the scores are stored and goes through the
    pointwise ops' cloned bodies (a key past the end is -inf); each row's
    maximum meets over the quad of lanes holding it (shuffles by 1 and 2),
    the weights `exp(s - max)` are summed per lane (the quad's sums meet at
    the end), and, rounded to the values' type, are the A fragments of the
    weighted sum's mma.sync as they lie (the accumulator layout of two
    n-tiles is the A layout of one k-tile); the outputs, features / 8
    accumulators, are rescaled by `exp(old max - new max)` first. The
    outputs are divided by the row's sum and stored (rounded to O's type).
    bf16 mma.sync reaches NVVM through `tp-lower-bf16-mma`.

    **The CUDA-core kernel** (any other types or shapes): a block per 16
    consecutive queries, 4 warps of 4 query rows; the queries staged
    once in workgroup memory, then per tile of 32 keys the keys and values
    staged (`gpu.barrier`), each lane scoring one key for each of its warp's
    rows (the pointwise ops' bodies cloned, their operands read at the
    score's indices, the score rounded as the scores are stored), the
    row's maximum and sum updated online (warp shuffles), the weights
    staged, and each lane accumulating its features (`lane + 32c`) rescaled
    by `exp(old max - new max)`. The outputs are divided by the sum and
    stored (rounded to O's type). Everything is computed in f32 (f16 and
    bf16 operands are widened).

    In both, a row whose scores are all -inf gives NaN, as the unfused
    softmax does. Anything else (another softmax form, a head dimension
    over 128, a scores buffer read elsewhere) keeps the unfused path: GEMM
    calls and row kernels. The launch's `tp.cost` counts the two
    contractions' flops as `tensor_flops` in the tensor-core kernel.

    Example: the GPT-2 attention (`bench/gen_gpt.py`: S[b, h, i, j] from
    Q[b, i, h, d] and K[b, j, h, d], `S * 0.125 + mask[i, j]`, softmax,
    O[b, i, h, d] from P and V[b, j, h, d]) on 4 x 12 heads of 128 tokens
    becomes one launch of 4 * 12 * 8 blocks of 128 threads in place of two
    batched GEMM calls and a row kernel.
  }];
  let options = [
    Option<"costModel", "cost-model", "std::string", /*default=*/"\"h200\"",
           "The machine that decides whether fusing pays: h200 (built in) or a machine-model file">,
    Option<"matmulPrecision", "matmul-precision", "std::string",
           /*default=*/"\"highest\"",
           "The program's f32 GEMM precision (highest, high, medium): the unfused GEMMs' rate">,
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"true",
           "Whether the kernel may use mma.sync m16n8k16 (sm_80 and later) for f16 and bf16 operands; else every attention gets the CUDA-core kernel">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect", "::mlir::nvgpu::NVGPUDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def LowerBF16MmaPass : Pass<"tp-lower-bf16-mma"> {
  let summary = "bf16 nvgpu.mma.sync becomes nvvm.mma.sync on packed i32 registers (MLIR's convert-nvgpu-to-nvvm cannot type bf16 operands)";
  let description = [{
    Runs in the CUDA lowering's kernel pipeline before
    `convert-nvgpu-to-nvvm`, which lowers `nvgpu.mma.sync` on f16 operands
    but fails on bf16 ones ("failed to deduce operand PTX types") in MLIR
    22. Each m16n8k16 `nvgpu.mma.sync` on `vector<4x2xbf16>` and
    `vector<2x2xbf16>` operands with a `vector<2x2xf32>` accumulator (the
    attention kernel's, `tp-fuse-attention`) becomes an `nvvm.mma.sync`
    (row-major A, column-major B, bf16 multiplicands): each register of two
    bf16 is bitcast to the i32 the instruction takes, the accumulator's four
    elements are passed as f32, and the result struct's four elements make
    the `vector<2x2xf32>` again. Any other bf16 mma.sync is an error naming
    what the pass takes.

    Example:

    ```mlir
    %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]}
        : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
    ```

    becomes

    ```mlir
    %r = nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b1] C[%c0, %c1, %c2, %c3]
        {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
         multiplicandAPtxType = #nvvm.mma_type<bf16>,
         multiplicandBPtxType = #nvvm.mma_type<bf16>,
         shape = #nvvm.shape<m = 16, n = 8, k = 16>}
        : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    ```
  }];
  let dependentDialects = [
    "::mlir::NVVM::NVVMDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def MapLinalgToGPUPass : Pass<"tp-map-linalg-to-gpu", "::mlir::func::FuncOp"> {
  let summary = "Structured ops on buffers become gpu.launch kernels: flat and coalesced for pointwise ops, a block per output element for reductions, a block per row for a normalization or softmax";
  let description = [{
    The kernel-mapping step of the CUDA lowering (`--tp-lower-to-cuda`), on
    bufferized IR after the GEMMs became library calls. Each remaining
    linalg op with static loop ranges becomes a `gpu.launch`, its own or,
    in a row kernel, one shared with the ops around it:

    - **Pointwise** (only parallel loops: elementwise chains, broadcasts,
      transposes, fills, copies): one thread per iteration point, 256 per
      block, the loops delinearized from the global thread index with the
      innermost loop fastest, so that consecutive threads touch consecutive
      elements of the output; a bounds check guards the last block.
      **Vectorized** when the innermost loop is a multiple of 4 and every
      buffer either reads it in its unit-stride innermost dimension (offset
      and other strides multiples of 4, elements of 8 to 32 bits) or not at
      all, and the body is elementwise ops, constants and `linalg.index`:
      each thread then runs 4 consecutive points with aligned
      `vector.load`/`vector.store` (16 bytes of f32), broadcasting the
      operands that do not depend on the innermost loop.
    - **Reductions** whose body is `combine(f(inputs), out)` with `combine`
      one of addf, mulf, maxnumf, minnumf, maximumf, minimumf (f32, and f16
      or bf16, whose partials and total are combined in f32 and rounded
      once) or addi (i32, i64), and at least 32 reduction iterations per
      output element:
      one block per output element; each thread folds a strided share of the
      reduction loops, the block combines the partials with `gpu.all_reduce`
      (lowered to warp shuffles and shared memory), and thread 0 folds the
      total into the output.
    - **Any other reduction**: one thread per output element, which runs
      the reduction loops itself.
    - **Row kernels**: consecutive ops over the same rows (parallel loops
      over the rows, then one loop along the row), at least one of them a
      block reduction over the row, become one kernel with a block per row:
      a LayerNorm or RMSNorm (its statistics and the normalization), a
      softmax with the scale and mask before it. The block's threads run
      each op's share of the row in turn (r = tid, tid + threads, ...); a
      reduction's result (the row's statistic) stays in a register for the
      ops after it, and thread 0 also stores it. A `linalg.fill` of a
      reduction's output folds into it: the reduction starts from the fill's
      value, and no fill kernel runs. Pure ops, allocations and frees may lie
      between the ops; the frees move after the kernel. An op joins only if
      its body reads no memory but its operands (not a buffer it captures,
      as a concatenation read in place does), and no buffer one of the ops
      writes is accessed by another at other
      indices or through a buffer that may share its memory (views of one
      buffer whose static bytes overlap, two arguments of a private
      function); otherwise the kernel ends before it.

    An op with dynamic loop ranges is an error naming it.

    Example:

    ```mlir
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%x : memref<1000xf32>) outs(%y : memref<1000xf32>) {
    ^bb0(%a: f32, %b: f32):
      %e = math.exp %a : f32
      linalg.yield %e : f32
    }
    ```

    becomes a `gpu.launch` of 4 blocks of 256 threads whose body computes
    `%i = block_id.x * 256 + thread_id.x` and, when `%i < 1000`, loads
    `%x[%i]`, applies `math.exp` and stores to `%y[%i]`.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect",
    "::mlir::affine::AffineDialect", "::mlir::vector::VectorDialect"
  ];
}

def ReportKernelsPass : Pass<"tp-report-kernels", "::mlir::ModuleOp"> {
  let summary = "Prints each GPU kernel and GEMM call of a program with its roofline time, and what a run launches";
  let description = [{
    The kernel report of `tp-compile --tp-report --target cuda`: part of
    `--tp-lower-to-cuda` (with `report`), right after
    `tp-map-linalg-to-gpu`, whose kernels carry `tp.cost = {bytes, flops,
    ops}` (the bytes of the buffers their ops access, each once; the scalar
    ops of their bodies times their iteration points; how many linalg ops
    they fuse). For each function, on stderr:

    - each kernel: its grid and block, the ops it fuses, bytes and flops,
      and its roofline time on the machine of `cost-model` (the larger of
      bytes over memory bandwidth and flops over the f32 rate), with the
      model's file and line;
    - each GEMM call (`tprt_rt_gemm`, read from its descriptor): m x n x k,
      its batch, its epilogue (a residual, a bias, GELU), flops, bytes and
      roofline time (f32 GEMMs at the rate of `matmul-precision`: the f32
      rate, TF32 at half the 16-bit rate as on A100, H100 and H200, or the
      16-bit rate);
    - then what one run of the function launches and is modelled to take,
      the runs of the layer functions it calls included.

    Launch costs, collectives and copies are not modelled here (the plan
    report gives the collectives); registers and spills are
    `tp-report-registers`'s, after code generation. The lit tests pin the
    launch counts of the example models, so a fusion lost shows in CI.

    Example (a GPT-2-small block on one GPU):

    ```
    tp-report @gpt:   kernel 0: 512 blocks x 256 threads, 3 ops fused, 3.16 MB, 5.11 Mflop: 0.79 us (gpt.mlir:44)
    tp-report @gpt:   gemm 0: 128 x 128 x 64 f32, batch 48, 100.66 Mflop, 6.29 MB: 2.01 us
    tp-report @gpt:   gemm 3: 512 x 3072 x 768 f32, + bias, GELU, 2.42 Gflop, 17.31 MB: 48.32 us
    tp-report @gpt: 3 kernels and 8 GEMM calls a run (with 3 x @gpt_layer0): 151.37 us modelled (kernels 2.39 us, GEMMs 148.98 us)
    ```
  }];
  let options = [
    Option<"costModel", "cost-model", "std::string", /*default=*/"\"h200\"",
           "The machine the times are modelled on: h200 (built in) or a "
           "machine-model file (tprt-bench --calibrate)">,
    Option<"matmulPrecision", "matmul-precision", "std::string",
           /*default=*/"\"highest\"",
           "The program's matmul precision (tp-compile --matmul-precision): "
           "f32 GEMMs at the f32 rate (highest), on TF32 tensor cores at half "
           "the 16-bit rate (high), or at the 16-bit rate (medium)">
  ];
}

def ReportRegistersPass : Pass<"tp-report-registers", "::mlir::ModuleOp"> {
  let summary = "Prints what ptxas says of each GPU kernel: registers, spills, stack frame, shared memory";
  let description = [{
    The second half of the kernel report of `tp-compile --tp-report --target
    cuda` (`tp-report-kernels` is the first): part of `--tp-lower-to-cuda`
    (with `report`), right before `gpu-module-to-binary`. Each GPU module
    with an NVVM target is serialized to PTX by that target, as
    `gpu-module-to-binary` does, and `ptxas -v` of the toolkit (`toolkit`,
    else `ptxas` on `PATH`) compiles it for the target's chip; for each
    kernel, on stderr, its registers, spill stores and loads, stack frame and
    static shared memory, then the module's summary: how many kernels, the
    most registers one uses, and the bytes of spills (a kernel that spills
    reads and writes local memory: slow, and what the lit tests rule out on
    the example models). The module is left as it is. Without ptxas the
    report says so and the compilation goes on.

    Example (a GPT-2-small block on sm_90):

    ```
    tp-report: ptxas sm_90: gpt_kernel: 30 registers, 0 B spill stores, 0 B spill loads, 0 B stack frame, 256 B shared
    tp-report: ptxas sm_90: 3 kernels, at most 30 registers (gpt_kernel), no spills
    ```
  }];
  let options = [
    Option<"toolkit", "toolkit", "std::string", /*default=*/"\"\"",
           "The CUDA toolkit whose bin/ptxas compiles the PTX (else ptxas on PATH)">
  ];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def EmulateGPULaunchesPass
    : Pass<"tp-emulate-gpu-launches", "::mlir::func::FuncOp"> {
  let summary = "Runs gpu.launch bodies as loops on the CPU (test aid: executes the GPU mapping's index arithmetic, bounds and reductions)";
  let description = [{
    Replaces each `gpu.launch` by loops over its blocks and, inside each
    block, its threads, with the block and thread ids, grid and block sizes
    mapped to the loop indices and launch operands, as Triton's interpreter
    mode runs kernels on the CPU. A body where the block's threads meet
    (`gpu.all_reduce`, `gpu.barrier`, `gpu.shuffle`) runs in phases that end
    at each meeting point, each phase a loop over the block's threads:
    - a reduction folds every thread's operand into one accumulator, which
      is its result for the phases after it;
    - a shuffle keeps each thread's operand, and the phases after it read
      the partner lane's (`xor`, `up`, `down`, `idx` within the warp of 32
      and the width; out of range, the thread's own, with `valid` false);
    - an `nvgpu.mma.sync` (m16n8k16, f16 or bf16 operands, f32
      accumulator) gathers each lane's A, B and C fragments into its
      warp's matrices as the PTX ISA lays them out (lane = 4 * group +
      t; A's element (g + 8 (r mod 2), 2t + e + 8 (r div 2)) in register r,
      element e; B's (2t + e + 8r, g); C's and D's (g + 8r, 2t + e)), then
      a second loop gives each lane its D fragment, C + A * B summed in f32;
    - an `scf.for` whose body holds a meeting point (at any depth of such
      loops) runs once per block, each iteration running its body's phases;
      its bounds must be the block's, and the values it carries are kept
      per thread.
    The ops of a phase that are the same for every thread (pure, with no
    region, using no thread id nor per-thread value) run once per block; a
    per-thread value a later phase uses is kept in a slot per thread.
    Workgroup memory attributions are buffers per block; `gpu.lane_id` is
    the thread's index in its warp. A meeting point inside any other region
    (`scf.if`), and any other GPU op, are errors naming them.

    With `--tp-lower-to-cpu="emulate-gpu-mapping"` (tp-compile
    `--emulate-gpu-mapping`), the CPU pipeline maps every linalg op with
    `--tp-map-linalg-to-gpu` and runs the kernels through this pass, so the
    executable tests verify the mapping the CUDA lowering uses against the
    unsharded run.

    Example:

    ```mlir
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
      ...
      gpu.terminator
    }
    ```

    becomes

    ```mlir
    scf.for %bx = %c0 to %c4 step %c1 {
      ...
        scf.for %tx = %c0 to %c256 step %c1 {
          ...
        }
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
    "::mlir::arith::ArithDialect", "::mlir::vector::VectorDialect"
  ];
}

def ExpandArithPass : Pass<"tp-expand-arith"> {
  let summary = "Expands the arith ops LLVM has no instruction for, keeping float minimum and maximum";
  let description = [{
    `arith-expand-ops` without its float minimum/maximum expansion: ceil and
    floor division become plain divisions with corrections, and bf16
    `extf`/`truncf` and scaling `extf`/`truncf` become integer bit
    manipulation, but `maximumf`, `minimumf`, `maxnumf` and `minnumf` stay,
    for the LLVM lowering's `llvm.maximum`/`llvm.maxnum` intrinsics. Expanded
    into compares and selects that keep NaN semantics, a max reduction (a
    softmax's row maximum) stays a scalar loop; as intrinsics LLVM
    vectorizes it (`llvm.vector.reduce.fmax`), and NVPTX has instructions
    for them. Part of the CPU and CUDA lowerings, after the f16/bf16
    emulation.

    Example:

    ```mlir
    %q = arith.ceildivsi %a, %b : i64
    %m = arith.maxnumf %x, %y : f32
    ```

    becomes divisions, compares and selects for `%q`; `%m` stays.

    With `bf16-conversions=false` the bf16 `extf`/`truncf` stay too: the
    CUDA lowering's kernels for sm_80 and later, where NVPTX has the
    instructions (`cvt.f32.bf16`, `cvt.rn.bf16.f32`, `cvt.rn.bf16x2.f32`
    for pairs) that replace about ten integer ops each.
  }];
  let options = [
    Option<"bf16Conversions", "bf16-conversions", "bool", /*default=*/"true",
           "Expand bf16 extf/truncf into integer bit manipulation (targets without bf16 conversion instructions)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def CallRuntimeThroughTablePass
    : Pass<"tp-call-runtime-through-table", "::mlir::ModuleOp"> {
  let summary = "Calls to tprt_rt_* load the function from the rank context's table instead of naming a runtime symbol";
  let description = [{
    Runs on the LLVM dialect. Every `llvm.call @tprt_rt_X(%ctx, ...)` becomes
    a load of the table pointer at the start of the rank context, a load of
    X's slot in it (`tprt_rt_table` in `runtime/include/tprt/tprt.h`; the
    pass reads the slots' offsets from that header), and an indirect call;
    the `tprt_rt_*` declarations are erased. The program library then
    references no symbol of the runtime: it loads with `RTLD_LOCAL`, from
    ctypes, or next to MLIR's own runtime libraries. A `tprt_rt_*` function
    that the table does not have, or whose first parameter is not the
    context, is an error.

    Example:

    ```mlir
    llvm.call @tprt_rt_axis_index(%ctx, %axes) : (!llvm.ptr, i64) -> i64
    ```

    becomes

    ```mlir
    %table = llvm.load %ctx : !llvm.ptr -> !llvm.ptr
    %slot = llvm.getelementptr inbounds %table[48] : (!llvm.ptr) -> !llvm.ptr, i8
    %fn = llvm.load %slot : !llvm.ptr -> !llvm.ptr
    %i = llvm.call %fn(%ctx, %axes) : !llvm.ptr, (!llvm.ptr, i64) -> i64
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def CheckLoweredToLLVMPass
    : Pass<"tp-check-lowered-to-llvm", "::mlir::ModuleOp"> {
  let summary = "Fails on any op that a lowering left outside the LLVM dialect";
  let description = [{
    The last step of `--tp-lower-to-cpu` and `--tp-lower-to-cuda`: what they
    produce is translated to LLVM IR, which takes the LLVM dialect only. An
    op of a dialect that no conversion of the lowering handles (an OpenMP or
    async op in the model, say) passes through every conversion unchanged;
    MLIR 22's translation then crashes on some of them (`omp.*`) instead of
    reporting them. This pass reports each such op kind once, at its first
    occurrence, with its dialect, and fails.

    Example:

    ```mlir
    omp.target_exit_data
    ```

    is an error: `'omp.target_exit_data' op is not lowered to the LLVM
    dialect: the lowering converts no 'omp' op (a model computes with the
    func, tensor, linalg, arith, math and tp dialects)`.
  }];
}

def EmitEntryPointsPass : Pass<"tp-emit-entry-points", "::mlir::ModuleOp"> {
  let summary = "Adds the entry points and the manifest that the runtime loads";
  let description = [{
    Runs on the LLVM dialect, after `tp-record-manifest`, bufferization with
    results as out-parameters, `tp-convert-collectives-to-runtime` and the
    conversion to LLVM with bare-pointer memrefs. For each function of the
    manifest, `@f(ctx, arg0, ..., out0, ...)` gets a wrapper with one
    signature for all programs,

    ```mlir
    llvm.func @tprt_entry_f(%ctx: !llvm.ptr, %buffers: !llvm.ptr)
    ```

    which loads each argument's and then each result's buffer pointer from
    the array `%buffers` and calls `@f`, which becomes internal: reached
    through its entry point only, LLVM inlines it there, so that a model's
    weights are not passed one by one on the stack (code generation takes
    time quadratic in that). A program too long for that (a deep model's
    driver) is cut into parts by `tp-split-entry-points`. The manifest becomes the
    zero-terminated global `@tprt_manifest`, and the `tp.mesh` ops, which it
    describes, are erased.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def SplitEntryPointsPass : Pass<"tp-split-entry-points", "::mlir::ModuleOp"> {
  let summary = "An entry point's long straight-line program runs in parts that load each buffer pointer where they use it";
  let description = [{
    Runs after `tp-emit-entry-points`. An entry point loads every buffer
    pointer of its program from the array `%buffers` and calls the program
    with all of them. For a deep model that program is a driver: a few ops
    per layer (a call to the shared layer function, its output's malloc and
    free) and 16 weights per layer, so 1,024 layers make one block of 5,000
    ops whose function takes 16,000 arguments. LLVM's code generation
    (instruction selection, register allocation) is superlinear in both,
    whether it inlines the program into the entry point or passes the
    arguments on the stack.

    When the program (internal, called only by its entry point, one block)
    has more than `max-part-ops` ops, counting each use of an argument as
    the load that replaces it, this pass cuts it into consecutive parts of at
    most that many ops: `@<f>_span<i>(ctx, buffers, live-ins...)`, internal
    and `noinline`. A part loads each argument it uses from `%buffers` right
    before the first op that uses it, rebuilds the constants it uses, and
    returns the values later parts use (a struct when there are several).
    The entry point keeps the program's `llvm.alloca`s (their memory lives
    as long as the program) and calls the parts in order; the program
    itself goes. A program that does anything with its frame other than
    constant-size `llvm.alloca`s (stack save and restore, lifetime markers,
    variadic arguments) is left as it is.

    Example (`max-part-ops=5`):

    ```mlir
    llvm.func internal @f(%ctx: !llvm.ptr, %x: !llvm.ptr, %w0: !llvm.ptr, %w1: !llvm.ptr, %out: !llvm.ptr) {
      %c = llvm.mlir.constant(64 : i64) : i64
      %a = llvm.call @malloc(%c) : (i64) -> !llvm.ptr
      llvm.call @layer(%ctx, %x, %w0, %a) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
      llvm.call @layer(%ctx, %a, %w1, %out) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
      llvm.call @free(%a) : (!llvm.ptr) -> ()
      llvm.return
    }
    llvm.func @tprt_entry_f(%ctx: !llvm.ptr, %buffers: !llvm.ptr) {
      // Four loads of %buffers[0..3], then:
      llvm.call @f(%ctx, %x, %w0, %w1, %out) : (...) -> ()
      llvm.return
    }
    ```

    becomes

    ```mlir
    llvm.func @tprt_entry_f(%ctx: !llvm.ptr, %buffers: !llvm.ptr) {
      %a = llvm.call @f_span0(%ctx, %buffers) : (!llvm.ptr, !llvm.ptr) -> !llvm.ptr
      llvm.call @f_span1(%ctx, %buffers, %a) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
      llvm.return
    }
    ```

    where `@f_span0` makes `%a` and runs the first layer, loading `%x` and
    `%w0`, and `@f_span1` loads `%w1` and `%out`, runs the second layer and
    frees `%a`. Part of the CPU lowering (not of the CUDA lowering, whose
    programs it has not been run on).
  }];
  let options = [
    Option<"maxPartOps", "max-part-ops", "unsigned", /*default=*/"1024",
           "The most ops per part, each use of an argument counted as its "
           "load (0: never split)">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def UploadConstantsPass : Pass<"tp-upload-constants", "::mlir::ModuleOp"> {
  let summary = "Constant buffers become device buffers: a fill for a splat, an upload of the host constant otherwise";
  let description = [{
    Part of `--tp-lower-to-cuda`, after `tp-convert-collectives-to-runtime`
    (whose rank context, the first function argument, it passes on) and
    before `tp-map-linalg-to-gpu`. Every `memref.get_global` of a constant
    in a function is replaced so that kernels read device memory only:
    - a splat constant by a fresh buffer (freed before each return) filled
      with `linalg.fill`, which becomes a kernel;
    - any other, in an entry point (a function of the manifest), by a view
      of the constants' buffer: a new last argument (`memref<Nxi8>`, each
      constant 64-byte aligned) that the session allocates once per rank
      (the manifest's `constants <bytes>` line). Where the function starts,
      `tprt_rt_fill_once` says whether the rank runs it for the first time;
      only then are the constants copied from the host constants, which
      stay in the program library, with `tprt_rt_upload`. Later runs upload
      nothing, and a CUDA graph of them can be captured;
    - any other in a function only calls use (an outlined layer) by a view
      of a constants' buffer it is passed as a new last argument: its own
      constants, then a 64-byte aligned block for each callee that has some.
      Each caller passes a view of its own buffer, so an entry point's
      buffer holds the constants of every function below it and uploads
      them all on the rank's first run: a model of outlined layers uploads
      nothing after it, and is captured like a flat one;
    - any other in a function whose callers are not all known (a public
      function that is no entry point, one found closing a cycle of calls)
      by a fresh buffer uploaded by every run; such a function passes its
      callees fresh buffers the same way.

    Example:

    ```mlir
    memref.global "private" constant @mask : memref<2x2xf32> = dense<[[0.0, 1.0], [1.0, 0.0]]>
    %m = memref.get_global @mask : memref<2x2xf32>
    ```

    becomes

    ```mlir
    // In an entry point, whose new last argument is %constants: memref<64xi8>
    %first = func.call @tprt_rt_fill_once(%ctx, %pconstants) : (!llvm.ptr, !llvm.ptr) -> i32
    %m = memref.view %constants[%c0][] : memref<64xi8> to memref<2x2xf32>
    scf.if %upload {
      %host = memref.get_global @mask : memref<2x2xf32>
      func.call @tprt_rt_upload(%ctx, %pm, %phost, %c16_i64) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
    }
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect", "::mlir::scf::SCFDialect"];
}

def MergeKernelModulesPass
    : Pass<"tp-merge-kernel-modules", "::mlir::ModuleOp"> {
  let summary = "Every kernel of a program in one gpu.module: one GPU image per program, one module load per rank";
  let description = [{
    Part of `--tp-lower-to-cuda`, right after `gpu-kernel-outlining` (which
    makes a gpu.module per kernel) and before the target is attached. Every
    kernel moves into one gpu.module, named after its old module (unique in
    the program); other symbols of a module (device functions, globals) keep
    their names, renamed where two collide. Each `gpu.launch_func` then
    names the merged module. `gpu-module-to-binary` compiles it into one
    image, which each rank loads once (`cuModuleLoadData`) and keeps for
    the session's life. A module that already has targets is an error: the
    merge comes before `gpu-nvvm-attach-target`.

    Example:

    ```mlir
    gpu.launch_func @f_kernel::@f_kernel ...
    gpu.launch_func @f_kernel_0::@f_kernel ...
    gpu.module @f_kernel { gpu.func @f_kernel(...) kernel { ... } }
    gpu.module @f_kernel_0 { gpu.func @f_kernel(...) kernel { ... } }
    ```

    becomes

    ```mlir
    gpu.launch_func @tp_kernels::@f_kernel ...
    gpu.launch_func @tp_kernels::@f_kernel_0 ...
    gpu.module @tp_kernels {
      gpu.func @f_kernel(...) kernel { ... }
      gpu.func @f_kernel_0(...) kernel { ... }
    }
    ```
  }];
  let options = [
    Option<"mergedName", "name", "std::string", /*default=*/"\"tp_kernels\"",
           "The merged module's name (made unique among the program's symbols)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def MarkHostReadsPass : Pass<"tp-mark-host-reads", "::mlir::ModuleOp"> {
  let summary = "Records in the manifest the entry arguments a GPU program's host code reads";
  let description = [{
    Part of `--tp-lower-to-cuda`, after `gpu-kernel-outlining`. On a GPU an
    entry point's arguments are in device memory, which the host code cannot
    read; what it reads (a `memref.load` outside every kernel, of an
    argument, of a view of one, or of the parameter of a function the
    argument is passed to: an offset computed from a 0-d integer input, as a
    decode step's position) gets a `hostread <argument>` line in its
    function's manifest entry. The runtime then passes that argument in host
    memory (a copy of its bytes) and does not capture the function in a CUDA
    graph, whose replays would keep the value read at the capture.

    Example: in

    ```mlir
    func.func @append_at(%cache: memref<6x16xf32>, %k: memref<1x16xf32>,
                         %pos: memref<i64>) {
      %p = memref.load %pos[] : memref<i64>
      %i = arith.index_cast %p : i64 to index
      %view = memref.subview %cache[%i, 0] [1, 16] [1, 1] : ...
      gpu.launch_func @tp_kernels::@copy ... args(%k : ..., %view : ...)
      return
    }
    ```

    the manifest entry of `append_at` gets `hostread 2`.
  }];
}

def ConvertLaunchesToRuntimePass
    : Pass<"tp-convert-launches-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Host code of the CUDA lowering calls the runtime: GPU images become constants, kernel launches and buffer allocations runtime calls";
  let description = [{
    Runs on the LLVM dialect, after `gpu-module-to-binary` and `gpu-to-llvm`
    and before `tp-call-runtime-through-table`. Debian's MLIR has no
    `libmlir_cuda_runtime`, and a program library reaches the runtime
    through its rank context only, so:

    - each `gpu.binary` becomes an internal constant global holding its
      image (a fatbin or cubin: the binary's single object);
    - each `gpu.launch_func` becomes `tprt_rt_launch(ctx, image, size,
      kernel name, grid, block, shared bytes, params, count)`, its operands
      stored into stack slots whose addresses `params` lists (the
      `kernelParams` of `cuLaunchKernel`), the slots made once in the
      function's entry block;
    - the buffer allocations of the memref lowering (run with generic
      allocation functions: `_mlir_memref_to_llvm_alloc`,
      `_mlir_memref_to_llvm_aligned_alloc`, `_mlir_memref_to_llvm_free`)
      become `tprt_rt_alloc` and `tprt_rt_free`: device memory, ordered on
      the rank's stream.

    `ctx` is the first argument of the enclosing function. An asynchronous
    launch, a launch in a function without a rank context, or a binary with
    other than one object is an error naming it.

    Example:

    ```mlir
    gpu.launch_func @main_kernel::@main_kernel blocks in (%c4, %c1, %c1)
        threads in (%c256, %c1, %c1) : i64 args(%p : !llvm.ptr, %n : i64)
    ```

    becomes

    ```mlir
    llvm.call @tprt_rt_launch(%ctx, %image, %c5120_i64, %name, %c4, %c1, %c1,
        %c256, %c1, %c1, %c0_i32, %params, %c2_i64) : (...) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // TP_CONVERSION_PASSES_TD
