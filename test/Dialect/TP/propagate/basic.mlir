// RUN: tp-opt %s --tp-propagate --split-input-file | FileCheck %s
// RUN: tp-opt %s --tp-propagate=replicate-open-boundaries --split-input-file | FileCheck %s --check-prefix=REPL

// Tests Megatron-LM's MLP from one annotation: the first weight split by
// columns and the output replicated give the bias and hidden activation split,
// the second weight split by rows, the second matmul's result partial, and one
// reshard (the all-reduce) before the return.

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: func.func @mlp
// CHECK-SAME: %[[X:[^:]*]]: tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}
// CHECK-SAME: %[[W1:[^:]*]]: tensor<512x2048xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}
// CHECK-SAME: %[[B1:[^:]*]]: tensor<2048xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]>}
// CHECK-SAME: %[[W2:[^:]*]]: tensor<2048x512xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}
// CHECK-SAME: -> (tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>})
func.func @mlp(%x: tensor<16x512xf32>,
               %w1: tensor<512x2048xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
               %b1: tensor<2048xf32>,
               %w2: tensor<2048x512xf32>)
    -> (tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  // CHECK: tensor.empty() {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]} : tensor<16x2048xf32>
  %e1 = tensor.empty() : tensor<16x2048xf32>
  // CHECK: linalg.fill {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]}
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x2048xf32>) -> tensor<16x2048xf32>
  // CHECK: %[[H:.*]] = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]} ins(%[[X]], %[[W1]]
  %h = linalg.matmul ins(%x, %w1 : tensor<16x512xf32>, tensor<512x2048xf32>)
                     outs(%acc1 : tensor<16x2048xf32>) -> tensor<16x2048xf32>
  // CHECK: %[[HB:.*]] = linalg.generic
  // CHECK-SAME: ins(%[[H]], %[[B1]]
  // CHECK-SAME: tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]
  %hb = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%h, %b1 : tensor<16x2048xf32>, tensor<2048xf32>) outs(%e1 : tensor<16x2048xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %v = arith.addf %a, %b : f32
      %t = math.tanh %v : f32
      linalg.yield %t : f32
  } -> tensor<16x2048xf32>
  // CHECK: %[[HS:.*]] = tp.annotate %[[HB]] <@world, [{}, {"tp"}]>
  %hs = tp.annotate %hb <@world, [{}, {"tp"}]> : tensor<16x2048xf32>
  // CHECK: tensor.empty() {tp.shardings = [#tp.sharding<@world, [{}, {}]>]} : tensor<16x512xf32>
  %e2 = tensor.empty() : tensor<16x512xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x512xf32>) -> tensor<16x512xf32>
  // CHECK: %[[Y:.*]] = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]} ins(%[[HS]], %[[W2]]
  %y = linalg.matmul ins(%hs, %w2 : tensor<16x2048xf32>, tensor<2048x512xf32>)
                     outs(%acc2 : tensor<16x512xf32>) -> tensor<16x512xf32>
  // CHECK: %[[R:.*]] = tp.reshard %[[Y]] <@world, [{}, {}]> : tensor<16x512xf32>
  // CHECK-NOT: tp.reshard
  // CHECK: return %[[R]]
  return %y : tensor<16x512xf32>
}

// -----

// Tests that elementwise ops carry a sharding forward, and that a sharding
// flows backward from a constrained result to open arguments.

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @forward
// CHECK-SAME: %{{[^:]*}}: tensor<8x4xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}
// CHECK-SAME: %{{[^:]*}}: tensor<8x4xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}
// CHECK-SAME: -> (tensor<8x4xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>})
func.func @forward(%a: tensor<8x4xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
                   %b: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // CHECK: arith.addf {{.*}} {tp.shardings = [#tp.sharding<@world, [{"tp"}, {}]>]}
  %0 = arith.addf %a, %b : tensor<8x4xf32>
  // CHECK: math.exp {{.*}} {tp.shardings = [#tp.sharding<@world, [{"tp"}, {}]>]}
  %1 = math.exp %0 : tensor<8x4xf32>
  // CHECK-NOT: tp.reshard
  return %1 : tensor<8x4xf32>
}

// CHECK-LABEL: func.func @backward
// CHECK-SAME: %{{[^:]*}}: tensor<8x4xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}
func.func @backward(%a: tensor<8x4xf32>)
    -> (tensor<8x4xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}) {
  // CHECK: math.exp {{.*}} {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]}
  %0 = math.exp %a : tensor<8x4xf32>
  // CHECK-NOT: tp.reshard
  return %0 : tensor<8x4xf32>
}

// -----

// Tests that an unannotated argument is open by default (it takes the
// sharding its use wants), and fixed replicated with
// replicate-open-boundaries (a free local slice then splits it).

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @open
// CHECK-SAME: %{{[^:]*}}: tensor<8x4xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}
// CHECK-NOT: tp.reshard
// REPL-LABEL: func.func @open
// REPL-SAME: (%[[A:[^:]*]]: tensor<8x4xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}
// REPL: %[[S:.*]] = tp.reshard %[[A]] <@world, [{"tp"}, {}]>
// REPL: math.exp %[[S]] {tp.shardings = [#tp.sharding<@world, [{"tp"}, {}]>]}
func.func @open(%a: tensor<8x4xf32>)
    -> (tensor<8x4xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}) {
  %0 = math.exp %a : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
