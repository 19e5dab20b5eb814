// RUN: tp-opt %s --tp-propagate --split-input-file | FileCheck %s

// Tests that pending sums flow through ops linear in them and are reduced
// once, after: adding two partials, scaling by a replicated value, a
// transpose, and a matmul with one partial operand.

tp.mesh @world ["tp" = 2]

#mk = affine_map<(m, n, k) -> (m, k)>

// CHECK-LABEL: func.func @linear_chain
// CHECK: %[[P:.*]] = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]}
// CHECK: %[[Q:.*]] = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]}
// CHECK: %[[S:.*]] = arith.addf %[[P]], %[[Q]] {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]}
// CHECK: %[[M:.*]] = arith.mulf %[[S]], %{{.*}} {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]}
// CHECK: %[[T:.*]] = linalg.transpose {{.*}}ins(%[[M]]
// CHECK-SAME: partial = ["tp"]
// CHECK: %[[U:.*]] = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]} ins(%[[T]],
// CHECK-NEXT: %[[R:.*]] = tp.reshard %[[U]] <@world, [{}, {}]>
// CHECK-NOT: tp.reshard
// CHECK: return %[[R]]
func.func @linear_chain(%a: tensor<8x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                        %b: tensor<16x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
                        %c: tensor<8x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                        %d: tensor<16x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
                        %s: tensor<8x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>},
                        %w: tensor<8x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>})
    -> (tensor<8x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %p = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  %q = linalg.matmul ins(%c, %d : tensor<8x16xf32>, tensor<16x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  %sum = arith.addf %p, %q : tensor<8x8xf32>
  %scaled = arith.mulf %sum, %s : tensor<8x8xf32>
  %t = linalg.transpose ins(%scaled : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) permutation = [1, 0]
  %u = linalg.matmul ins(%t, %w : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %u : tensor<8x8xf32>
}

// -----

// Tests that a bias added to a row-parallel matmul is added once, after the
// reduction (adding a replicated value is not linear), and that a nonlinear
// op (tanh) and a residual add also get reduced inputs.

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @bias_after_reduction
// CHECK: %[[P:.*]] = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]}
// CHECK-NEXT: %[[R:.*]] = tp.reshard %[[P]] <@world, [{}, {}]>
// CHECK: linalg.generic {{.*}} ins(%[[R]], %{{.*}} : tensor<8x8xf32>, tensor<8xf32>)
// CHECK-SAME: tp.shardings = [#tp.sharding<@world, [{}, {}]>]
// CHECK-NOT: tp.reshard
func.func @bias_after_reduction(%a: tensor<8x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                                %b: tensor<16x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
                                %bias: tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{}]>},
                                %x: tensor<8x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>})
    -> (tensor<8x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %p = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  %pb = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%p, %bias : tensor<8x8xf32>, tensor<8xf32>) outs(%e : tensor<8x8xf32>) {
    ^bb0(%v: f32, %bv: f32, %o: f32):
      %r = arith.addf %v, %bv : f32
      linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %g = math.tanh %pb : tensor<8x8xf32>
  %res = arith.addf %x, %g : tensor<8x8xf32>
  return %res : tensor<8x8xf32>
}

// -----

// Tests that a generic whose body scales its partial input by a replicated
// one is linear, while one that adds them is not.

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @generic_bodies
// CHECK: %[[P:.*]] = linalg.matmul
// CHECK-NOT: tp.reshard %[[P]]
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[P]],
// CHECK-SAME: partial = ["tp"]
// CHECK: %[[RS:.*]] = tp.reshard %[[S]] <@world, [{}, {}]>
// CHECK: linalg.generic {{.*}} ins(%[[RS]],
func.func @generic_bodies(%a: tensor<8x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                          %b: tensor<16x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
                          %s: tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{}]>})
    -> (tensor<8x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %p = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                            iterator_types = ["parallel", "parallel"]}
      ins(%p, %s : tensor<8x8xf32>, tensor<8xf32>) outs(%e : tensor<8x8xf32>) {
    ^bb0(%v: f32, %sv: f32, %o: f32):
      %r = arith.mulf %v, %sv : f32
      %n = arith.negf %r : f32
      linalg.yield %n : f32
  } -> tensor<8x8xf32>
  %shifted = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                             iterator_types = ["parallel", "parallel"]}
      ins(%scaled, %s : tensor<8x8xf32>, tensor<8xf32>) outs(%e : tensor<8x8xf32>) {
    ^bb0(%v: f32, %sv: f32, %o: f32):
      %r = arith.addf %v, %sv : f32
      linalg.yield %r : f32
  } -> tensor<8x8xf32>
  return %shifted : tensor<8x8xf32>
}
