// RUN: tp-opt %s --tp-fold-reshapes --split-input-file | FileCheck %s

// Tests that a batch_matmul over heads merged into the batch becomes a
// generic with separate batch and head loops that reads the unmerged inputs.

// CHECK-LABEL: func.func @merged_heads
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[K:.*]]: tensor<2x4x16x8xf32>)
// CHECK-NOT: tensor.collapse_shape %[[Q]]
// CHECK: %[[S:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[Q]], %[[K]] : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>)
// CHECK: tensor.collapse_shape %[[S]] {{\[}}[0, 1], [2], [3]] : tensor<2x4x8x8xf32> into tensor<8x8x8xf32>
func.func @merged_heads(%q4: tensor<2x4x8x16xf32>, %k4: tensor<2x4x16x8xf32>) -> tensor<8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %q3 = tensor.collapse_shape %q4 [[0, 1], [2], [3]] : tensor<2x4x8x16xf32> into tensor<8x8x16xf32>
  %k3 = tensor.collapse_shape %k4 [[0, 1], [2], [3]] : tensor<2x4x16x8xf32> into tensor<8x16x8xf32>
  %e = tensor.empty() : tensor<8x8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<8x8x16xf32>, tensor<8x16x8xf32>) outs(%acc : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  return %s : tensor<8x8x8xf32>
}

// -----

// Tests that softmax moves across a collapse that leaves its normalized
// dimension alone, and that the collapse/expand pair then cancels.

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8x8xf32>)
// CHECK: %[[S:.*]] = linalg.softmax dimension(3) ins(%[[X]] : tensor<2x4x8x8xf32>)
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: return %[[S]]
func.func @softmax(%x: tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> {
  %c = tensor.collapse_shape %x [[0, 1], [2], [3]] : tensor<2x4x8x8xf32> into tensor<8x8x8xf32>
  %e = tensor.empty() : tensor<8x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%c : tensor<8x8x8xf32>) outs(%e : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %r = tensor.expand_shape %p [[0, 1], [2], [3]] output_shape [2, 4, 8, 8] : tensor<8x8x8xf32> into tensor<2x4x8x8xf32>
  return %r : tensor<2x4x8x8xf32>
}

// -----

// Tests that softmax over a merged dimension is left alone.

// CHECK-LABEL: func.func @softmax_merged
// CHECK: tensor.collapse_shape
// CHECK: linalg.softmax dimension(1)
func.func @softmax_merged(%x: tensor<2x4x8xf32>) -> tensor<2x32xf32> {
  %c = tensor.collapse_shape %x [[0], [1, 2]] : tensor<2x4x8xf32> into tensor<2x32xf32>
  %e = tensor.empty() : tensor<2x32xf32>
  %p = linalg.softmax dimension(1) ins(%c : tensor<2x32xf32>) outs(%e : tensor<2x32xf32>) -> tensor<2x32xf32>
  return %p : tensor<2x32xf32>
}
