// RUN: tp-opt %s --tp-spmd | FileCheck %s
// RUN: tp-opt %s --tp-spmd=search=false | FileCheck %s

// The search beside a fixed point the model cannot express (a split of a
// dynamic dimension, which no strategy has), where the programme has no plan
// at all (a mesh axis of 2^63-1 devices): the fixed point's plan stays, as
// with search=false, and nothing is recorded. It used to read the absent
// incumbent and crash (found by fuzz/mutate_ir.py).

// CHECK-LABEL: func.func @f
// CHECK-NOT: tp.plan
// CHECK: linalg.add {tp.shardings = [#tp.sharding<@world, [{"tp"}, {}]>]}
// CHECK: linalg.add {tp.shardings = [#tp.sharding<@world, [{"tp"}, {}]>]}
// CHECK-NOT: tp.all_

tp.mesh @world ["tp" = 9223372036854775807]
func.func @f(%a: tensor<?x4xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
             %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %r = linalg.add ins(%a, %b : tensor<?x4xf32>, tensor<?x4xf32>) outs(%a : tensor<?x4xf32>) -> tensor<?x4xf32>
  %s = linalg.add ins(%r, %b : tensor<?x4xf32>, tensor<?x4xf32>) outs(%b : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %s : tensor<?x4xf32>
}
