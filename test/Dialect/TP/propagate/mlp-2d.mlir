// RUN: tp-opt %s --tp-propagate | FileCheck %s

// Tests the MLP on a 2-D mesh: "dp" splits the batch, "tp" the weights. The
// plan is Megatron's within each data-parallel group: the second matmul's
// result is partial over "tp" only and reduced over "tp" only; nothing moves
// over "dp".

tp.mesh @grid ["dp" = 2, "tp" = 4]

// CHECK-LABEL: func.func @mlp
// CHECK-SAME: tensor<512x2048xf32> {tp.sharding = #tp.sharding<@grid, [{}, {"tp"}]>}
// CHECK-SAME: tensor<2048x512xf32> {tp.sharding = #tp.sharding<@grid, [{"tp"}, {}]>}
func.func @mlp(%x: tensor<16x512xf32> {tp.sharding = #tp.sharding<@grid, [{"dp"}, {}]>},
               %w1: tensor<512x2048xf32> {tp.sharding = #tp.sharding<@grid, [{}, {"tp"}]>},
               %w2: tensor<2048x512xf32>)
    -> (tensor<16x512xf32> {tp.sharding = #tp.sharding<@grid, [{"dp"}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x2048xf32>
  %a1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x2048xf32>) -> tensor<16x2048xf32>
  // CHECK: linalg.matmul {tp.shardings = [#tp.sharding<@grid, [{"dp"}, {"tp"}]>]}
  %h = linalg.matmul ins(%x, %w1 : tensor<16x512xf32>, tensor<512x2048xf32>) outs(%a1 : tensor<16x2048xf32>) -> tensor<16x2048xf32>
  // CHECK: math.tanh {{.*}} {tp.shardings = [#tp.sharding<@grid, [{"dp"}, {"tp"}]>]}
  %g = math.tanh %h : tensor<16x2048xf32>
  %e2 = tensor.empty() : tensor<16x512xf32>
  %a2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x512xf32>) -> tensor<16x512xf32>
  // CHECK: %[[Y:.*]] = linalg.matmul {tp.shardings = [#tp.sharding<@grid, [{"dp"}, {}], partial = ["tp"]>]}
  %y = linalg.matmul ins(%g, %w2 : tensor<16x2048xf32>, tensor<2048x512xf32>) outs(%a2 : tensor<16x512xf32>) -> tensor<16x512xf32>
  // CHECK: tp.reshard %[[Y]] <@grid, [{"dp"}, {}]>
  // CHECK-NOT: tp.reshard
  return %y : tensor<16x512xf32>
}
