//===- Passes.td - tp dialect passes -----------------------*- tablegen -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_TRANSFORMS_PASSES_TD
#define TP_DIALECT_TP_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PrintShardingRulesPass : Pass<"tp-print-sharding-rules", "::mlir::ModuleOp"> {
  let summary = "Reports the sharding rule of every op as a remark";
  let description = [{
    For every op that has a sharding rule, emits a remark with the rule in
    einsum-like form: each operand's and result's dimensions as products of
    factors, then each factor's size and, unless parallel, its kind. Ops
    without a rule that touch tensors get a remark saying so. It changes
    nothing; it shows what propagation and partitioning will read.

    Example: for

    ```mlir
    %r = linalg.matmul ins(%a, %b : tensor<16x512xf32>, tensor<512x2048xf32>)
                       outs(%c : tensor<16x2048xf32>) -> tensor<16x2048xf32>
    ```

    it reports

    ```
    remark: sharding rule: ([i, k], [k, j], [i, j]) -> ([i, j]) {i=16, j=2048, k=512 reduction}
    ```
  }];
}

def FoldReshapesPass : Pass<"tp-fold-reshapes", "::mlir::ModuleOp"> {
  let summary = "Folds reshapes into the linalg ops around them so that merged dimensions keep their own shardings";
  let description = [{
    Exported attention merges heads into the batch before its contractions
    (`[B, H, S, D]` -> `[B*H, S, D]` for `linalg.batch_matmul`). With the
    heads split and the batch not, the merged dimension would be split in
    strided pieces, which a block sharding cannot express, and propagation
    would gather the heads. This pass removes such merges: it folds
    `tensor.collapse_shape` / `tensor.expand_shape` into the linalg ops that
    consume or produce them by expanding the ops' iteration spaces (upstream
    fusion by expansion; a named op becomes a `linalg.generic` with one loop
    per original dimension), moves `linalg.softmax` across reshapes that do
    not touch its normalized dimension, and cancels the reshape pairs left
    back to back. The program computes the same values; only intermediate
    shapes change. `--tp-spmd` runs it before propagation.

    One merge stays: a collapse that merges a dimension its producer
    broadcasts (grouped-query attention's repeat_kv, `[B, KV, R, S, D]` ->
    `[B, KV*R, S, D]`). Folded, it would regroup the heads of the scores,
    the queries and the output projection as `[KV, R]`, which no block
    sharding splits over more devices than there are KV heads; kept, the
    repeated K and V are sliced by heads (for free where the KV projections
    are replicated) and the query heads stay one dimension.

    A function argument that one of its users reads expanded (a model's input
    `[B*S, E]` added to the residual stream `[B, S, E]`) is read expanded by
    its other linalg users too, through one `tensor.expand_shape` at the top
    of the body. The first layer of a model then computes in the shapes of the
    later layers, which read the residual stream as the layer before made it,
    and `--tp-outline-repeated-layers` compiles all of them as one function.

    Example:

    ```mlir
    %q3 = tensor.collapse_shape %q4 [[0, 1], [2], [3]] : tensor<2x4x8x16xf32> into tensor<8x8x16xf32>
    %k3 = tensor.collapse_shape %k4 [[0, 1], [2], [3]] : tensor<2x4x16x8xf32> into tensor<8x16x8xf32>
    %s = linalg.batch_matmul ins(%q3, %k3 : ...) outs(%acc : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
    ```

    becomes a `linalg.generic` over `(b, h, i, j, d)` reading `%q4` and
    `%k4` directly, with `b` and `h` separate batch loops, whose result is
    collapsed only where a user still needs the merged shape.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PropagatePass : Pass<"tp-propagate", "::mlir::ModuleOp"> {
  let summary = "Completes the shardings of every tensor value in the module";
  let description = [{
    Starting from the constraints (`tp.sharding` on function arguments and
    results, `tp.annotate`, `tp.reshard`), gives every tensor value a
    sharding, propagating forward and backward through each op's sharding
    rule until nothing changes. Constraints are never changed. At each op,
    the tensors' shardings are projected onto the op's factors and a decider
    chooses each factor's mesh axes by a communication cost model (bytes each
    device sends, ring formulas, against redundant work). Then, as
    `--tp-insert-reshards` does, a `tp.reshard` is inserted on every operand
    that arrives in another sharding than its op needs. Splitting a
    reduction factor leaves the op's results partial; a partial value flows
    on through ops linear in it (reshapes, transposes, sums of partials,
    scaling by replicated values, a matmul with one partial operand) and is
    reduced before any other use.

    The result: every op yielding tensors carries `tp.shardings`, open
    function arguments and results get their chosen `tp.sharding`, and
    `tp.reshard` marks every place where data must move. Ops without a rule
    are replicated, with a remark naming them. Calls to functions defined in
    the module are inlined first, so shardings flow through callees (their
    argument and result constraints become `tp.annotate` at the call; a call
    cycle is an error). Values that carry no data (`tensor.empty`, fills of
    it, splat constants) are cloned in whatever sharding each user needs
    rather than resharded. The same input always gives the same output.

    With `auto-plan`, the fixed point gives way to a global search: every
    open argument's sharding and every op's factor split are chosen at once,
    minimising the modelled time of one step on one device (GEMM flops at
    the device's rate, memory-bound ops at its bandwidth, each reshard's
    collectives as latency + bus bytes / bandwidth, from `cost-model`) with
    the bytes per device within `memory-per-device` (the arguments, and the
    intermediates live where the program in order holds most, each at its
    planned size): an integer
    programme solved exactly (a small one by branch and bound over Clp's
    relaxations, a larger one by COIN-OR CBC). Constraints stay constraints;
    an open result named `grad.X` (`tp.name`, as the importer names a
    training step's gradients) of the type of an argument named `X` is laid
    out as that argument, other open results are returned replicated. From no annotation at all, a
    budget below the replicated weights gives Megatron-LM's plan where its
    collectives are the cheapest that fit; a roomy budget keeps small models
    whole (a collective's latency outweighs their compute) or splits the
    tokens of large ones. A budget no plan fits is an error naming the least
    any plan needs. An op linear in a pending sum may carry it on (its
    strategies include reading such operands pending, a replicated addend
    becoming one term for free), so where each sum is reduced is part of the
    search, and a value read by several ops pays each reshard once.

    With `search` (and no auto-plan; on in `--tp-spmd`), the fixed point runs
    first and the same search then chooses every op's split and where each
    pending sum is reduced, with the arguments and results as propagated: a
    sum whose terms a hand-written backward adds to a replicated gradient one
    at a time is reduced once instead of once per term. The fixed point's own
    plan (its splits, and where reshard insertion would reduce each sum) is
    costed in the same model, and the search's plan replaces it only when
    two rules allow it (`judgeSearch`, AutoPlan.h). The user's split is their
    memory budget: a plan that holds more bytes per device at its peak (the
    arguments, the values at their planned sizes, and each reshard's result
    from its source to its last reader, such as a weight gathered whole)
    than the fixed point's is not adopted unless `memory-per-device` allows
    it; where the first plan found does, the search plans again within the
    fixed point's bytes. And it must be modelled faster by more than the
    model's error against measured steps (`kSearchAdoptionMargin`, 30%).
    The annotations' plan stays otherwise, or where the model cannot express
    it. The margin is also the search's cutoff: a plan that is not faster by
    more is of no use, so the solve stops at the first proof that none is
    (the relaxation's bound, most often at the root) and records nothing.
    Otherwise what the search found and the rule that decided are recorded
    as `tp.plan` (mode "search") for `--tp-report`.
    `search` does not plan sequence parallelism: asking for both is an error
    (`--tp-spmd` runs the search only without `sequence-parallel`).

    Example (Megatron-LM's MLP from one annotation):

    ```mlir
    tp.mesh @world ["tp" = 4]
    func.func @mlp(%x: tensor<16x512xf32>,
                   %w1: tensor<512x2048xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"} ]>},
                   %w2: tensor<2048x512xf32>)
        -> (tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {} ]>}) {
      %h = linalg.matmul ins(%x, %w1 : ...) outs(...) -> tensor<16x2048xf32>
      %y = linalg.matmul ins(%h, %w2 : ...) outs(...) -> tensor<16x512xf32>
      return %y : tensor<16x512xf32>
    }
    ```

    becomes

    ```mlir
    func.func @mlp(%x: tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {} ]>},
                   %w1: ... {tp.sharding = #tp.sharding<@world, [{}, {"tp"} ]>},
                   %w2: ... {tp.sharding = #tp.sharding<@world, [{"tp"}, {} ]>}) ... {
      %h = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {"tp"} ]>]} ...
      %y = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {} ], partial = ["tp"]>]} ...
      %r = tp.reshard %y <@world, [{}, {} ]> : tensor<16x512xf32>
      return %r : tensor<16x512xf32>
    }
    ```
  }];
  let options = [
    Option<"replicateOpenBoundaries", "replicate-open-boundaries", "bool",
           /*default=*/"false",
           "Unannotated function arguments and results start replicated "
           "(fixed) instead of open">,
    Option<"recordOrigins", "record-origins", "bool", /*default=*/"false",
           "Record, for every value, the constraint its sharding came from "
           "(`tp.origins` on ops, `tp.origin` on function arguments)">,
    Option<"sequenceParallel", "sequence-parallel", "bool", /*default=*/"false",
           "Megatron-LM's sequence parallelism: where a pending sum would be "
           "reduced for a token-wise op (bias, residual, norm), split the "
           "tokens over the sum's axes instead, so the all-reduce becomes a "
           "reduce-scatter and the tokens are all-gathered only where a "
           "split weight needs them whole">,
    Option<"autoPlan", "auto-plan", "bool", /*default=*/"false",
           "Choose the sharding of every open argument and the split of "
           "every op at once, minimising the modelled step time of "
           "`cost-model` under `memory-per-device` (an integer programme "
           "solved by CBC); constraints stay as they are, an open result "
           "named grad.X is laid out as the argument named X, other open "
           "results are returned replicated">,
    Option<"memoryPerDevice", "memory-per-device", "std::string",
           /*default=*/"\"\"",
           "With auto-plan or search: bytes one device may hold, the "
           "function's arguments and the activations live at its peak (a "
           "number with an optional unit: 80GB, 24GiB, 1e9); empty: no "
           "budget (search: the fixed point's plan's peak is the budget)">,
    Option<"costModel", "cost-model", "std::string", /*default=*/"\"h200\"",
           "With auto-plan: the machine model, `h200` (built in: one H200 of "
           "an NVLink node) or a machine-model file measured by `tprt-bench --calibrate FILE` (docs/cost-model.md)">,
    Option<"explain", "explain", "bool", /*default=*/"true",
           "With auto-plan: also find each weight's runner-up (the best plan "
           "that splits it otherwise: one more solve per weight) for tp.plan "
           "and --tp-report; tp-compile turns it off">,
    Option<"search", "search", "bool", /*default=*/"false",
           "Without auto-plan: after the fixed point, choose every op's split "
           "and where each pending sum is reduced by the same global search "
           "over `cost-model` (arguments and results stay as propagated), "
           "adopted where it holds no more per device than the fixed point's "
           "plan (or `memory-per-device` allows it) and is modelled more than "
           "30% faster (the model's error): a sum whose terms arrive one by "
           "one is reduced once (on in --tp-spmd)">
  ];
}

def InsertReshardsPass : Pass<"tp-insert-reshards", "::mlir::ModuleOp"> {
  let summary = "Inserts tp.reshard where an op needs an operand in another sharding";
  let description = [{
    The last step of `--tp-propagate`, also runnable on its own over shardings
    written by hand or by another tool. Every tensor value must carry the
    sharding propagation gave it (`tp.sharding` on function arguments,
    `tp.shardings` on ops; a value without one counts as replicated). In
    program order, each op with a sharding rule decides how its factors are
    split from its operands' final shardings and its results' given ones; its
    results take that decision, and an operand whose sharding differs from
    what the op needs reads a `tp.reshard` of it (one per value and target
    sharding). Values that carry no data (`tensor.empty`, fills of it, splat
    constants) are cloned in the needed sharding instead. A pending sum flows
    on through ops linear in it; any other use reduces it first. Ops without a
    rule have their tensors replicated, with a remark. A sharding over another
    mesh than the function's is an error.

    Example: the second matmul splits its contraction over `"tp"` as its
    operands are, so its result is pending; the function's result must be
    replicated, which a reshard makes:

    ```mlir
    %y = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {} ], partial = ["tp"]>] }
           ins(%h, %w2 : ...) outs(%acc : ...) -> tensor<16x512xf32>
    return %y : tensor<16x512xf32>
    ```

    becomes

    ```mlir
    %y = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {} ], partial = ["tp"]>] } ...
    %r = tp.reshard %y <@world, [{}, {} ]> : tensor<16x512xf32>
    return %r : tensor<16x512xf32>
    ```
  }];
  let options = [
    Option<"recordOrigins", "record-origins", "bool", /*default=*/"false",
           "Record, for every op result, the constraint its sharding came "
           "from (`tp.origins`), reading those propagation recorded">,
    Option<"sequenceParallel", "sequence-parallel", "bool", /*default=*/"false",
           "Where a pending sum would be reduced for a token-wise op, split "
           "the tokens over the sum's axes instead (see --tp-propagate)">
  ];
}

def PartitionPass : Pass<"tp-partition", "::mlir::ModuleOp"> {
  let summary = "Rewrites a propagated module into the per-device (SPMD) program";
  let description = [{
    Every function with propagated shardings becomes the program one device
    runs: argument, result and value types become per-device shard types,
    ops compute on their shards (linalg ops keep their structure; empties,
    fills and constants are made local; a reduction over a split factor
    yields a local partial sum), and every `tp.reshard` becomes the
    collectives that move the data (see `Resharding.h`: all_reduce,
    reduce_scatter, all_gather, all_to_all, free all_slice). `tp.annotate`
    ops, satisfied by construction, disappear. The function gets
    `tp.spmd = @mesh` and keeps its arguments' and results' global
    shardings for the runtime.

    A reduction over a split factor whose init is not the reduction's
    identity (a bias accumulated into the output, say) keeps the init on the
    first device of the group and zeros elsewhere, so the sum counts it once.
    A `linalg.index` over a split loop is offset by the device's position.

    Example:

    ```mlir
    %y = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {} ], partial = ["tp"]>]}
           ins(%h, %w2 : tensor<16x2048xf32>, tensor<2048x512xf32>) ...
    %r = tp.reshard %y <@world, [{}, {} ]> : tensor<16x512xf32>
    ```

    becomes, on each of 4 devices,

    ```mlir
    %y = linalg.matmul ins(%h, %w2 : tensor<16x512xf32>, tensor<512x512xf32>) ...
    %r = tp.all_reduce sum %y over @world ["tp"] : tensor<16x512xf32>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def OptimizeCollectivesPass : Pass<"tp-optimize-collectives"> {
  let summary = "Folds, merges and removes collectives";
  let description = [{
    Rewrites local-form collectives into fewer, cheaper ones:
    - `all_reduce` then `all_slice` over the same axes -> one
      `reduce_scatter` on the sliced dimension (when the slice is the
      all_reduce's only use);
    - `all_gather` then `all_slice` over the same axes and dimension ->
      nothing (the slice gets back the gather's input);
    - `all_slice` then `all_gather` over the same axes and dimension of a
      value that was replicated -> that value;
    - two identical collectives of one value -> one;
    - a collective over a group of one device (its axes all of size 1: a
      plan for one device) -> its operand;
    - a collective whose result is unused -> gone.

    Example:

    ```mlir
    %a = tp.all_reduce sum %x over @world ["tp"] : tensor<16x512xf32>
    %b = tp.all_slice %a over @world ["tp"] dim 0 : tensor<16x512xf32> -> tensor<4x512xf32>
    ```

    becomes

    ```mlir
    %b = tp.reduce_scatter sum %x over @world ["tp"] dim 0 : tensor<16x512xf32> -> tensor<4x512xf32>
    ```
  }];
}

def CanonicalizePass : Pass<"tp-canonicalize"> {
  let summary = "One sweep of canonicalization that says when it changed nothing";
  let description = [{
    Applies every loaded dialect's and registered op's canonicalization
    patterns and folders once over the IR (one sweep of the greedy driver, no
    region simplification: the last step of `--tp-spmd`, whose partitioned
    programs are single-block and nearly clean). When the sweep changes
    nothing, the pass says so (all analyses preserved), and the pass manager
    skips the verification it would otherwise run after it: on a 1,024-layer
    MLP stack that verification is as long as the sweep itself. upstream's
    `--canonicalize` always counts as a change.

    The sweep leaves the scalar bodies of linalg ops as they are:
    partitioning copies them unchanged (it only offsets a split loop's
    `linalg.index`), and the lowering's own canonicalizer folds them.
    Constants are still unified and hoisted everywhere first, bodies included,
    as the greedy driver does over a whole region; the other ops go to the
    driver in the order it would visit them. Trying the folders and patterns
    of every body op was half of the sweep (`bench/bench_upstream.py`'s
    64-layer stack: 10.2M -> 5.3M instructions).

    The patterns are upstream's, with one tried more narrowly: linalg's
    InferStaticShapeOfOperands, which gives a linalg op's dynamically sized
    operand the static size another operand implies, runs only on ops with
    a dynamically shaped operand, the only ones it can change. On any other
    op it rebuilt every operand's type only to fail: half of the sweep on a
    statically shaped model.

    Example: the unused constant and the constant operand of the body go,

    ```mlir
    %c = arith.constant 2.0 : f32
    %unused = arith.constant 0.25 : f32
    %r = linalg.generic {...} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %c : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    ```

    and a second run over the result changes nothing (statistic
    `changed-sweeps` 0).
  }];
  let statistics = [
    Statistic<"changedSweeps", "changed-sweeps",
              "Sweeps that changed the IR (0 or 1)">
  ];
}

def ReportPass : Pass<"tp-report", "::mlir::ModuleOp"> {
  let summary = "Prints the plan: shardings, collectives with their bytes, memory";
  let description = [{
    For every function with a mesh, prints:
    - every tensor value with its sharding and per-device bytes (an
      argument with a `tp.name`, a parameter's name in the imported module,
      with it: `%arg3 (h.0.mlp.c_fc.weight)`);
    - every collective: kind, reduction, axes, group size, the per-device
      tensor, the bytes each device sends and the ring formula used
      (`2(n-1)/n*S` all_reduce, `(n-1)/n*S` all_gather and reduce_scatter,
      `(n-1)/n^2*S` all_to_all with S the whole group's tensor, `0`
      all_slice); in global form, the collectives each `tp.reshard` will
      become;
    - totals per kind;
    - per-device memory: the arguments' bytes, the peak bytes of tensors live
      at once (program order), and the largest tensors;
    - for a function planned by auto-plan (its `tp.plan`): the cost model,
      the budget, the modelled step per device (compute, communication), and
      for each weight its split (replicated, column-parallel, row-parallel,
      ...; "layer xN" for a repeated layer's) and its runner-up: the best plan
      that splits it otherwise, within the budget when one fits, with its
      modelled time (and the difference) and bytes, "(over budget)" when no
      other split fits; for one whose plan the search adopted, the modelled
      step of its plan and of the fixed point's it replaced.
    The module is not changed. Text by default; `format=json` prints one
    JSON object for tools. The report goes to stderr, or to `output`.

    Example: `tp-opt model.mlir --tp-spmd --tp-report -o /dev/null` prints

    ```
    tp-report @mlp on @world ["tp" = 4] (4 devices)
      collectives:
        all_reduce sum over ["tp"] (n=4) tensor<16x512xf32>: 49152 B = 2(n-1)/n*S, S = 32768 B
      totals:
        all_reduce: 1, 49152 B
        all: 1, 49152 B per device
    ```
  }];
  let options = [
    Option<"format", "format", "std::string", /*default=*/"\"text\"",
           "Output format: text or json">,
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "Write the report to this file ('-' for stdout) instead of stderr">
  ];
}

def StripShardingsPass : Pass<"tp-strip-shardings", "::mlir::ModuleOp"> {
  let summary = "Removes every sharding constraint and mesh: the unsharded program";
  let description = [{
    The reference that `tp-run --verify` compares a sharded run against: the
    same model in global form, without its parallelism. `tp.annotate` and
    `tp.reshard` are replaced by their operands, `tp.sharding`,
    `tp.shardings` and `tp.origins` attributes are dropped and `tp.mesh` ops
    erased; what is left is plain upstream IR that runs on one device. A
    module in local form (a function with `tp.spmd`) cannot be unsharded and
    is an error.

    Example:

    ```mlir
    tp.mesh @world ["tp" = 4]
    func.func @f(%w: tensor<512x2048xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"} ]>}) {
      %h = tp.annotate %w <@world, [{}, {"tp"} ]> : tensor<512x2048xf32>
      ...
    ```

    becomes

    ```mlir
    func.func @f(%w: tensor<512x2048xf32>) {
      ...  // %h replaced by %w
    ```
  }];
}

def OutlineRepeatedLayersPass
    : Pass<"tp-outline-repeated-layers", "::mlir::ModuleOp"> {
  let summary = "Outlines structurally identical runs of ops (a model's layers) into one function called once per layer";
  let description = [{
    A transformer's layers are one computation on different weights; in one
    flat function the code generator sees each of them again, and its time
    grows with the depth (and worse: LLVM is superlinear in a function's
    size). This pass finds, in each function with a body, the longest run of
    consecutive repeats of one sequence of ops, `N` times `L` ops with
    `N >= 2` and `L >= min-layer-ops`, moves one repeat into a private
    function (`@<func>_layer<i>`) and replaces every repeat by a `func.call`,
    then looks again in what is left (a training step has a forward and a
    backward layer), up to `max-layers` functions per function. A function
    with a donated argument (`tp.donate`) stays whole: its result is written
    in the argument's buffer by a chain of in-place ops that a call would
    cut. Then, with
    `max-function-ops=K`, every function (the caller, a long layer) with
    more than K ops, not counting its calls (a driver calling 96 layers is
    straight-line code for LLVM), is cut into consecutive parts of at most K
    ops,
    `@<func>_part<i>`, each called once: what is left without repeats (a
    model whose layers all differ) reaches code generation in bounded
    pieces, which keeps LLVM linear in the model's size. The functions made
    are `noinline` (LLVM's `passthrough`) so that LLVM does not put them
    back together. Last, with `straight-line-calls=C`, a function making
    more than C calls (the driver of a deep model, with its embedding and
    head around the layers) has each run of ops between its calls that
    will lower to loops moved into a part: what is left is straight-line
    code, which `tp-split-entry-points` cuts into bounded pieces for code
    generation. A run of views and reshapes only (`tensor.expand_shape`,
    `tensor.collapse_shape`, `tensor.extract_slice`, `tensor.cast`,
    `tensor.empty`) stays.

    Two repeats are the same when their ops are the same op for op: name,
    attributes and properties, result types, region bodies; each operand
    either comes from the same op of the same repeat, from an equal
    constant-like op (`arith.constant`, `tensor.empty`: cloned into the
    layer function), or from outside the repeat (a weight, the previous
    layer's output), used in the same places in every repeat. Those become
    the layer function's arguments, and the values a repeat defines and
    something after it uses its results. The layer function keeps the
    caller's `tp.spmd`. Runs on local (or unsharded) form, before
    bufferization; the CPU and CUDA lowerings run it first (not their
    `reference` variants). A function without repeats is left as it is.

    Example (two layers, each `tanh(x * w)`):

    ```mlir
    func.func @f(%x: tensor<8xf32>, %w0: tensor<8xf32>, %w1: tensor<8xf32>) -> tensor<8xf32> {
      %a = arith.mulf %x, %w0 : tensor<8xf32>
      %b = math.tanh %a : tensor<8xf32>
      %c = arith.mulf %b, %w1 : tensor<8xf32>
      %d = math.tanh %c : tensor<8xf32>
      return %d : tensor<8xf32>
    }
    ```

    becomes (with `min-layer-ops=2`)

    ```mlir
    func.func @f(%x: tensor<8xf32>, %w0: tensor<8xf32>, %w1: tensor<8xf32>) -> tensor<8xf32> {
      %0 = call @f_layer0(%x, %w0) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
      %1 = call @f_layer0(%0, %w1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
      return %1 : tensor<8xf32>
    }
    func.func private @f_layer0(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> tensor<8xf32>
        attributes {passthrough = ["noinline"]} {
      %0 = arith.mulf %arg0, %arg1 : tensor<8xf32>
      %1 = math.tanh %0 : tensor<8xf32>
      return %1 : tensor<8xf32>
    }
    ```
  }];
  let options = [
    Option<"minLayerOps", "min-layer-ops", "unsigned", /*default=*/"4",
           "The fewest ops (not counting constants) a repeat must have to be outlined">,
    Option<"maxLayers", "max-layers", "unsigned", /*default=*/"8",
           "The most layer functions made from one function">,
    Option<"maxFunctionOps", "max-function-ops", "unsigned", /*default=*/"0",
           "Then cut every function longer than this many ops (not counting "
           "constants and calls) into parts of at most as many, each called once; 0: "
           "never">,
    Option<"straightLineCalls", "straight-line-calls", "unsigned",
           /*default=*/"0",
           "Last, a function making more calls than this (a deep model's "
           "driver) keeps only straight-line code: each run of its other ops "
           "that lowers to loops becomes a part; 0: never">
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

#endif // TP_DIALECT_TP_TRANSFORMS_PASSES_TD
