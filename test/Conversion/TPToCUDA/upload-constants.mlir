// RUN: tp-opt %s --tp-upload-constants --split-input-file --verify-diagnostics | FileCheck %s

// Kernels read device memory only: a constant buffer becomes a fresh one,
// uploaded from the host constant (which stays) or, for a splat, filled on
// the device; both are freed where the function returns.

memref.global "private" constant @mask : memref<2x2xf32> = dense<[[0.0, 1.0], [1.0, 0.0]]>
memref.global "private" constant @ones : memref<4xbf16> = dense<1.0>

// CHECK-LABEL: func.func @f(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[OUT:.*]]: memref<2x2xf32>, %[[OUT2:.*]]: memref<4xbf16>
// CHECK: %[[M:.*]] = memref.alloc() : memref<2x2xf32>
// CHECK: %[[HOST:.*]] = memref.get_global @mask : memref<2x2xf32>
// CHECK: %[[BYTES:.*]] = arith.constant 16 : i64
// CHECK: memref.extract_aligned_pointer_as_index %[[M]]
// CHECK: %[[PM:.*]] = llvm.inttoptr
// CHECK: memref.extract_aligned_pointer_as_index %[[HOST]]
// CHECK: %[[PH:.*]] = llvm.inttoptr
// CHECK: call @tprt_rt_upload(%[[CTX]], %[[PM]], %[[PH]], %[[BYTES]])
// CHECK: %[[S:.*]] = memref.alloc() : memref<4xbf16>
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : bf16
// CHECK: linalg.fill ins(%[[ONE]] : bf16) outs(%[[S]] : memref<4xbf16>)
// CHECK-NOT: get_global
// CHECK: linalg.copy ins(%[[M]] : memref<2x2xf32>) outs(%[[OUT]]
// CHECK: linalg.copy ins(%[[S]] : memref<4xbf16>) outs(%[[OUT2]]
// CHECK: memref.dealloc %[[M]]
// CHECK: memref.dealloc %[[S]]
// CHECK-NEXT: return
// CHECK: func.func private @tprt_rt_upload(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64)
func.func @f(%ctx: !llvm.ptr, %out: memref<2x2xf32>, %out2: memref<4xbf16>) {
  %m = memref.get_global @mask : memref<2x2xf32>
  %s = memref.get_global @ones : memref<4xbf16>
  linalg.copy ins(%m : memref<2x2xf32>) outs(%out : memref<2x2xf32>)
  linalg.copy ins(%s : memref<4xbf16>) outs(%out2 : memref<4xbf16>)
  return
}

// -----

memref.global "private" constant @c : memref<2xf32> = dense<[1.0, 2.0]>

// expected-error @+1 {{'func.func' op reads constant buffers but has no rank context (run tp-convert-collectives-to-runtime first)}}
func.func @no_context(%out: memref<2xf32>) {
  %c = memref.get_global @c : memref<2xf32>
  memref.copy %c, %out : memref<2xf32> to memref<2xf32>
  return
}

// -----

memref.global "private" @state : memref<2xf32> = dense<[1.0, 2.0]>

func.func @mutable(%ctx: !llvm.ptr, %out: memref<2xf32>) {
  // expected-error @+1 {{'memref.get_global' op reads @state, which is not a dense constant of a statically shaped, identity-layout buffer of int or float elements; the CUDA lowering uploads only those}}
  %c = memref.get_global @state : memref<2xf32>
  memref.copy %c, %out : memref<2xf32> to memref<2xf32>
  return
}
