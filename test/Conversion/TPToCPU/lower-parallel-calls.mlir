// RUN: tp-opt %s --tp-lower-parallel-calls --split-input-file --verify-diagnostics | FileCheck %s

// Each call of a range's function becomes tprt_rt_parallel_for on the
// caller's rank context, with the other arguments stored in a struct on the
// caller's stack (made in its entry block); the task unpacks them.

// CHECK-LABEL: llvm.func @caller(
// CHECK-SAME:      %[[CTX:.*]]: !llvm.ptr, %[[BUF:.*]]: !llvm.ptr, %[[V:.*]]: f32, %[[N:.*]]: i64)
// CHECK:         %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK:         %[[ARGS:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(ptr, f32)>
// CHECK:         llvm.br ^bb1
// CHECK:       ^bb1:
// CHECK:         %[[LO:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK:         %[[S0:.*]] = llvm.getelementptr %[[ARGS]][0, 0]
// CHECK:         llvm.store %[[BUF]], %[[S0]] : !llvm.ptr, !llvm.ptr
// CHECK:         %[[S1:.*]] = llvm.getelementptr %[[ARGS]][0, 1]
// CHECK:         llvm.store %[[V]], %[[S1]] : f32, !llvm.ptr
// CHECK:         %[[TASK:.*]] = llvm.mlir.addressof @body_task
// CHECK:         llvm.call @tprt_rt_parallel_for(%[[CTX]], %[[TASK]], %[[ARGS]], %[[LO]], %[[N]])
// CHECK-NOT:     llvm.call @body(
// CHECK:         llvm.return

// CHECK-LABEL: llvm.func @body(
// CHECK-NOT:     tp.parallel_body
// CHECK:       llvm.func internal @body_task(%[[P:.*]]: !llvm.ptr, %[[A:.*]]: i64, %[[B:.*]]: i64)
// CHECK:         %[[G0:.*]] = llvm.getelementptr %[[P]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, f32)>
// CHECK:         %[[L0:.*]] = llvm.load %[[G0]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[G1:.*]] = llvm.getelementptr %[[P]][0, 1]
// CHECK:         %[[L1:.*]] = llvm.load %[[G1]] : !llvm.ptr -> f32
// CHECK:         llvm.call @body(%[[A]], %[[B]], %[[L0]], %[[L1]])
// CHECK:         llvm.return
// CHECK:       llvm.func @tprt_rt_parallel_for(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64)
llvm.func @caller(%ctx: !llvm.ptr, %buf: !llvm.ptr, %v: f32, %n: i64) {
  llvm.br ^bb1
^bb1:
  %lo = llvm.mlir.constant(0 : i64) : i64
  llvm.call @body(%lo, %n, %buf, %v) : (i64, i64, !llvm.ptr, f32) -> ()
  llvm.return
}
llvm.func @body(%lo: i64, %hi: i64, %buf: !llvm.ptr, %v: f32) attributes {tp.parallel_body} {
  llvm.return
}

// -----

// A function without a rank context cannot call the runtime.
llvm.func @no_context(%n: i64) {
  %lo = llvm.mlir.constant(0 : i64) : i64
  // expected-error @+1 {{calls a 'tp.parallel_body' function from a function without a rank context (a leading !llvm.ptr argument)}}
  llvm.call @body(%lo, %n) : (i64, i64) -> ()
  llvm.return
}
llvm.func @body(%lo: i64, %hi: i64) attributes {tp.parallel_body} {
  llvm.return
}

// -----

// expected-error @+1 {{'tp.parallel_body' function must take (i64 lo, i64 hi, ...) and return nothing, got '!llvm.func<void (i32, i64)>'}}
llvm.func @narrow(%lo: i32, %hi: i64) attributes {tp.parallel_body} {
  llvm.return
}

// -----

llvm.func @body(%lo: i64, %hi: i64) attributes {tp.parallel_body} {
  llvm.return
}
llvm.func @escapes() -> !llvm.ptr {
  // expected-error @+1 {{uses 'tp.parallel_body' function @body other than by a direct call}}
  %f = llvm.mlir.addressof @body : !llvm.ptr
  llvm.return %f : !llvm.ptr
}
