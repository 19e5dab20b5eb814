// RUN: tp-opt %s --tp-convert-launches-to-runtime --split-input-file --verify-diagnostics | FileCheck %s

// The host code of the CUDA lowering (after gpu-module-to-binary and
// gpu-to-llvm): the image becomes a constant of the library, the launch a
// call to tprt_rt_launch with a pointer to each operand's slot, the generic
// allocations calls to tprt_rt_alloc and tprt_rt_free; all take the rank
// context, the function's first argument.

// CHECK: module {
// CHECK-DAG: llvm.mlir.global internal constant @__tp_gpu_kernel_k_main("main\00") {addr_space = 0 : i32, alignment = 16 : i64}
// CHECK-DAG: llvm.mlir.global internal constant @__tp_gpu_image_k("\7FELF-image") {addr_space = 0 : i32, alignment = 16 : i64}
// CHECK-NOT: gpu.binary
// CHECK-LABEL: llvm.func @f(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[X:.*]]: !llvm.ptr)
// The slots, once, in the entry block.
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: %[[COUNT:.*]] = llvm.mlir.constant(3 : i64) : i64
// CHECK: %[[PARAMS:.*]] = llvm.alloca %[[COUNT]] x !llvm.ptr
// CHECK: %[[S0:.*]] = llvm.alloca %[[ONE]] x !llvm.ptr
// CHECK: %[[S1:.*]] = llvm.alloca %[[ONE]] x !llvm.ptr
// CHECK: %[[S2:.*]] = llvm.alloca %[[ONE]] x f32
// CHECK: %[[N:.*]] = llvm.mlir.constant(4000 : i64) : i64
// CHECK: %[[BUF:.*]] = llvm.call @tprt_rt_alloc(%[[CTX]], %[[N]]) : (!llvm.ptr, i64) -> !llvm.ptr
// CHECK: llvm.store %[[X]], %[[S0]]
// CHECK: %[[A0:.*]] = llvm.getelementptr %[[PARAMS]][0]
// CHECK: llvm.store %[[S0]], %[[A0]]
// CHECK: llvm.store %[[BUF]], %[[S1]]
// CHECK: %[[A1:.*]] = llvm.getelementptr %[[PARAMS]][1]
// CHECK: llvm.store %[[S1]], %[[A1]]
// CHECK: llvm.store %{{.*}}, %[[S2]] : f32, !llvm.ptr
// CHECK: %[[A2:.*]] = llvm.getelementptr %[[PARAMS]][2]
// CHECK: llvm.store %[[S2]], %[[A2]]
// CHECK: %[[SHARED:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: %[[IMAGE:.*]] = llvm.mlir.addressof @__tp_gpu_image_k
// CHECK: %[[SIZE:.*]] = llvm.mlir.constant(10 : i64) : i64
// CHECK: %[[NAME:.*]] = llvm.mlir.addressof @__tp_gpu_kernel_k_main
// CHECK: %[[NP:.*]] = llvm.mlir.constant(3 : i64) : i64
// CHECK: llvm.call @tprt_rt_launch(%[[CTX]], %[[IMAGE]], %[[SIZE]], %[[NAME]], %[[G:.*]], %[[C1:.*]], %[[C1]], %[[B:.*]], %[[C1]], %[[C1]], %[[SHARED]], %[[PARAMS]], %[[NP]])
// CHECK: llvm.call @tprt_rt_free(%[[CTX]], %[[BUF]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NOT: _mlir_memref_to_llvm
// CHECK: llvm.func @tprt_rt_launch(!llvm.ptr, !llvm.ptr, i64, !llvm.ptr, i64, i64, i64, i64, i64, i64, i32, !llvm.ptr, i64)
// CHECK: llvm.func @tprt_rt_alloc(!llvm.ptr, i64) -> !llvm.ptr
// CHECK: llvm.func @tprt_rt_free(!llvm.ptr, !llvm.ptr)
module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_90">, bin = "\7FELF-image">]
  llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
  llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
  llvm.func @f(%ctx: !llvm.ptr, %x: !llvm.ptr) {
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c4 = llvm.mlir.constant(4 : i64) : i64
    %c256 = llvm.mlir.constant(256 : i64) : i64
    %n = llvm.mlir.constant(4000 : i64) : i64
    %scale = llvm.mlir.constant(2.0 : f32) : f32
    %buf = llvm.call @_mlir_memref_to_llvm_alloc(%n) : (i64) -> !llvm.ptr
    gpu.launch_func @k::@main blocks in (%c4, %c1, %c1) threads in (%c256, %c1, %c1) : i64
        args(%x : !llvm.ptr, %buf : !llvm.ptr, %scale : f32)
    llvm.call @_mlir_memref_to_llvm_free(%buf) : (!llvm.ptr) -> ()
    llvm.return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_90">, bin = "a">,
                 #gpu.object<#nvvm.target<chip = "sm_80">, bin = "b">]
  llvm.func @two_objects(%ctx: !llvm.ptr) {
    %c1 = llvm.mlir.constant(1 : i64) : i64
    // expected-error @+1 {{'gpu.launch_func' op launches a kernel of 'k', which is not a gpu.binary with one object (run gpu-module-to-binary for one target first)}}
    gpu.launch_func @k::@main blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) : i64
    llvm.return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.binary @k [#gpu.object<#nvvm.target<chip = "sm_90">, bin = "a">]
  llvm.func @no_context() {
    %c1 = llvm.mlir.constant(1 : i64) : i64
    // expected-error @+1 {{'gpu.launch_func' op is not in a function that takes the rank context (run tp-convert-collectives-to-runtime before lowering)}}
    gpu.launch_func @k::@main blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) : i64
    llvm.return
  }
}
