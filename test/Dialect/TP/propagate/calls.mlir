// RUN: tp-opt %s --tp-propagate | FileCheck %s

// Tests that shardings flow through calls: the call is inlined, the callee's
// argument constraint becomes an annotation at the call site, and the
// caller's open argument and the op after the call follow it.

tp.mesh @world ["tp" = 2]

func.func private @project(%x: tensor<8x16xf32>,
                           %w: tensor<16x32xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>})
    -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %a = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x32xf32>) outs(%a : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %h : tensor<8x32xf32>
}

// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[W:[^:]*]]: tensor<16x32xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}
// CHECK-NOT: func.call
// CHECK: %[[A:.*]] = tp.annotate %[[W]] <@world, [{}, {"tp"}]>
// CHECK: linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]} ins(%{{.*}}, %[[A]]
// CHECK: math.tanh {{.*}} {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]}
// CHECK-NOT: tp.reshard
func.func @main(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %h = func.call @project(%x, %w) : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %t = math.tanh %h : tensor<8x32xf32>
  return %t : tensor<8x32xf32>
}
