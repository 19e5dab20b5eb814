// RUN: tp-opt %s --tp-fuse-elementwise | FileCheck %s

// Tests that a chain of elementwise ops (bias add, tanh, residual add)
// becomes one loop nest, and that the matmul producing its input stays a
// matmul (contractions are not fused into, nor into anything).

#map = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>

// CHECK-LABEL: func.func @chain
// CHECK: linalg.matmul
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>)
// CHECK: arith.addf
// CHECK: math.tanh
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
func.func @chain(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>,
                 %r: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = math.tanh %v : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %o = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%t, %r : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %rv: f32, %o2: f32):
    %s = arith.addf %v, %rv : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
