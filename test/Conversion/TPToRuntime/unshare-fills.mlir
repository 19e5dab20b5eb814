// RUN: tp-opt %s --tp-unshare-fills | FileCheck %s

// Tests that a zero fill shared by a row sum and two GEMMs (as a model may
// write it: test/Dialect/TP/propagate/llama.mlir) becomes one fill per
// destination, each of its own empty tensor, the earliest keeping the
// original; and that a fill whose uses are in another block stays shared.

#se = affine_map<(s, e) -> (s, e)>
#s = affine_map<(s, e) -> (s)>

// CHECK-LABEL: func.func @shared
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<8x64xf32>
// CHECK: %[[Z1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<8x64xf32>)
// CHECK: linalg.matmul {{.*}} outs(%[[Z1]] : tensor<8x64xf32>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<8x64xf32>
// CHECK: %[[Z2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<8x64xf32>)
// CHECK: linalg.matmul {{.*}} outs(%[[Z2]] : tensor<8x64xf32>)
// CHECK: %[[E3:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[Z3:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E3]] : tensor<8xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[Z3]] : tensor<8xf32>)
// CHECK: %[[E4:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[Z4:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E4]] : tensor<8xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[Z4]] : tensor<8xf32>)
func.func @shared(%x: tensor<8x64xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>)
    -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %a = linalg.matmul ins(%x, %w1 : tensor<8x64xf32>, tensor<64x64xf32>) outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32>
  %b = linalg.matmul ins(%x, %w2 : tensor<8x64xf32>, tensor<64x64xf32>) outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32>
  %es = tensor.empty() : tensor<8xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<8xf32>) -> tensor<8xf32>
  %s1 = linalg.generic {indexing_maps = [#se, #s], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<8x64xf32>) outs(%zs : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %s2 = linalg.generic {indexing_maps = [#se, #s], iterator_types = ["parallel", "reduction"]}
      ins(%b : tensor<8x64xf32>) outs(%zs : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %a, %b, %s1, %s2 : tensor<8x64xf32>, tensor<8x64xf32>, tensor<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @other_block
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT: linalg.fill
func.func @other_block(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>, %c: i1) -> tensor<8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %r = scf.if %c -> tensor<8x64xf32> {
    %a = linalg.matmul ins(%x, %w : tensor<8x64xf32>, tensor<64x64xf32>) outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32>
    scf.yield %a : tensor<8x64xf32>
  } else {
    %b = linalg.matmul ins(%x, %w : tensor<8x64xf32>, tensor<64x64xf32>) outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32>
    scf.yield %b : tensor<8x64xf32>
  }
  return %r : tensor<8x64xf32>
}
