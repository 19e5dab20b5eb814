// RUN: tp-opt %s --tp-split-entry-points=max-part-ops=5 --split-input-file | FileCheck %s

// A driver of two layers: two parts, each loading the buffer pointers it
// uses right before its first use; the buffer that malloc made is what the
// second part takes from the first; the program goes.
// CHECK-LABEL: llvm.func internal @f_span0(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[BUF:.*]]: !llvm.ptr) -> !llvm.ptr
// CHECK-SAME: passthrough = ["noinline"]
// CHECK-NEXT: %[[C:.*]] = llvm.mlir.constant(64 : i64)
// CHECK-NEXT: %[[A:.*]] = llvm.call @malloc(%[[C]])
// CHECK-NEXT: %[[P0:.*]] = llvm.getelementptr %[[BUF]][0]
// CHECK-NEXT: %[[X:.*]] = llvm.load %[[P0]]
// CHECK-NEXT: %[[P1:.*]] = llvm.getelementptr %[[BUF]][1]
// CHECK-NEXT: %[[W0:.*]] = llvm.load %[[P1]]
// CHECK-NEXT: llvm.call @layer(%[[CTX]], %[[X]], %[[W0]], %[[A]])
// CHECK-NEXT: llvm.return %[[A]] : !llvm.ptr
// CHECK-LABEL: llvm.func internal @f_span1(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[BUF:.*]]: !llvm.ptr, %[[A:.*]]: !llvm.ptr)
// CHECK-SAME: passthrough = ["noinline"]
// CHECK-NEXT: llvm.getelementptr %[[BUF]][2]
// CHECK-NEXT: %[[W1:.*]] = llvm.load
// CHECK-NEXT: llvm.getelementptr %[[BUF]][3]
// CHECK-NEXT: %[[OUT:.*]] = llvm.load
// CHECK-NEXT: llvm.call @layer(%[[CTX]], %[[A]], %[[W1]], %[[OUT]])
// CHECK-NEXT: llvm.call @free(%[[A]])
// CHECK-NEXT: llvm.return
// CHECK-NOT: llvm.func internal @f(
// CHECK-LABEL: llvm.func @tprt_entry_f(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[BUF:.*]]: !llvm.ptr)
// CHECK-NEXT: %[[A:.*]] = llvm.call @f_span0(%[[CTX]], %[[BUF]])
// CHECK-NEXT: llvm.call @f_span1(%[[CTX]], %[[BUF]], %[[A]])
// CHECK-NEXT: llvm.return
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @layer(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
llvm.func internal @f(%ctx: !llvm.ptr, %x: !llvm.ptr, %w0: !llvm.ptr, %w1: !llvm.ptr, %out: !llvm.ptr) {
  %c = llvm.mlir.constant(64 : i64) : i64
  %a = llvm.call @malloc(%c) : (i64) -> !llvm.ptr
  llvm.call @layer(%ctx, %x, %w0, %a) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.call @layer(%ctx, %a, %w1, %out) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.call @free(%a) : (!llvm.ptr) -> ()
  llvm.return
}
llvm.func @tprt_entry_f(%ctx: !llvm.ptr, %buffers: !llvm.ptr) {
  %p0 = llvm.getelementptr %buffers[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %x = llvm.load %p0 : !llvm.ptr -> !llvm.ptr
  %p1 = llvm.getelementptr %buffers[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w0 = llvm.load %p1 : !llvm.ptr -> !llvm.ptr
  %p2 = llvm.getelementptr %buffers[2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %w1 = llvm.load %p2 : !llvm.ptr -> !llvm.ptr
  %p3 = llvm.getelementptr %buffers[3] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  %out = llvm.load %p3 : !llvm.ptr -> !llvm.ptr
  llvm.call @f(%ctx, %x, %w0, %w1, %out) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  llvm.return
}

// -----

// Two values cross from the first part to the second: a struct. A pure op on
// a malloc'd buffer (a memref descriptor) is rebuilt where it is used, from
// the buffer, which is what crosses. The alloca stays in the entry point, whose
// frame outlives the parts.
// CHECK-LABEL: llvm.func internal @g_span0(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[S:.*]]: !llvm.ptr) -> !llvm.struct<(ptr, ptr)>
// CHECK: %[[A:.*]] = llvm.call @malloc
// CHECK: %[[B:.*]] = llvm.call @malloc
// CHECK: llvm.call @use(%[[S]], %[[A]])
// CHECK: %[[U:.*]] = llvm.mlir.undef : !llvm.struct<(ptr, ptr)>
// CHECK: %[[U1:.*]] = llvm.insertvalue %[[A]], %[[U]][0]
// CHECK: %[[U2:.*]] = llvm.insertvalue %[[B]], %[[U1]][1]
// CHECK: llvm.return %[[U2]]
// CHECK-LABEL: llvm.func internal @g_span1(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[A:.*]]: !llvm.ptr, %[[S:.*]]: !llvm.ptr, %[[B:.*]]: !llvm.ptr)
// CHECK: %[[D0:.*]] = llvm.mlir.undef : !llvm.struct<(ptr, i64)>
// CHECK: %[[D:.*]] = llvm.insertvalue %[[A]], %[[D0]][0]
// CHECK: llvm.call @use_descriptor(%[[D]], %[[S]])
// CHECK: llvm.call @use(%[[B]], %[[S]])
// CHECK-LABEL: llvm.func @tprt_entry_g(
// CHECK: %[[N:.*]] = llvm.mlir.constant(16 : i64)
// CHECK: %[[S:.*]] = llvm.alloca %[[N]] x f32
// CHECK: %[[R:.*]] = llvm.call @g_span0(%{{.*}}, %{{.*}}, %[[S]])
// CHECK: %[[A:.*]] = llvm.extractvalue %[[R]][0]
// CHECK: %[[B:.*]] = llvm.extractvalue %[[R]][1]
// CHECK: llvm.call @g_span1(%{{.*}}, %{{.*}}, %[[A]], %[[S]], %[[B]])
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @use(!llvm.ptr, !llvm.ptr)
llvm.func @use_descriptor(!llvm.struct<(ptr, i64)>, !llvm.ptr)
llvm.func internal @g(%ctx: !llvm.ptr) {
  %n = llvm.mlir.constant(16 : i64) : i64
  %s = llvm.alloca %n x f32 : (i64) -> !llvm.ptr
  %a = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  %b = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  %u = llvm.mlir.undef : !llvm.struct<(ptr, i64)>
  %d = llvm.insertvalue %a, %u[0] : !llvm.struct<(ptr, i64)>
  llvm.call @use(%s, %a) : (!llvm.ptr, !llvm.ptr) -> ()
  llvm.call @use_descriptor(%d, %s) : (!llvm.struct<(ptr, i64)>, !llvm.ptr) -> ()
  llvm.call @use(%b, %s) : (!llvm.ptr, !llvm.ptr) -> ()
  llvm.return
}
llvm.func @tprt_entry_g(%ctx: !llvm.ptr, %buffers: !llvm.ptr) {
  llvm.call @g(%ctx) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// Left as they are: a program short enough; one that saves and restores the
// stack (its frame is its own); one that something else calls too.
// CHECK-LABEL: llvm.func internal @short(
// CHECK-LABEL: llvm.func @tprt_entry_short(
// CHECK-NEXT: llvm.call @short(
// CHECK-LABEL: llvm.func internal @frame(
// CHECK: llvm.intr.stacksave
// CHECK-LABEL: llvm.func @tprt_entry_frame(
// CHECK-NEXT: llvm.call @frame(
// CHECK-LABEL: llvm.func internal @shared(
// CHECK-LABEL: llvm.func @tprt_entry_shared(
// CHECK-NEXT: llvm.call @shared(
// CHECK-LABEL: llvm.func @other(
// CHECK-NEXT: llvm.call @shared(
// CHECK-NOT: _span
llvm.func @step(!llvm.ptr)
llvm.func internal @short(%ctx: !llvm.ptr) {
  llvm.call @step(%ctx) : (!llvm.ptr) -> ()
  llvm.call @step(%ctx) : (!llvm.ptr) -> ()
  llvm.return
}
llvm.func @tprt_entry_short(%ctx: !llvm.ptr, %buffers: !llvm.ptr) {
  llvm.call @short(%ctx) : (!llvm.ptr) -> ()
  llvm.return
}
llvm.func internal @frame(%ctx: !llvm.ptr) {
  %sp = llvm.intr.stacksave : !llvm.ptr
  llvm.call @step(%ctx) : (!llvm.ptr) -> ()
  llvm.call @step(%ctx) : (!llvm.ptr) -> ()
  llvm.call @step(%ctx) : (!llvm.ptr) -> ()
  llvm.call @step(%ctx) : (!llvm.ptr) -> ()
  llvm.call @step(%ctx) : (!llvm.ptr) -> ()
  llvm.call @step(%ctx) : (!llvm.ptr) -> ()
  llvm.intr.stackrestore %sp : !llvm.ptr
  llvm.return
}
llvm.func @tprt_entry_frame(%ctx: !llvm.ptr, %buffers: !llvm.ptr) {
  llvm.call @frame(%ctx) : (!llvm.ptr) -> ()
  llvm.return
}
llvm.func internal @shared(%ctx: !llvm.ptr) {
  llvm.call @step(%ctx) : (!llvm.ptr) -> ()
  llvm.call @step(%ctx) : (!llvm.ptr) -> ()
  llvm.call @step(%ctx) : (!llvm.ptr) -> ()
  llvm.call @step(%ctx) : (!llvm.ptr) -> ()
  llvm.call @step(%ctx) : (!llvm.ptr) -> ()
  llvm.call @step(%ctx) : (!llvm.ptr) -> ()
  llvm.return
}
llvm.func @tprt_entry_shared(%ctx: !llvm.ptr, %buffers: !llvm.ptr) {
  llvm.call @shared(%ctx) : (!llvm.ptr) -> ()
  llvm.return
}
llvm.func @other(%ctx: !llvm.ptr) {
  llvm.call @shared(%ctx) : (!llvm.ptr) -> ()
  llvm.return
}
