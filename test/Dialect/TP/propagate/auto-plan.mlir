// The automatic planner (--tp-propagate="auto-plan"): nothing is annotated;
// the plan comes from the machine model and the memory budget.
//
// A small MLP on the built-in H200 model: with room for both weights on every
// device, a collective (12 us of latency) costs more than computing the whole
// MLP twice over (1.3 us), so nothing is split; with a budget below the
// weights' size, Megatron-LM's plan (column-split w1, row-split w2, one
// all-reduce of the output) is the fastest that fits.
// RUN: tp-opt %s --tp-propagate="auto-plan memory-per-device=100MB" | FileCheck %s --check-prefix=ROOMY
// RUN: tp-opt %s --tp-propagate="auto-plan memory-per-device=3MB" | FileCheck %s --check-prefix=TIGHT
// The same plans from --tp-spmd's options, partitioned: the tight budget's
// program has one all_reduce and no other collective.
// RUN: tp-opt %s --tp-spmd="auto-plan memory-per-device=3MB" | FileCheck %s --check-prefix=SPMD
// --tp-report explains the plan: the modelled step, and per weight its split
// and the best plan that splits it otherwise (the runner-up), with what it
// would cost; the plan survives partitioning as `tp.plan`.
// RUN: tp-opt %s --tp-spmd="auto-plan memory-per-device=3MB" --tp-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// REPORT: plan (auto-plan, cost model h200, 3000000 B per device):
// REPORT-NEXT: modelled step per device: 13.97 us (compute 0.34 us, communication 13.64 us); arguments 2129920 B, activations at the peak 65536 B
// REPORT-NEXT: %arg0 : tensor<16x512xf32> replicated #tp.sharding<@world, [{}, {}]>
// (%arg0's two splits tie exactly, in time and bytes: either is its runner-up.)
// REPORT-NEXT: runner-up {{(column|row)}}-parallel #tp.sharding<@world, [{{.*}}]>: 25.54 us modelled (+11.57 us), 2170880 B per device
// REPORT-NEXT: %arg1 : tensor<512x2048xf32> column-parallel #tp.sharding<@world, [{}, {"tp"}]>
// REPORT-NEXT: runner-up row-parallel #tp.sharding<@world, [{"tp"}, {}]>: 25.76 us modelled (+11.79 us), 2269184 B per device
// REPORT-NEXT: %arg2 : tensor<2048x512xf32> row-parallel #tp.sharding<@world, [{"tp"}, {}]>
// REPORT-NEXT: runner-up column-parallel #tp.sharding<@world, [{}, {"tp"}]>: 23.70 us modelled (+9.72 us), 2170880 B per device
// The planner proves small plans by its own branch and bound over Clp's
// relaxations and hands larger ones to CBC: with CBC alone
// (--tp-auto-plan-relaxations=0) the plans and their costs are the same.
// RUN: tp-opt %s --tp-propagate="auto-plan memory-per-device=100MB" --tp-auto-plan-relaxations=0 | FileCheck %s --check-prefix=ROOMY
// RUN: tp-opt %s --tp-propagate="auto-plan memory-per-device=3MB" --tp-auto-plan-relaxations=0 | FileCheck %s --check-prefix=TIGHT
// RUN: tp-opt %s --tp-spmd="auto-plan memory-per-device=3MB" --tp-auto-plan-relaxations=0 --tp-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// explain=false (as tp-compile plans) skips the runner-ups' solves: the same
// plan, each weight's split without a runner-up.
// RUN: tp-opt %s --tp-spmd="auto-plan memory-per-device=3MB explain=false" --tp-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNEXPLAINED
// UNEXPLAINED: modelled step per device: 13.97 us
// UNEXPLAINED-NEXT: %arg0 : tensor<16x512xf32> replicated
// UNEXPLAINED-NEXT: %arg1 : tensor<512x2048xf32> column-parallel
// UNEXPLAINED-NEXT: %arg2 : tensor<2048x512xf32> row-parallel
// UNEXPLAINED-NOT: runner-up
// With room for everything, the replicated plan wins and every runner-up
// is slower (a collective's latency).
// RUN: tp-opt %s --tp-propagate="auto-plan memory-per-device=100MB" --tp-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=ROOMY-REPORT
// ROOMY-REPORT: modelled step per device: 1.34 us (compute 1.34 us, communication 0.00 us); arguments 8421376 B, activations at the peak 163840 B
// ROOMY-REPORT: %arg1 : tensor<512x2048xf32> replicated
// ROOMY-REPORT-NEXT: runner-up {{.*}} us modelled (+{{[1-9][0-9.]*}} us)
tp.mesh @world ["tp" = 4]

// ROOMY-LABEL: func.func @small_mlp
// ROOMY-SAME: tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}
// ROOMY-SAME: tensor<512x2048xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}
// ROOMY-SAME: tensor<2048x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}
// ROOMY-SAME: -> (tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>})
// ROOMY-NOT: tp.reshard

// TIGHT-LABEL: func.func @small_mlp
// TIGHT-SAME: tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}
// TIGHT-SAME: tensor<512x2048xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}
// TIGHT-SAME: tensor<2048x512xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}
// TIGHT-SAME: -> (tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>})
// TIGHT: linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]}
// TIGHT: %[[Y:.*]] = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]}
// TIGHT: %[[R:.*]] = tp.reshard %[[Y]] <@world, [{}, {}]>
// TIGHT: return %[[R]]

// SPMD-LABEL: func.func @small_mlp
// SPMD-SAME: tensor<512x512xf32>
// SPMD-SAME: tensor<512x512xf32>
// SPMD-NOT: tp.all_gather
// SPMD: tp.all_reduce sum
// SPMD-NOT: tp.all_
// SPMD: return
func.func @small_mlp(%x: tensor<16x512xf32>, %w1: tensor<512x2048xf32>,
                     %w2: tensor<2048x512xf32>) -> tensor<16x512xf32> {
  %c0 = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x2048xf32>
  %f1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<16x2048xf32>) -> tensor<16x2048xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x512xf32>, tensor<512x2048xf32>)
                     outs(%f1 : tensor<16x2048xf32>) -> tensor<16x2048xf32>
  %e2 = tensor.empty() : tensor<16x512xf32>
  %f2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<16x512xf32>) -> tensor<16x512xf32>
  %y = linalg.matmul ins(%h, %w2 : tensor<16x2048xf32>, tensor<2048x512xf32>)
                     outs(%f2 : tensor<16x512xf32>) -> tensor<16x512xf32>
  return %y : tensor<16x512xf32>
}

