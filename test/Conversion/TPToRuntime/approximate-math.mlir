// RUN: tp-opt %s --tp-approximate-math | FileCheck %s

// Tests that tanh and exp become polynomial arithmetic (no libm calls left
// for the loops of GELU and softmax), in linalg bodies too.

// CHECK-LABEL: func.func @gelu_and_softmax
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK: arith.mulf
// CHECK: linalg.generic
// CHECK-NOT: math.tanh
// CHECK: linalg.yield
func.func @gelu_and_softmax(%x: f32, %t: tensor<8xf32>) -> (f32, f32, tensor<8xf32>) {
  %a = math.tanh %x : f32
  %b = math.exp %x : f32
  %e = tensor.empty() : tensor<8xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]} ins(%t : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %th = math.tanh %v : f32
    linalg.yield %th : f32
  } -> tensor<8xf32>
  return %a, %b, %g : f32, f32, tensor<8xf32>
}
