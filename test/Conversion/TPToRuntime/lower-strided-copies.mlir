// RUN: tp-opt %s --tp-lower-strided-copies | FileCheck %s
// RUN: tp-opt %s --tp-lower-strided-copies=every-copy | FileCheck %s --check-prefix=EVERY

// With every-copy (device buffers, --tp-lower-to-cuda) no memref.copy stays.
// EVERY-NOT: memref.copy
// EVERY-COUNT-4: linalg.copy
// EVERY-NOT: memref.copy

// A copy out of (or into) a strided view becomes linalg.copy (loops), not a
// call to MLIR's memrefCopy; copies that memcpy can do stay.

// CHECK-LABEL: func.func @strided
// CHECK-SAME: (%[[BIG:.*]]: memref<8x16xf32>, %[[DENSE:.*]]: memref<4x8xf32>)
// CHECK: %[[SUB:.*]] = memref.subview %[[BIG]]
// CHECK: linalg.copy ins(%[[SUB]] : memref<4x8xf32, strided<[16, 1], offset: 8>>) outs(%[[DENSE]] : memref<4x8xf32>)
// CHECK: linalg.copy ins(%[[DENSE]] : memref<4x8xf32>) outs(%[[SUB]] : memref<4x8xf32, strided<[16, 1], offset: 8>>)
// CHECK-NOT: memref.copy
func.func @strided(%big: memref<8x16xf32>, %dense: memref<4x8xf32>) {
  %sub = memref.subview %big[0, 8] [4, 8] [1, 1] : memref<8x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  memref.copy %sub, %dense : memref<4x8xf32, strided<[16, 1], offset: 8>> to memref<4x8xf32>
  memref.copy %dense, %sub : memref<4x8xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  return
}

// CHECK-LABEL: func.func @contiguous
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4x8xf32> to memref<4x8xf32>
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<2x16xf32, strided<[16, 1], offset: 32>> to memref<2x16xf32>
// CHECK-NOT: linalg.copy
func.func @contiguous(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %big: memref<8x16xf32>, %rows: memref<2x16xf32>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  %sub = memref.subview %big[2, 0] [2, 16] [1, 1] : memref<8x16xf32> to memref<2x16xf32, strided<[16, 1], offset: 32>>
  memref.copy %sub, %rows : memref<2x16xf32, strided<[16, 1], offset: 32>> to memref<2x16xf32>
  return
}
