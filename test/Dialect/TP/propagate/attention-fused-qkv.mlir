// RUN: tp-opt %s --tp-propagate | FileCheck %s

// Tests self-attention with a fused QKV weight in per-head order
// ([E, H * (q|k|v) * D], split by columns) cut apart with extract_slice, and
// contractions written as linalg.generic with several batch dimensions: the
// heads stay split through the slices (the q/k/v cut is inside each head),
// both contractions and the softmax; the output projection is split by rows
// and its partial result is the one reshard.

tp.mesh @world ["tp" = 2]

#x   = affine_map<(b, s, n, e) -> (b, s, e)>
#w   = affine_map<(b, s, n, e) -> (e, n)>
#y   = affine_map<(b, s, n, e) -> (b, s, n)>
#q   = affine_map<(b, h, i, j, d) -> (b, i, h, d)>
#k   = affine_map<(b, h, i, j, d) -> (b, j, h, d)>
#s   = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p   = affine_map<(b, i, h, d, j) -> (b, h, i, j)>
#v   = affine_map<(b, i, h, d, j) -> (b, j, h, d)>
#c   = affine_map<(b, i, h, d, j) -> (b, i, h, d)>
#ci  = affine_map<(b, i, e, h, d) -> (b, i, h, d)>
#wo  = affine_map<(b, i, e, h, d) -> (h, d, e)>
#o   = affine_map<(b, i, e, h, d) -> (b, i, e)>

// CHECK-LABEL: func.func @attention
// CHECK-SAME: tensor<64x192xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}
// CHECK-SAME: tensor<64x64xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}
func.func @attention(%x: tensor<2x8x64xf32>,
                     %wqkv: tensor<64x192xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                     %wo: tensor<64x64xf32>)
    -> (tensor<2x8x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x8x192xf32>
  %a0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x8x192xf32>) -> tensor<2x8x192xf32>
  %qkv = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %wqkv : tensor<2x8x64xf32>, tensor<64x192xf32>) outs(%a0 : tensor<2x8x192xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<2x8x192xf32>
  // CHECK: tensor.expand_shape {{.*}} {tp.shardings = [#tp.sharding<@world, [{}, {}, {"tp"}, {}]>]} : tensor<2x8x192xf32> into tensor<2x8x4x48xf32>
  %qkv4 = tensor.expand_shape %qkv [[0], [1], [2, 3]] output_shape [2, 8, 4, 48] : tensor<2x8x192xf32> into tensor<2x8x4x48xf32>
  // CHECK-COUNT-3: tensor.extract_slice {{.*}} {tp.shardings = [#tp.sharding<@world, [{}, {}, {"tp"}, {}]>]}
  %q = tensor.extract_slice %qkv4[0, 0, 0, 0] [2, 8, 4, 16] [1, 1, 1, 1] : tensor<2x8x4x48xf32> to tensor<2x8x4x16xf32>
  %k = tensor.extract_slice %qkv4[0, 0, 0, 16] [2, 8, 4, 16] [1, 1, 1, 1] : tensor<2x8x4x48xf32> to tensor<2x8x4x16xf32>
  %v = tensor.extract_slice %qkv4[0, 0, 0, 32] [2, 8, 4, 16] [1, 1, 1, 1] : tensor<2x8x4x48xf32> to tensor<2x8x4x16xf32>
  %e1 = tensor.empty() : tensor<2x4x8x8xf32>
  %a1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  // CHECK: linalg.generic {{.*}} {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}, {}, {}]>]}
  %scores = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>) outs(%a1 : tensor<2x4x8x8xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<2x4x8x8xf32>
  // CHECK: linalg.softmax {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}, {}, {}]>]} dimension(3)
  %probs = linalg.softmax dimension(3) ins(%scores : tensor<2x4x8x8xf32>) outs(%e1 : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %e2 = tensor.empty() : tensor<2x8x4x16xf32>
  %a2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x8x4x16xf32>) -> tensor<2x8x4x16xf32>
  // CHECK: linalg.generic {{.*}} {tp.shardings = [#tp.sharding<@world, [{}, {}, {"tp"}, {}]>]}
  %ctx = linalg.generic {indexing_maps = [#p, #v, #c], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%probs, %v : tensor<2x4x8x8xf32>, tensor<2x8x4x16xf32>) outs(%a2 : tensor<2x8x4x16xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<2x8x4x16xf32>
  %wo3 = tensor.expand_shape %wo [[0, 1], [2]] output_shape [4, 16, 64] : tensor<64x64xf32> into tensor<4x16x64xf32>
  %e3 = tensor.empty() : tensor<2x8x64xf32>
  %a3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  // CHECK: %[[OUT:.*]] = linalg.generic {{.*}} {tp.shardings = [#tp.sharding<@world, [{}, {}, {}], partial = ["tp"]>]}
  %out = linalg.generic {indexing_maps = [#ci, #wo, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%ctx, %wo3 : tensor<2x8x4x16xf32>, tensor<4x16x64xf32>) outs(%a3 : tensor<2x8x64xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<2x8x64xf32>
  // CHECK: tp.reshard %[[OUT]] <@world, [{}, {}, {}]>
  // CHECK-NOT: tp.reshard
  return %out : tensor<2x8x64xf32>
}
