// RUN: tp-opt %s --tp-drop-donated-results --split-input-file --verify-diagnostics | FileCheck %s

// A result written in its donated argument's buffer leaves the signature and
// the return; the argument loses tp.donate. The other results stay, in order.

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[W:.*]]: memref<8xf32>, %[[G:.*]]: memref<8xf32>) -> memref<8xf32> {
// CHECK-NOT: tp.donate
// CHECK: return %[[G]] : memref<8xf32>
func.func @step(%w: memref<8xf32> {tp.donate = 1 : i64}, %g: memref<8xf32>) -> (memref<8xf32>, memref<8xf32>) {
  linalg.sub ins(%w, %g : memref<8xf32>, memref<8xf32>) outs(%w : memref<8xf32>)
  return %g, %w : memref<8xf32>, memref<8xf32>
}

// -----

// A result that bufferization gave a buffer of its own: an error naming both.

// expected-error @+1 {{'func.func' op argument #0 is donated to result #0, but the result cannot be written in its buffer}}
func.func @copied(%w: memref<8xf32> {tp.donate = 0 : i64}, %g: memref<8xf32>) -> memref<8xf32> {
  // expected-note @+1 {{the result's buffer is made here}}
  %new = memref.alloc() : memref<8xf32>
  linalg.sub ins(%w, %g : memref<8xf32>, memref<8xf32>) outs(%new : memref<8xf32>)
  return %new : memref<8xf32>
}
