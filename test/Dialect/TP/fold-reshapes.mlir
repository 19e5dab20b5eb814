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

// -----

// Tests that repeat_kv's collapse (KV heads broadcast to their query groups,
// [b, kv, rep, s, d] -> [b, kv * rep, s, d]) stays: folded, it would regroup
// the scores' heads (and the queries') as [kv, rep], which no sharding splits
// over more devices than KV heads. A collapse of an ordinary producer still
// folds (@merged_heads).

// CHECK-LABEL: func.func @repeat_kv
// CHECK: %[[B:.*]] = linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<2x2x8x16xf32>) outs(%{{.*}} : tensor<2x2x4x8x16xf32>)
// CHECK: %[[K:.*]] = tensor.collapse_shape %[[B]] {{\[}}[0], [1, 2], [3], [4]] : tensor<2x2x4x8x16xf32> into tensor<2x8x8x16xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %[[K]] : tensor<2x8x8x16xf32>, tensor<2x8x8x16xf32>)
#kv = affine_map<(b, k, r, s, d) -> (b, k, s, d)>
#id5 = affine_map<(b, k, r, s, d) -> (b, k, r, s, d)>
#id4 = affine_map<(b, h, s, d) -> (b, h, s, d)>
func.func @repeat_kv(%q: tensor<2x8x8x16xf32>, %k: tensor<2x2x8x16xf32>) -> tensor<2x8x8x16xf32> {
  %e5 = tensor.empty() : tensor<2x2x4x8x16xf32>
  %rep = linalg.generic {indexing_maps = [#kv, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<2x2x8x16xf32>) outs(%e5 : tensor<2x2x4x8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x2x4x8x16xf32>
  %flat = tensor.collapse_shape %rep [[0], [1, 2], [3], [4]] : tensor<2x2x4x8x16xf32> into tensor<2x8x8x16xf32>
  %e4 = tensor.empty() : tensor<2x8x8x16xf32>
  %m = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q, %flat : tensor<2x8x8x16xf32>, tensor<2x8x8x16xf32>) outs(%e4 : tensor<2x8x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<2x8x8x16xf32>
  return %m : tensor<2x8x8x16xf32>
}

// -----

// Tests that an argument one user reads expanded is read expanded by its flat
// users too (a model's first layer then computes in the shapes of the later
// layers, which read the residual stream expanded): one expand_shape at the
// top, the row sums over [2, 4] rows, and their result collapsed only for the
// return.

// CHECK-LABEL: func.func @argument_expanded
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>, %[[Y:.*]]: tensor<2x4x16xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1], [2]] output_shape [2, 4, 16]
// CHECK-NOT: tensor.expand_shape %[[X]]
// CHECK: %[[S:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[E]] : tensor<2x4x16xf32>)
// CHECK: %[[F:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
// CHECK: %[[A:.*]] = linalg.generic
// CHECK-SAME: ins(%[[E]], %[[Y]] : tensor<2x4x16xf32>, tensor<2x4x16xf32>)
// CHECK: return %[[F]], %[[A]]
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @argument_expanded(%x: tensor<8x16xf32>, %y: tensor<2x4x16xf32>) -> (tensor<8xf32>, tensor<2x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %in, %out : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %x3 = tensor.expand_shape %x [[0, 1], [2]] output_shape [2, 4, 16] : tensor<8x16xf32> into tensor<2x4x16xf32>
  %e3 = tensor.empty() : tensor<2x4x16xf32>
  %a = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x3, %y : tensor<2x4x16xf32>, tensor<2x4x16xf32>) outs(%e3 : tensor<2x4x16xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %t = arith.addf %in, %in2 : f32
    linalg.yield %t : f32
  } -> tensor<2x4x16xf32>
  return %s, %a : tensor<8xf32>, tensor<2x4x16xf32>
}
