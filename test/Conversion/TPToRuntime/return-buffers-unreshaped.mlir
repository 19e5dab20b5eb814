// RUN: tp-opt %s --split-input-file --tp-return-buffers-unreshaped | FileCheck %s
// RUN: tp-opt %S/Inputs/collapsed-result.mlir --tp-lower-to-cpu | FileCheck %s --check-prefix=PIPELINE

// In --tp-lower-to-cpu: a result that collapses what the function computes is
// computed in the caller's out-parameter, with no buffer of its own and no
// copy into the out-parameter at the end.
// PIPELINE-LABEL: llvm.func internal @g
// PIPELINE-NOT: @malloc
// PIPELINE-NOT: memcpy
// PIPELINE: llvm.return

// A result that collapses a fresh buffer: the buffer is allocated at the
// result's shape and written through the inverse reshape; the returned value
// is the allocation itself (buffer-results-to-out-params then makes it the
// out-parameter, with no copy).

// CHECK-LABEL: func.func @collapsed
// CHECK: %[[R:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x4xf32>
// CHECK: %[[V:.*]] = memref.expand_shape %[[R]] {{\[\[}}0, 1], [2]] output_shape [2, 4, 4] : memref<8x4xf32> into memref<2x4x4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[V]] : memref<2x4x4xf32>)
// CHECK-NOT: collapse_shape
// CHECK: return %[[R]] : memref<8x4xf32>
func.func @collapsed(%x: f32) -> memref<8x4xf32> {
  %a = memref.alloc() {alignment = 64 : i64} : memref<2x4x4xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<2x4x4xf32>)
  %r = memref.collapse_shape %a [[0, 1], [2]] : memref<2x4x4xf32> into memref<8x4xf32>
  return %r : memref<8x4xf32>
}

// -----

// An expand_shape result: the inverse is a collapse_shape.

// CHECK-LABEL: func.func @expanded
// CHECK: %[[R:.*]] = memref.alloc() : memref<2x4x4xf32>
// CHECK: %[[V:.*]] = memref.collapse_shape %[[R]] {{\[\[}}0, 1], [2]] : memref<2x4x4xf32> into memref<8x4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[V]] : memref<8x4xf32>)
// CHECK: return %[[R]] : memref<2x4x4xf32>
func.func @expanded(%x: f32) -> memref<2x4x4xf32> {
  %a = memref.alloc() : memref<8x4xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<8x4xf32>)
  %r = memref.expand_shape %a [[0, 1], [2]] output_shape [2, 4, 4] : memref<8x4xf32> into memref<2x4x4xf32>
  return %r : memref<2x4x4xf32>
}

// -----

// Left alone: the buffer is also returned as it is (two results would share
// one out-parameter), a reshape of an argument (no fresh buffer), and a
// dynamically sized buffer.

// CHECK-LABEL: func.func @kept
// CHECK: %[[A:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK: %[[R:.*]] = memref.collapse_shape %[[A]]
// CHECK: %[[S:.*]] = memref.collapse_shape %arg0
// CHECK: %[[D:.*]] = memref.alloc(%arg1) : memref<?x4xf32>
// CHECK: %[[T:.*]] = memref.collapse_shape %[[D]]
// CHECK: return %[[R]], %[[A]], %[[S]], %[[T]]
func.func @kept(%arg: memref<2x4xf32>, %n: index)
    -> (memref<8xf32>, memref<2x4xf32>, memref<8xf32>, memref<?xf32>) {
  %a = memref.alloc() : memref<2x4xf32>
  %r = memref.collapse_shape %a [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  %s = memref.collapse_shape %arg [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  %d = memref.alloc(%n) : memref<?x4xf32>
  %t = memref.collapse_shape %d [[0, 1]] : memref<?x4xf32> into memref<?xf32>
  return %r, %a, %s, %t : memref<8xf32>, memref<2x4xf32>, memref<8xf32>, memref<?xf32>
}

// -----

// Left alone: a buffer the function frees (its memory cannot become the
// caller's out-parameter).

// CHECK-LABEL: func.func @freed
// CHECK: %[[A:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK: %[[R:.*]] = memref.collapse_shape %[[A]]
// CHECK: memref.dealloc %[[A]]
// CHECK: return %[[R]]
func.func @freed() -> memref<8xf32> {
  %a = memref.alloc() : memref<2x4xf32>
  %r = memref.collapse_shape %a [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  memref.dealloc %a : memref<2x4xf32>
  return %r : memref<8xf32>
}
