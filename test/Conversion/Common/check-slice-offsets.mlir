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
// CHECK: func.func private @tprt_rt_index_error(!llvm.ptr, i64, i64, !llvm.ptr)
func.func @at(%ctx: !llvm.ptr, %cache: memref<2x6xf32>, %i: index) {
  %v = memref.subview %cache[0, %i] [2, 1] [1, 1] : memref<2x6xf32> to memref<2x1xf32, strided<[6, 1], offset: ?>>
  %w = memref.subview %cache[0, 3] [2, 1] [1, 1] : memref<2x6xf32> to memref<2x1xf32, strided<[6, 1], offset: 3>>
  return
}
func.func @plain(%cache: memref<2x6xf32>, %i: index) {
  %v = memref.subview %cache[0, %i] [2, 1] [1, 1] : memref<2x6xf32> to memref<2x1xf32, strided<[6, 1], offset: ?>>
  return
}
