// RUN: tp-opt %s --tp-propagate | FileCheck %s
// RUN: tp-run %s --random-inputs --verify | FileCheck %s --check-prefix=EXEC

// Tests that a pending sum does not flow into an op that splits over the
// same axis: a vocab-parallel lookup (pending over "tp") feeding a
// column-parallel matmul (its weight split over "tp") must be reduced first;
// x pending over "tp" times a weight split over "tp" is no term of any sum
// (it once gave a result both split and pending over "tp", and wrong values).

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: func.func @lookup_then_colwise
func.func @lookup_then_colwise(%ids: tensor<16xi64>,
                               %table: tensor<32x16xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
                               %w: tensor<16x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>})
    -> tensor<16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %eo = tensor.empty() : tensor<16x32xf32>
  %onehot = linalg.generic {indexing_maps = [affine_map<(t, v) -> (t)>, affine_map<(t, v) -> (t, v)>],
                            iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<16xi64>) outs(%eo : tensor<16x32xf32>) {
    ^bb0(%id: i64, %o: f32):
      %v = linalg.index 1 : index
      %vi = arith.index_cast %v : index to i64
      %hit = arith.cmpi eq, %id, %vi : i64
      %r = arith.select %hit, %one, %zero : f32
      linalg.yield %r : f32
  } -> tensor<16x32xf32>
  %ee = tensor.empty() : tensor<16x16xf32>
  %ze = linalg.fill ins(%zero : f32) outs(%ee : tensor<16x16xf32>) -> tensor<16x16xf32>
  // CHECK: %[[E:.*]] = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]}
  %emb = linalg.matmul ins(%onehot, %table : tensor<16x32xf32>, tensor<32x16xf32>)
                       outs(%ze : tensor<16x16xf32>) -> tensor<16x16xf32>
  // CHECK: %[[R:.*]] = tp.reshard %[[E]] <@world, [{}, {}]>
  // CHECK: linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]} ins(%[[R]],
  %eh = tensor.empty() : tensor<16x64xf32>
  %zh = linalg.fill ins(%zero : f32) outs(%eh : tensor<16x64xf32>) -> tensor<16x64xf32>
  %h = linalg.matmul ins(%emb, %w : tensor<16x16xf32>, tensor<16x64xf32>)
                     outs(%zh : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %h : tensor<16x64xf32>
}
// EXEC: PASS
