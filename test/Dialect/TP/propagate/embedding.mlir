// RUN: tp-opt %s --tp-propagate | FileCheck %s
// RUN: tp-opt %s --tp-propagate | grep -c tp.reshard | FileCheck %s --check-prefix=COUNT
// COUNT: {{^1$}}

// Tests a vocab-parallel embedding (the table split by rows; the lookup as a
// one-hot contraction over the vocabulary) with a tied, column-parallel LM
// head (the same table, transposed): the lookup is a partial sum reduced
// once, and the logits come out split over the vocabulary, as in Megatron-LM
// (whose cross-entropy consumes vocab-split logits). One reshard in all.

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: func.func @embed_and_head
// CHECK-SAME: -> (tensor<16x1024xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>})
func.func @embed_and_head(%ids: tensor<16xi64>,
                          %table: tensor<1024x64xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>})
    -> tensor<16x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %eo = tensor.empty() : tensor<16x1024xf32>
  // CHECK: linalg.generic {{.*}} {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]}
  %onehot = linalg.generic {indexing_maps = [affine_map<(t, v) -> (t)>, affine_map<(t, v) -> (t, v)>],
                            iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<16xi64>) outs(%eo : tensor<16x1024xf32>) {
    ^bb0(%id: i64, %o: f32):
      %v = linalg.index 1 : index
      %vi = arith.index_cast %v : index to i64
      %hit = arith.cmpi eq, %id, %vi : i64
      %r = arith.select %hit, %one, %zero : f32
      linalg.yield %r : f32
  } -> tensor<16x1024xf32>
  %ee = tensor.empty() : tensor<16x64xf32>
  %ze = linalg.fill ins(%zero : f32) outs(%ee : tensor<16x64xf32>) -> tensor<16x64xf32>
  // CHECK: %[[E:.*]] = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]}
  %emb = linalg.matmul ins(%onehot, %table : tensor<16x1024xf32>, tensor<1024x64xf32>)
                       outs(%ze : tensor<16x64xf32>) -> tensor<16x64xf32>
  // CHECK-NEXT: %[[R:.*]] = tp.reshard %[[E]] <@world, [{}, {}]>
  // CHECK: math.tanh %[[R]]
  %h = math.tanh %emb : tensor<16x64xf32>
  %zl = linalg.fill ins(%zero : f32) outs(%eo : tensor<16x1024xf32>) -> tensor<16x1024xf32>
  // CHECK: linalg.matmul {{.*}}tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]
  %logits = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                           affine_map<(m, n, k) -> (m, n)>]
              ins(%h, %table : tensor<16x64xf32>, tensor<1024x64xf32>)
              outs(%zl : tensor<16x1024xf32>) -> tensor<16x1024xf32>
  return %logits : tensor<16x1024xf32>
}
