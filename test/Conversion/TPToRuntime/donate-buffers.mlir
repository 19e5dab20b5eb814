// RUN: tp-opt %s --tp-donate-buffers | FileCheck %s

// A donated argument is made writable, and the chain of destinations that makes
// its result starts at it instead of at an empty tensor (through a fill here).

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[W:.*]]: tensor<8x8xf32> {bufferization.writable = true, tp.donate = 0 : i64}
// CHECK-SAME: %[[X:.*]]: tensor<8x8xf32>)
// CHECK: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[W]] : tensor<8x8xf32>)
// CHECK: linalg.matmul ins(%[[X]], %[[W]] : tensor<8x8xf32>, tensor<8x8xf32>) outs(%[[FILL]] : tensor<8x8xf32>)
func.func @step(%w: tensor<8x8xf32> {tp.donate = 0 : i64}, %x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// An insert into the donated argument already starts there: left as it is.
// CHECK-LABEL: func.func @append(
// CHECK-SAME: %[[C:.*]]: tensor<4x8xf32> {bufferization.writable = true, tp.donate = 0 : i64}
// CHECK: tensor.insert_slice %{{.*}} into %[[C]][1, 0] [1, 8] [1, 1]
func.func @append(%c: tensor<4x8xf32> {tp.donate = 0 : i64}, %k: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %r = tensor.insert_slice %k into %c[1, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// An empty tensor of another type is not the argument's to take.
// CHECK-LABEL: func.func @other(
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<8xf32>)
func.func @other(%w: tensor<8x8xf32> {tp.donate = 0 : i64}) -> (tensor<8x8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %v = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %w, %v : tensor<8x8xf32>, tensor<8xf32>
}
