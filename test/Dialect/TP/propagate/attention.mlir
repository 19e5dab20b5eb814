// RUN: tp-opt %s --tp-fold-reshapes --tp-propagate | FileCheck %s
// RUN: tp-opt %s --tp-propagate | FileCheck %s --check-prefix=NOFOLD

// Tests self-attention as exports write it (heads merged into the batch for
// linalg.batch_matmul) with Q, K, V weights split by columns: after the
// reshapes are folded, heads stay split through both contractions and the
// softmax, the output projection is split by rows, and its partial result
// (reshaped, still partial) is the one reshard (the all-reduce). Without folding, the merged [B*H] batch
// cannot carry the head split and the heads are gathered.

// CHECK-LABEL: func.func @attention
// CHECK-SAME: tensor<64x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}
// CHECK-SAME: tensor<64x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}
// CHECK-SAME: tensor<64x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}
// CHECK-SAME: %[[WO:[^:]*]]: tensor<64x64xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}
// CHECK: linalg.softmax {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}, {}, {}]>]} dimension(3)
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK-SAME: tp.shardings = [#tp.sharding<@world, [{}, {}, {}], partial = ["tp"]>]
// The partial sum flows unreduced through the (linear) final reshape.
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[P]] {{.*}}partial = ["tp"]
// CHECK: tp.reshard %[[C]] <@world, [{}, {}]>
// CHECK-NOT: tp.reshard

// NOFOLD-LABEL: func.func @attention
// NOFOLD-COUNT-3: tp.reshard {{.*}} <@world, [{}, {}, {}, {}]>

tp.mesh @world ["tp" = 2]
func.func @attention(%x: tensor<16x64xf32>,
                     %wq: tensor<64x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                     %wk: tensor<64x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                     %wv: tensor<64x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                     %wo: tensor<64x64xf32>)
    -> (tensor<16x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %q = linalg.matmul ins(%x, %wq : tensor<16x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<16x64xf32>) -> tensor<16x64xf32>
  %k = linalg.matmul ins(%x, %wk : tensor<16x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<16x64xf32>) -> tensor<16x64xf32>
  %v = linalg.matmul ins(%x, %wv : tensor<16x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<16x64xf32>) -> tensor<16x64xf32>
  // [B*S, H*D] -> [B, S, H, D] -> [B, H, S, D] -> [B*H, S, D]
  %q4 = tensor.expand_shape %q [[0, 1], [2, 3]] output_shape [2, 8, 4, 16] : tensor<16x64xf32> into tensor<2x8x4x16xf32>
  %k4 = tensor.expand_shape %k [[0, 1], [2, 3]] output_shape [2, 8, 4, 16] : tensor<16x64xf32> into tensor<2x8x4x16xf32>
  %v4 = tensor.expand_shape %v [[0, 1], [2, 3]] output_shape [2, 8, 4, 16] : tensor<16x64xf32> into tensor<2x8x4x16xf32>
  %t = tensor.empty() : tensor<2x4x8x16xf32>
  %qt = linalg.transpose ins(%q4 : tensor<2x8x4x16xf32>) outs(%t : tensor<2x4x8x16xf32>) permutation = [0, 2, 1, 3]
  %vt = linalg.transpose ins(%v4 : tensor<2x8x4x16xf32>) outs(%t : tensor<2x4x8x16xf32>) permutation = [0, 2, 1, 3]
  %tk = tensor.empty() : tensor<2x4x16x8xf32>
  %kt = linalg.transpose ins(%k4 : tensor<2x8x4x16xf32>) outs(%tk : tensor<2x4x16x8xf32>) permutation = [0, 2, 3, 1]
  %q3 = tensor.collapse_shape %qt [[0, 1], [2], [3]] : tensor<2x4x8x16xf32> into tensor<8x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x4x16x8xf32> into tensor<8x16x8xf32>
  %v3 = tensor.collapse_shape %vt [[0, 1], [2], [3]] : tensor<2x4x8x16xf32> into tensor<8x8x16xf32>
  %es = tensor.empty() : tensor<8x8x8xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%es : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<8x8x16xf32>, tensor<8x16x8xf32>) outs(%sacc : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<8x8x8xf32>) outs(%es : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %ec = tensor.empty() : tensor<8x8x16xf32>
  %cacc = linalg.fill ins(%zero : f32) outs(%ec : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
  %c = linalg.batch_matmul ins(%p, %v3 : tensor<8x8x8xf32>, tensor<8x8x16xf32>) outs(%cacc : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
  %c4 = tensor.expand_shape %c [[0, 1], [2], [3]] output_shape [2, 4, 8, 16] : tensor<8x8x16xf32> into tensor<2x4x8x16xf32>
  %t2 = tensor.empty() : tensor<2x8x4x16xf32>
  %ct = linalg.transpose ins(%c4 : tensor<2x4x8x16xf32>) outs(%t2 : tensor<2x8x4x16xf32>) permutation = [0, 2, 1, 3]
  %c2 = tensor.collapse_shape %ct [[0, 1], [2, 3]] : tensor<2x8x4x16xf32> into tensor<16x64xf32>
  %out = linalg.matmul ins(%c2, %wo : tensor<16x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %out : tensor<16x64xf32>
}
