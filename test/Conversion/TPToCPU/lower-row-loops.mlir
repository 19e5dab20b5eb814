// RUN: tp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tp-lower-row-loops))' | FileCheck %s

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

// -----

// A normalization: the row's mean and variance are loaded once per row,
// before the row's loop, with the rsqrt computed from them; the loop loads
// the element and the column's gain and stores its output only.

// CHECK-LABEL: func.func @normalize
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>, %[[M:.*]]: memref<4xf32>, %[[V:.*]]: memref<4xf32>, %[[G:.*]]: memref<8xf32>, %[[Y:.*]]: memref<4x8xf32>)
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-DAG: %[[MEAN:.*]] = memref.load %[[M]][%[[I]]] : memref<4xf32>
// CHECK-DAG: %[[VAR:.*]] = memref.load %[[V]][%[[I]]] : memref<4xf32>
// CHECK:     %[[E:.*]] = arith.addf %[[VAR]], %{{.*}} : f32
// CHECK:     %[[R:.*]] = math.rsqrt %[[E]] : f32
// CHECK:     scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:   math.rsqrt
// CHECK-DAG:   %[[XV:.*]] = memref.load %[[X]][%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-DAG:   %[[GV:.*]] = memref.load %[[G]][%[[J]]] : memref<8xf32>
// CHECK:       %[[D:.*]] = arith.subf %[[XV]], %[[MEAN]] : f32
// CHECK:       %[[N:.*]] = arith.mulf %[[D]], %[[R]] : f32
// CHECK:       %[[S:.*]] = arith.mulf %[[N]], %[[GV]] : f32
// CHECK:       memref.store %[[S]], %[[Y]][%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NOT: linalg.generic
func.func @normalize(%x: memref<4x8xf32>, %m: memref<4xf32>, %v: memref<4xf32>, %g: memref<8xf32>, %y: memref<4x8xf32>) {
  %eps = arith.constant 1.0e-5 : f32
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>,
                                   affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>,
                                   affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %m, %v, %g : memref<4x8xf32>, memref<4xf32>, memref<4xf32>, memref<8xf32>)
      outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %mean: f32, %var: f32, %gain: f32, %out: f32):
    %e = arith.addf %var, %eps : f32
    %r = math.rsqrt %e : f32
    %d = arith.subf %a, %mean : f32
    %n = arith.mulf %d, %r : f32
    %s = arith.mulf %n, %gain : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Two outputs, one of which the body reads (an update in place): each is
// stored at its own indices with its own yielded value, and the one read is
// loaded in the loop.

// CHECK-LABEL: func.func @two_outputs
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<4xf32>, %[[Y:.*]]: memref<4x8xf32>, %[[Z:.*]]: memref<4x8xf32>)
// CHECK: scf.for %[[I:.*]] =
// CHECK:   %[[BV:.*]] = memref.load %[[B]][%[[I]]]
// CHECK:   scf.for %[[J:.*]] =
// CHECK-DAG: %[[XV:.*]] = memref.load %[[X]][%[[I]], %[[J]]]
// CHECK-DAG: %[[ZV:.*]] = memref.load %[[Z]][%[[I]], %[[J]]]
// CHECK:     %[[P:.*]] = arith.addf %[[XV]], %[[BV]]
// CHECK:     %[[Q:.*]] = arith.mulf %[[P]], %[[ZV]]
// CHECK:     memref.store %[[P]], %[[Y]][%[[I]], %[[J]]]
// CHECK:     memref.store %[[Q]], %[[Z]][%[[I]], %[[J]]]
func.func @two_outputs(%x: memref<4x8xf32>, %b: memref<4xf32>, %y: memref<4x8xf32>, %z: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>,
                                   affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<4x8xf32>, memref<4xf32>) outs(%y, %z : memref<4x8xf32>, memref<4x8xf32>) {
  ^bb0(%a: f32, %bias: f32, %o: f32, %acc: f32):
    %p = arith.addf %a, %bias : f32
    %q = arith.mulf %p, %acc : f32
    linalg.yield %p, %q : f32, f32
  }
  return
}

// -----

// Left to convert-linalg-to-loops: an elementwise op whose inputs all move
// along its innermost loop (nothing to hoist), one whose output does not (a
// broadcast write), and a 1-d op (no outer loop to hoist to).

// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-3: linalg.generic
func.func @left_alone(%x: memref<4x8xf32>, %b: memref<4xf32>, %y: memref<4x8xf32>, %r: memref<4xf32>, %v: memref<8xf32>, %w: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%b, %v : memref<4xf32>, memref<8xf32>) outs(%r : memref<4xf32>) {
  ^bb0(%a: f32, %u: f32, %o: f32):
    linalg.yield %a : f32
  }
  %s = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [affine_map<(j) -> (j)>, affine_map<(j) -> ()>, affine_map<(j) -> (j)>],
                  iterator_types = ["parallel"]}
      ins(%v, %s : memref<8xf32>, f32) outs(%w : memref<8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  }
  return
}
