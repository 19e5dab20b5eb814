// RUN: tp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tp-lower-reductions))' | FileCheck %s

// Row sums: the accumulator is an iter_arg of the reduction loop, loaded
// before and stored after it, and its addf may be reassociated.

// CHECK-LABEL: func.func @row_sums
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>, %[[S:.*]]: memref<4xf32>)
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:   %[[INIT:.*]] = memref.load %[[S]][%[[I]]] : memref<4xf32>
// CHECK:   %[[R:.*]] = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK:     %[[V:.*]] = memref.load %[[X]][%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK:     %[[SUM:.*]] = arith.addf %[[V]], %[[ACC]] fastmath<reassoc> : f32
// CHECK:     scf.yield %[[SUM]] : f32
// CHECK:   memref.store %[[R]], %[[S]][%[[I]]] : memref<4xf32>
// CHECK-NOT: linalg.generic
func.func @row_sums(%x: memref<4x8xf32>, %s: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A softmax's max over its last dimension, with a broadcast operand and a
// scalar one and the loop index: each read at its own indices; maximumf
// keeps its other flags and gains reassoc.

// CHECK-LABEL: func.func @row_max
// CHECK-SAME: (%[[X:.*]]: memref<2x3x8xf32>, %[[B:.*]]: memref<8xf32>, %[[C:.*]]: f32, %[[M:.*]]: memref<2x3xf32>)
// CHECK: scf.for %[[I:.*]] =
// CHECK:   scf.for %[[K:.*]] =
// CHECK:     memref.load %[[M]][%[[I]], %[[K]]]
// CHECK:     scf.for %[[J:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
// CHECK-DAG:   %[[V:.*]] = memref.load %[[X]][%[[I]], %[[K]], %[[J]]]
// CHECK-DAG:   %[[W:.*]] = memref.load %[[B]][%[[J]]]
// CHECK:       arith.index_cast %[[J]]
// CHECK:       arith.maximumf %{{.*}}, %[[ACC]] fastmath<reassoc,nnan> : f32
func.func @row_max(%x: memref<2x3x8xf32>, %b: memref<8xf32>, %c: f32, %m: memref<2x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k, j)>, affine_map<(i, k, j) -> (j)>,
                                   affine_map<(i, k, j) -> ()>, affine_map<(i, k, j) -> (i, k)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %b, %c : memref<2x3x8xf32>, memref<8xf32>, f32) outs(%m : memref<2x3xf32>) {
  ^bb0(%v: f32, %w: f32, %s: f32, %acc: f32):
    %j = linalg.index 2 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %t = arith.addf %v, %w : f32
    %u = arith.mulf %t, %s : f32
    %x2 = arith.addf %u, %jf : f32
    %r = arith.maximumf %x2, %acc fastmath<nnan> : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A product keeps its order (no reassoc), but still carries its accumulator.

// CHECK-LABEL: func.func @row_products
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: reassoc
func.func @row_products(%x: memref<4x8xf32>, %s: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.mulf %v, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Left to convert-linalg-to-loops: a reduction that is not the innermost
// loop, one on tensors, and a contraction-like generic with two reductions.

// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: scf.for
func.func @left_alone(%x: memref<4x8xf32>, %s: memref<8xf32>, %t: tensor<4x8xf32>, %u: tensor<4xf32>) -> tensor<4xf32> {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  }
  %0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<4x8xf32>) outs(%u : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
