// RUN: tp-opt %s --tp-canonicalize --split-input-file | FileCheck %s

// The pass manager verifies after a pass only when the pass changed the IR.
// Shown with IR that does not verify (its check skipped on parsing): after an
// unchanged sweep nothing verifies it; after a changing one the verifier
// finds it. Upstream's --canonicalize counts as a change either way.
// RUN: tp-opt %S/Inputs/unverified-unchanged.mlir --mlir-very-unsafe-disable-verifier-on-parsing --tp-canonicalize --mlir-print-op-generic -o /dev/null
// RUN: not tp-opt %S/Inputs/unverified-changed.mlir --mlir-very-unsafe-disable-verifier-on-parsing --tp-canonicalize -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHANGED
// RUN: not tp-opt %S/Inputs/unverified-unchanged.mlir --mlir-very-unsafe-disable-verifier-on-parsing --canonicalize -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHANGED
// CHANGED: 'tp.shardings' has 2 entries but the op has 1 results

// Tests that one sweep folds: a dead constant goes, and a constant used in a
// body is hoisted out of it.

// CHECK-LABEL: func.func @fold
// CHECK-NOT: 2.500000e-01
// CHECK: %[[C:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.mulf %[[IN]], %[[C]] : f32
func.func @fold(%x: tensor<4xf32>) -> tensor<4xf32> {
  %unused = arith.constant 0.25 : f32
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.constant 2.0 : f32
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// linalg's InferStaticShapeOfOperands runs only on ops with a dynamically
// shaped operand (it cannot change any other), and there it still applies:
// %b's dynamic size is the static 4 that %a implies, cast in.

// CHECK-LABEL: func.func @infer_static_shape
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<?x8xf32>)
// CHECK: %[[CAST:.*]] = tensor.cast %[[B]] : tensor<?x8xf32> to tensor<4x8xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[A]], %[[CAST]] : tensor<4x8xf32>, tensor<4x8xf32>)
func.func @infer_static_shape(%a: tensor<4x8xf32>, %b: tensor<?x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<?x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// The sweep leaves the scalar bodies of linalg ops as they are (partitioning
// copies them; the lowering's canonicalizer folds them): the multiplication
// by one stays, its constant hoisted and unified with the one outside. Ops
// outside bodies fold as before: 2 * 3 becomes 6, and the generic whose
// result is unused goes.

// CHECK-LABEL: func.func @bodies_kept
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[SIX:.*]] = arith.constant 6.000000e+00 : f32
// CHECK-NOT: arith.constant
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[IN]], %[[ONE]] : f32
// CHECK-NEXT: linalg.yield %[[M]] : f32
// CHECK-NOT: linalg.generic
// CHECK: return %{{.*}}, %[[SIX]], %[[ONE]]
func.func @bodies_kept(%x: tensor<4xf32>) -> (tensor<4xf32>, f32, f32) {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  %six = arith.mulf %two, %three : f32
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c1 = arith.constant 1.0 : f32
    %m = arith.mulf %in, %c1 : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %unused = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                            iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  return %r, %six, %one : tensor<4xf32>, f32, f32
}
