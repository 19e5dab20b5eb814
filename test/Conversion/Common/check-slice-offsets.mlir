// RUN: tp-opt %s --tp-check-slice-offsets | FileCheck %s

// A slice at an offset computed at run time is checked against [0, 5] (a
// dimension of 6, a size of 1): out of it, tprt_rt_index_error with the offset,
// the bound and where, and the slice taken at 0. Static offsets, and functions
// without the rank context (not host code of the runtime), are left alone.

// CHECK: llvm.mlir.global internal constant @tp_offset_check_0("the offset of a slice along dimension 1 ({{.*}}check-slice-offsets.mlir:{{[0-9]+}}:{{[0-9]+}})\00")
// CHECK-LABEL: func.func @at(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[CACHE:.*]]: memref<2x6xf32>, %[[I:.*]]: index)
// CHECK: %[[P:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[LAST:.*]] = arith.constant 5 : i64
// CHECK: %[[OK:.*]] = arith.andi
// CHECK: %[[BAD:.*]] = arith.xori %[[OK]]
// CHECK: scf.if %[[BAD]] {
// CHECK:   %[[WHAT:.*]] = llvm.getelementptr
// CHECK:   func.call @tprt_rt_index_error(%[[CTX]], %[[P]], %[[LAST]], %[[WHAT]])
// CHECK: }
// CHECK: %[[SAFE:.*]] = arith.select %[[OK]], %[[I]], %{{.*}} : index
// CHECK: memref.subview %[[CACHE]][0, %[[SAFE]]] [2, 1] [1, 1]
// CHECK: memref.subview %[[CACHE]][0, 3] [2, 1] [1, 1]
// CHECK-LABEL: func.func @plain(
// CHECK-NOT: tprt_rt_index_error
func.func @at(%ctx: !llvm.ptr, %cache: memref<2x6xf32>, %i: index) {
  %v = memref.subview %cache[0, %i] [2, 1] [1, 1] : memref<2x6xf32> to memref<2x1xf32, strided<[6, 1], offset: ?>>
  %w = memref.subview %cache[0, 3] [2, 1] [1, 1] : memref<2x6xf32> to memref<2x1xf32, strided<[6, 1], offset: 3>>
  return
}
func.func @plain(%cache: memref<2x6xf32>, %i: index) {
  %v = memref.subview %cache[0, %i] [2, 1] [1, 1] : memref<2x6xf32> to memref<2x1xf32, strided<[6, 1], offset: ?>>
  return
}

// An offset that integer range analysis bounds within [0, dim - size] is left
// alone: a tile's row in a loop with constant bounds (0, 2, 4, 6 for rows of
// 2 of 8). The same loop's index plus 1 may reach 7, past the last offset
// 6: checked.

// CHECK-LABEL: func.func @tiles(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %[[X:.*]]: memref<8x4xf32>)
// CHECK: scf.for %[[R:.*]] =
// CHECK-NOT: tprt_rt_index_error
// CHECK: memref.subview %[[X]][%[[R]], 0] [2, 4] [1, 1]
// CHECK: %[[NEXT:.*]] = arith.addi %[[R]]
// CHECK: func.call @tprt_rt_index_error
// CHECK: %[[SAFE:.*]] = arith.select %{{.*}}, %[[NEXT]], %{{.*}} : index
// CHECK: memref.subview %[[X]][%[[SAFE]], 0] [2, 4] [1, 1]
// CHECK: func.func private @tprt_rt_index_error(!llvm.ptr, i64, i64, !llvm.ptr)
func.func @tiles(%ctx: !llvm.ptr, %x: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  scf.for %r = %c0 to %c8 step %c2 {
    %t = memref.subview %x[%r, 0] [2, 4] [1, 1] : memref<8x4xf32> to memref<2x4xf32, strided<[4, 1], offset: ?>>
    %n = arith.addi %r, %c1 : index
    %u = memref.subview %x[%n, 0] [2, 4] [1, 1] : memref<8x4xf32> to memref<2x4xf32, strided<[4, 1], offset: ?>>
  }
  return
}
