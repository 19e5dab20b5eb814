// RUN: tp-opt %s --tp-convert-collectives-to-runtime --split-input-file --verify-diagnostics | FileCheck %s

// Tests that every buffer-form collective becomes its runtime call with the
// rank context (a new first argument), bare pointers, shape, codes and packed
// axes; that tp.axis_index becomes tprt_rt_axis_index; that tp.* attributes
// go.

tp.mesh @grid ["dp" = 2, "tp" = 4]

// CHECK-LABEL: func.func @f
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr, %[[X:.*]]: memref<16x128xf32>, %{{.*}}: memref<16x128xf32>, %{{.*}}: memref<16x1024xf32>, %{{.*}}: memref<4x128xf32>, %{{.*}}: memref<4x512xf32>)
// CHECK-NOT: tp.sharding
// CHECK-NOT: tp.spmd
func.func @f(%x: memref<16x128xf32> {tp.sharding = #tp.sharding<@grid, [{}, {"tp"}]>},
             %o: memref<16x128xf32>, %g: memref<16x1024xf32>, %r: memref<4x128xf32>,
             %a: memref<4x512xf32>) -> index attributes {tp.spmd = @grid} {
  // all_reduce: count 2048, f32 (0), sum (0), axes ["tp"] = 1 | 1 << 4 = 17.
  // CHECK-DAG: %[[C2048:.*]] = arith.constant 2048 : i64
  // CHECK-DAG: %[[F32:.*]] = arith.constant 0 : i32
  // CHECK-DAG: %[[TP:.*]] = arith.constant 17 : i64
  // CHECK: call @tprt_rt_all_reduce(%[[CTX]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[TP]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i32, i32, i64) -> ()
  tp.all_reduce sum %x over @grid ["tp"] into %o : memref<16x128xf32>
  // all_gather over ["tp", "dp"]: 2 | 1 << 4 | 0 << 8 = 18.
  // CHECK: memref.alloca() : memref<2xi64>
  // CHECK: %[[TPDP:.*]] = arith.constant 18 : i64
  // CHECK: call @tprt_rt_all_gather(%[[CTX]], {{.*}}, %[[TPDP]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32, i32, i64) -> ()
  tp.all_gather %x over @grid ["tp", "dp"] dim 1 into %g : memref<16x128xf32> -> memref<16x1024xf32>
  // CHECK: call @tprt_rt_reduce_scatter(%[[CTX]], {{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32, i32, i32, i64) -> ()
  tp.reduce_scatter max %x over @grid ["tp"] dim 0 into %r : memref<16x128xf32> -> memref<4x128xf32>
  // CHECK: call @tprt_rt_all_to_all(%[[CTX]], {{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32, i32, i32, i64) -> ()
  tp.all_to_all %x over @grid ["tp"] split 0 concat 1 into %a : memref<16x128xf32> -> memref<4x512xf32>
  // CHECK: call @tprt_rt_all_slice(%[[CTX]], {{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32, i32, i64) -> ()
  tp.all_slice %x over @grid ["tp"] dim 0 into %r : memref<16x128xf32> -> memref<4x128xf32>
  // CHECK: %[[I:.*]] = call @tprt_rt_axis_index(%[[CTX]], %{{.*}}) : (!llvm.ptr, i64) -> i64
  // CHECK: arith.index_cast %[[I]] : i64 to index
  %i = tp.axis_index @grid ["tp"] : index
  // CHECK-NOT: tp.
  return %i : index
}
// CHECK: func.func private @tprt_rt_all_reduce(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i32, i32, i64)

// -----

// Tests that a strided operand is copied into a contiguous buffer (and freed
// after the call), and that calls between functions pass the context on.

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @strided
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr, %[[S:.*]]: memref<4x2xf32, strided<[8, 1], offset: 2>>
// CHECK: %[[COPY:.*]] = memref.alloc() : memref<4x2xf32>
// CHECK: memref.copy %[[S]], %[[COPY]]
// CHECK: memref.extract_aligned_pointer_as_index %[[COPY]]
// CHECK: call @tprt_rt_all_reduce
// CHECK: memref.dealloc %[[COPY]]
func.func @strided(%s: memref<4x2xf32, strided<[8, 1], offset: 2>>, %o: memref<4x2xf32>) {
  tp.all_reduce sum %s over @world ["tp"] into %o : memref<4x2xf32, strided<[8, 1], offset: 2>> -> memref<4x2xf32>
  return
}

// CHECK-LABEL: func.func @caller
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr,
// CHECK: call @strided(%[[CTX]],
func.func @caller(%s: memref<4x2xf32, strided<[8, 1], offset: 2>>, %o: memref<4x2xf32>) {
  call @strided(%s, %o) : (memref<4x2xf32, strided<[8, 1], offset: 2>>, memref<4x2xf32>) -> ()
  return
}

// -----

// Tests that tensor-form collectives are rejected: bufferize first.

tp.mesh @world ["tp" = 2]
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tp.all_reduce' op is still on tensors; run one-shot bufferization first}}
  %r = tp.all_reduce sum %x over @world ["tp"] : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Tests that element types the runtime does not know are rejected.

tp.mesh @world ["tp" = 2]
func.func @f(%x: memref<4xi8>, %o: memref<4xi8>) {
  // expected-error @+1 {{'tp.all_reduce' op has element type 'i8'; the CPU runtime takes f32, f64, f16, bf16, i32 or i64}}
  tp.all_reduce sum %x over @world ["tp"] into %o : memref<4xi8>
  return
}
