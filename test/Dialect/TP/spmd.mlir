// RUN: tp-opt %s --tp-spmd | FileCheck %s
// RUN: tp-opt %S/propagate/attention.mlir --tp-spmd | FileCheck %s --check-prefix=ATTN

// Tests the tp-spmd pipeline on the MLP: from the global form with one
// annotation to the per-device program with one all_reduce.

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: func.func @mlp
// CHECK-SAME: tensor<512x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}
// CHECK-SAME: tensor<512x512xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}
// CHECK-SAME: attributes {tp.spmd = @world}
// CHECK-NOT: tp.reshard
// CHECK-NOT: tp.annotate
// CHECK: %[[R:.*]] = tp.all_reduce sum %{{.*}} over @world ["tp"] {{.*}}: tensor<16x512xf32>
// CHECK-NEXT: return %[[R]]
func.func @mlp(%x: tensor<16x512xf32>,
               %w1: tensor<512x2048xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
               %w2: tensor<2048x512xf32>)
    -> (tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x2048xf32>
  %a1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x2048xf32>) -> tensor<16x2048xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x512xf32>, tensor<512x2048xf32>) outs(%a1 : tensor<16x2048xf32>) -> tensor<16x2048xf32>
  %g = math.tanh %h : tensor<16x2048xf32>
  %e2 = tensor.empty() : tensor<16x512xf32>
  %a2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x512xf32>) -> tensor<16x512xf32>
  %y = linalg.matmul ins(%g, %w2 : tensor<16x2048xf32>, tensor<2048x512xf32>) outs(%a2 : tensor<16x512xf32>) -> tensor<16x512xf32>
  return %y : tensor<16x512xf32>
}

// Attention as exports write it: the pipeline folds the merged heads first.
// ATTN-LABEL: func.func @attention
// ATTN-SAME: attributes {tp.spmd = @world}
// ATTN: linalg.softmax {{.*}} -> tensor<2x2x8x8xf32>
// ATTN-COUNT-1: tp.all_reduce
// ATTN-NOT: tp.all_
