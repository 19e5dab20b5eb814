// RUN: tp-opt %s --tp-propagate=record-origins | FileCheck %s

// Tests that record-origins tells, for every value, the constraint its
// sharding came from: arguments, annotations, result constraints, and the
// default for values nothing reached.

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @origins
// CHECK-SAME: tp.origin = "default (replicated)"
// CHECK-SAME: tp.origin = "argument #1 of @origins"
// CHECK-SAME: tp.origin = "result #0 of @origins"
// CHECK: tensor.empty() {tp.origins = ["argument #1 of @origins"]
// CHECK: linalg.fill {tp.origins = ["argument #1 of @origins"]
func.func @origins(%x: tensor<8x16xf32>,
                   %w: tensor<16x32xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                   %b: tensor<8x32xf32>)
    -> (tensor<8x32xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  // CHECK: linalg.matmul {tp.origins = ["argument #1 of @origins"]
  %h = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x32xf32>) outs(%acc : tensor<8x32xf32>) -> tensor<8x32xf32>
  // CHECK: tp.annotate
  %a = tp.annotate %h <@world, [{}, {"tp"}]> : tensor<8x32xf32>
  // CHECK: math.exp {{.*}} {tp.origins = ["tp.annotate at {{.*}}origins.mlir:[[@LINE-1]]:8"]
  %y = math.exp %a : tensor<8x32xf32>
  // CHECK: math.tanh {{.*}} {tp.origins = ["result #0 of @origins"]
  %z = math.tanh %b : tensor<8x32xf32>
  return %z : tensor<8x32xf32>
}
