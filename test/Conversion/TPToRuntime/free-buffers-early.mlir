// RUN: tp-opt %s --tp-free-buffers-early --split-input-file | FileCheck %s

// A driver: each layer's output is freed after the next layer read it, not
// at the end.
// CHECK-LABEL: func.func @driver
// CHECK: %[[A:.*]] = memref.alloc
// CHECK-NEXT: call @layer(%{{.*}}, %[[A]])
// CHECK-NEXT: %[[B:.*]] = memref.alloc
// CHECK-NEXT: call @layer(%[[A]], %[[B]])
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: %[[C:.*]] = memref.alloc
// CHECK-NEXT: call @layer(%[[B]], %[[C]])
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: memref.copy %[[C]]
// CHECK-NEXT: memref.dealloc %[[C]]
// CHECK-NEXT: return
func.func private @layer(memref<4x8xf32>, memref<4x8xf32>)
func.func @driver(%x: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %a = memref.alloc() : memref<4x8xf32>
  call @layer(%x, %a) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
  %b = memref.alloc() : memref<4x8xf32>
  call @layer(%a, %b) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
  %c = memref.alloc() : memref<4x8xf32>
  call @layer(%b, %c) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
  memref.copy %c, %out : memref<4x8xf32> to memref<4x8xf32>
  memref.dealloc %a : memref<4x8xf32>
  memref.dealloc %b : memref<4x8xf32>
  memref.dealloc %c : memref<4x8xf32>
  return
}

// -----

// Uses through a view and inside a loop count: the buffer is freed after
// the loop that reads its view.
// CHECK-LABEL: func.func @views
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: %[[V:.*]] = memref.subview %[[A]]
// CHECK: linalg.fill {{.*}} outs(%[[A]]
// CHECK: scf.for
// CHECK: memref.load %[[V]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: return
func.func @views(%out: memref<4xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<4x8xf32>
  %v = memref.subview %a[0, 0] [4, 1] [1, 1] : memref<4x8xf32> to memref<4xf32, strided<[8]>>
  linalg.fill ins(%s : f32) outs(%a : memref<4x8xf32>)
  scf.for %i = %c0 to %c4 step %c1 {
    %e = memref.load %v[%i] : memref<4xf32, strided<[8]>>
    memref.store %e, %out[%i] : memref<4xf32>
  }
  linalg.fill ins(%s : f32) outs(%out : memref<4xf32>)
  memref.dealloc %a : memref<4x8xf32>
  return
}

// -----

// A buffer yielded out of a region may be read through the region's
// result: it stays freed where it was.
// CHECK-LABEL: func.func @yielded
// CHECK: scf.if
// CHECK: memref.copy
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return
func.func @yielded(%c: i1, %x: memref<4xf32>, %out: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  %r = scf.if %c -> (memref<4xf32>) {
    scf.yield %a : memref<4xf32>
  } else {
    scf.yield %x : memref<4xf32>
  }
  memref.copy %r, %out : memref<4xf32> to memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

// A buffer whose pointer is taken as an integer, and one a loop carries,
// stay freed where they were.
// CHECK-LABEL: func.func @kept
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: scf.for
// CHECK: linalg.fill
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return
func.func @kept(%out: memref<4xf32>, %s: f32) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<4xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<4xf32> -> index
  %b = memref.alloc() : memref<4xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%m = %b) -> (memref<4xf32>) {
    scf.yield %m : memref<4xf32>
  }
  linalg.fill ins(%s : f32) outs(%out : memref<4xf32>)
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return %p : index
}
