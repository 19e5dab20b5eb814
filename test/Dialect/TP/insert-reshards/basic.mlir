// RUN: tp-opt %s --tp-insert-reshards --split-input-file -verify-diagnostics | FileCheck %s

// Tests --tp-insert-reshards alone, on shardings written by hand: each op's
// results take its decision, an operand in another sharding reads a
// tp.reshard, a tensor.empty is cloned in the sharding its user needs, a
// pending sum is reduced once for the function's result.

tp.mesh @world ["tp" = 2]

// Megatron's MLP as propagation leaves it before reshards: the second matmul
// splits its contraction, so its result is pending and the replicated
// result constraint needs one reduction.
// CHECK-LABEL: func.func @mlp
// CHECK: %[[H:.*]] = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]}
// CHECK: %[[Y:.*]] = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]} ins(%[[H]],
// CHECK-NEXT: %[[R:.*]] = tp.reshard %[[Y]] <@world, [{}, {}]>
// CHECK-NEXT: return %[[R]]
func.func @mlp(%x: tensor<8x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>},
               %w1: tensor<16x32xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
               %w2: tensor<32x16xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>})
    -> (tensor<8x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() {tp.shardings = [#tp.sharding<@world, [{}, {}]>]} : tensor<8x32xf32>
  %a1 = linalg.fill {tp.shardings = [#tp.sharding<@world, [{}, {}]>]} ins(%zero : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]}
         ins(%x, %w1 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%a1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e2 = tensor.empty() {tp.shardings = [#tp.sharding<@world, [{}, {}]>]} : tensor<8x16xf32>
  %a2 = linalg.fill {tp.shardings = [#tp.sharding<@world, [{}, {}]>]} ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]}
         ins(%h, %w2 : tensor<8x32xf32>, tensor<32x16xf32>) outs(%a2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

tp.mesh @world ["tp" = 2]

// The accumulator takes the split of its one user in place (no clone, no
// reshard); an operand given split over rows is resharded to the columns the
// op decided on.
// CHECK-LABEL: func.func @operand_resharded
// CHECK: %[[V:.*]] = tp.reshard %arg0 <@world, [{}, {"tp"}]>
// CHECK: %[[E:.*]] = tensor.empty() {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]}
// CHECK: %[[A:.*]] = linalg.fill {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]} {{.*}} outs(%[[E]]
// CHECK: linalg.add {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]} ins(%[[V]], %arg1 {{.*}} outs(%[[A]]
func.func @operand_resharded(%a: tensor<8x16xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
                             %b: tensor<8x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>})
    -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %s = linalg.add {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]}
         ins(%a, %b : tensor<8x16xf32>, tensor<8x16xf32>) outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %s : tensor<8x16xf32>
}

// -----

tp.mesh @world ["tp" = 2]
tp.mesh @other ["tp" = 2]

func.func @other_mesh(%a: tensor<8x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>})
    -> (tensor<8x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  // expected-error @+1 {{'tensor.empty' op has a sharding over @other in a function partitioned over @world}}
  %e = tensor.empty() {tp.shardings = [#tp.sharding<@other, [{}, {}]>]} : tensor<8x16xf32>
  return %e : tensor<8x16xf32>
}
