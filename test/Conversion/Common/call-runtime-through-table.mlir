// RUN: tp-opt %s --split-input-file --tp-call-runtime-through-table --verify-diagnostics | FileCheck %s

// A call into the runtime loads the function from the table at the start of
// the rank context (the slot's byte offset in tprt_rt_table: axis_index is
// the 7th word) and calls it indirectly; the declaration goes.

// CHECK-LABEL: llvm.func @index
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr)
// CHECK: %[[AXES:.*]] = llvm.mlir.constant(1 : i64)
// CHECK: %[[TABLE:.*]] = llvm.load %[[CTX]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[SLOT:.*]] = llvm.getelementptr inbounds %[[TABLE]][48] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: %[[FN:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[I:.*]] = llvm.call %[[FN]](%[[CTX]], %[[AXES]]) : !llvm.ptr, (!llvm.ptr, i64) -> i64
// CHECK: llvm.return %[[I]]
// CHECK-NOT: tprt_rt_axis_index
llvm.func @tprt_rt_axis_index(!llvm.ptr, i64) -> i64
llvm.func @index(%ctx: !llvm.ptr) -> i64 {
  %axes = llvm.mlir.constant(1 : i64) : i64
  %i = llvm.call @tprt_rt_axis_index(%ctx, %axes) : (!llvm.ptr, i64) -> i64
  llvm.return %i : i64
}

// -----

// Every call site is rewritten, and calls into other functions are left.

// CHECK-LABEL: llvm.func @gemm_twice
// CHECK: llvm.getelementptr inbounds %{{.*}}[104] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: llvm.call %{{.*}}(%{{.*}}) : !llvm.ptr, (!llvm.ptr
// CHECK: llvm.getelementptr inbounds %{{.*}}[104] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: llvm.call %{{.*}}(%{{.*}}) : !llvm.ptr, (!llvm.ptr
// CHECK: llvm.call @helper()
llvm.func @tprt_rt_gemm(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
llvm.func @helper()
llvm.func @gemm_twice(%ctx: !llvm.ptr, %p: !llvm.ptr) {
  llvm.call @tprt_rt_gemm(%ctx, %p, %p, %p, %p, %p, %p) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.call @tprt_rt_gemm(%ctx, %p, %p, %p, %p, %p, %p) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.call @helper() : () -> ()
  llvm.return
}

// -----

// expected-error @below {{'tprt_rt_frobnicate' is not an entry point of the tprt runtime (tprt_rt_table, ABI version 6)}}
llvm.func @tprt_rt_frobnicate(!llvm.ptr)
llvm.func @f(%ctx: !llvm.ptr) {
  llvm.call @tprt_rt_frobnicate(%ctx) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// A declaration must have the entry point's own type (tprt_rt_calls.def,
// from which the runtime's table is made): the rank context first, and the
// parameters and result the runtime takes.
// expected-error @below {{'tprt_rt_axis_index' is declared as '!llvm.func<i64 (i64)>'; the runtime's entry point (tprt_rt_calls.def) is '!llvm.func<i64 (ptr, i64)>'}}
llvm.func @tprt_rt_axis_index(i64) -> i64

// -----

// expected-error @below {{'tprt_rt_fill_once' is declared as '!llvm.func<i64 (ptr, ptr)>'; the runtime's entry point (tprt_rt_calls.def) is '!llvm.func<i32 (ptr, ptr)>'}}
llvm.func @tprt_rt_fill_once(!llvm.ptr, !llvm.ptr) -> i64
