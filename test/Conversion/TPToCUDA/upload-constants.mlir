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

// -----

// In an entry point (a function of the manifest), the constants that are not
// splats are views of the constants' buffer, a new last argument (each 64-byte
// aligned: 16 bytes at 0, a mask of i1, one byte each, at 64), uploaded on the
// rank's first run alone; the manifest gives the buffer's size.

// CHECK: tp.manifest = "tprt-manifest 4\0Aabi 4\0Atarget cuda\0Afunc \22g\22 0 2\0Amesh - 0\0Aresult 0 f32 1 4 s=|\0Aresult 1 i8 2 2 2 s=|\0Aconstants 128\0Aend\0A"
// CHECK-LABEL: func.func @g(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[OUT:.*]]: memref<4xf32>, %[[OUT2:.*]]: memref<2x2xi1>, %[[CONSTANTS:.*]]: memref<128xi8>)
// CHECK: %[[FIRST:.*]] = call @tprt_rt_fill_once(%[[CTX]], %{{.*}}) : (!llvm.ptr, !llvm.ptr) -> i32
// CHECK: %[[UPLOAD:.*]] = arith.cmpi ne, %[[FIRST]]
// CHECK: scf.if %[[UPLOAD]] {
// CHECK:   %[[AT0:.*]] = arith.constant 0 : index
// CHECK:   memref.view %[[CONSTANTS]][%[[AT0]]][] : memref<128xi8> to memref<4xf32>
// CHECK:   memref.get_global @table
// CHECK:   call @tprt_rt_upload(%[[CTX]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK:   %[[AT64:.*]] = arith.constant 64 : index
// CHECK:   memref.view %[[CONSTANTS]][%[[AT64]]][] : memref<128xi8> to memref<2x2xi1>
// CHECK:   memref.get_global @causal
// CHECK:   call @tprt_rt_upload(%[[CTX]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: }
// CHECK: %[[T:.*]] = memref.view %[[CONSTANTS]][%{{.*}}][] : memref<128xi8> to memref<4xf32>
// CHECK: %[[C:.*]] = memref.view %[[CONSTANTS]][%{{.*}}][] : memref<128xi8> to memref<2x2xi1>
// CHECK-NOT: get_global
// CHECK: linalg.copy ins(%[[T]] : memref<4xf32>) outs(%[[OUT]]
// CHECK: linalg.copy ins(%[[C]] : memref<2x2xi1>) outs(%[[OUT2]]
// CHECK-NOT: memref.dealloc
// CHECK: return
module attributes {tp.manifest = "tprt-manifest 4\0Aabi 4\0Atarget cuda\0Afunc \22g\22 0 2\0Amesh - 0\0Aresult 0 f32 1 4 s=|\0Aresult 1 i8 2 2 2 s=|\0Aend\0A"} {
  memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
  memref.global "private" constant @causal : memref<2x2xi1> = dense<[[true, false], [true, true]]>
  func.func @g(%ctx: !llvm.ptr, %out: memref<4xf32>, %out2: memref<2x2xi1>) {
    %t = memref.get_global @table : memref<4xf32>
    %c = memref.get_global @causal : memref<2x2xi1>
    linalg.copy ins(%t : memref<4xf32>) outs(%out : memref<4xf32>)
    linalg.copy ins(%c : memref<2x2xi1>) outs(%out2 : memref<2x2xi1>)
    return
  }
}

// -----

// A function only calls use (an outlined layer) is passed a constants' buffer
// too: its own constants, then a block for each callee that has some. Its
// callers pass views of theirs, so the entry point's buffer holds every
// constant of the calls below it (@table twice: the entry's and @inner's), and
// uploads them all on the rank's first run. A splat is still filled each run.
// A public function that is no entry point (@other) has unknown callers: it
// passes its callees a fresh buffer it uploads itself.

// CHECK: constants 192
// CHECK-LABEL: func.func @h(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[X:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>, %[[CONSTANTS:.*]]: memref<192xi8>)
// CHECK: scf.if
// CHECK-COUNT-3: call @tprt_rt_upload(%[[CTX]]
// CHECK: }
// CHECK: %[[T:.*]] = memref.view %[[CONSTANTS]][%{{.*}}][] : memref<192xi8> to memref<4xf32>
// CHECK: %[[LAYER:.*]] = memref.view %[[CONSTANTS]][%{{.*}}][] : memref<192xi8> to memref<128xi8>
// CHECK: call @layer(%[[CTX]], %[[X]], %[[T]], %[[LAYER]])
// CHECK: call @layer(%[[CTX]], %[[T]], %[[OUT]], %[[LAYER]])
// CHECK-LABEL: func.func private @layer(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %{{.*}}: memref<4xf32>, %[[LOUT:.*]]: memref<4xf32>, %[[LCONSTANTS:.*]]: memref<128xi8>)
// CHECK-NOT: tprt_rt_upload
// CHECK: %[[B:.*]] = memref.view %[[LCONSTANTS]][%{{.*}}][] : memref<128xi8> to memref<4xf32>
// CHECK: %[[INNER:.*]] = memref.view %[[LCONSTANTS]][%{{.*}}][] : memref<128xi8> to memref<64xi8>
// CHECK: %[[ONES:.*]] = memref.alloc() : memref<4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[ONES]]
// CHECK: linalg.add ins(%{{.*}}, %[[B]] :
// CHECK: call @inner(%[[CTX]], %[[LOUT]], %[[INNER]])
// CHECK: memref.dealloc %[[ONES]]
// CHECK-LABEL: func.func private @inner(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: memref<4xf32>, %[[ICONSTANTS:.*]]: memref<64xi8>)
// CHECK-NOT: tprt_rt_upload
// CHECK: memref.view %[[ICONSTANTS]]
// CHECK-LABEL: func.func @other(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[OX:.*]]: memref<4xf32>)
// CHECK: %[[FRESH:.*]] = memref.alloc() : memref<64xi8>
// CHECK: memref.get_global @table
// CHECK: call @tprt_rt_upload(%[[CTX]]
// CHECK: call @inner(%[[CTX]], %[[OX]], %[[FRESH]])
// CHECK: memref.dealloc %[[FRESH]]
module attributes {tp.manifest = "tprt-manifest 4\0Aabi 4\0Atarget cuda\0Afunc \22h\22 1 1\0Amesh - 0\0Aarg 0 f32 1 4 s=|\0Aresult 0 f32 1 4 s=|\0Aend\0A"} {
  memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
  memref.global "private" constant @bias : memref<4xf32> = dense<[0.5, 0.5, 0.5, 1.0]>
  memref.global "private" constant @ones : memref<4xf32> = dense<1.0>
  func.func @h(%ctx: !llvm.ptr, %x: memref<4xf32>, %out: memref<4xf32>) {
    %t = memref.get_global @table : memref<4xf32>
    func.call @layer(%ctx, %x, %t) : (!llvm.ptr, memref<4xf32>, memref<4xf32>) -> ()
    func.call @layer(%ctx, %t, %out) : (!llvm.ptr, memref<4xf32>, memref<4xf32>) -> ()
    return
  }
  func.func private @layer(%ctx: !llvm.ptr, %in: memref<4xf32>, %out: memref<4xf32>) {
    %b = memref.get_global @bias : memref<4xf32>
    %o = memref.get_global @ones : memref<4xf32>
    linalg.add ins(%in, %b : memref<4xf32>, memref<4xf32>) outs(%out : memref<4xf32>)
    func.call @inner(%ctx, %out) : (!llvm.ptr, memref<4xf32>) -> ()
    return
  }
  func.func private @inner(%ctx: !llvm.ptr, %io: memref<4xf32>) {
    %t = memref.get_global @table : memref<4xf32>
    linalg.add ins(%io, %t : memref<4xf32>, memref<4xf32>) outs(%io : memref<4xf32>)
    return
  }
  func.func @other(%ctx: !llvm.ptr, %x: memref<4xf32>) {
    func.call @inner(%ctx, %x) : (!llvm.ptr, memref<4xf32>) -> ()
    return
  }
}

// -----

// Functions in a cycle of calls: the one found closing it (@a) has callers
// that are not all known, and passes its callee a fresh buffer.

// CHECK-LABEL: func.func @cycle(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: memref<4xf32>)
// CHECK-NEXT: call @a(
// CHECK-LABEL: func.func private @a(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[X:.*]]: memref<4xf32>)
// CHECK: %[[FRESH:.*]] = memref.alloc() : memref<64xi8>
// CHECK: call @tprt_rt_upload(%[[CTX]]
// CHECK: call @b(%[[CTX]], %[[X]], %[[FRESH]])
// CHECK-LABEL: func.func private @b(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[X:.*]]: memref<4xf32>, %{{.*}}: memref<64xi8>)
// CHECK: call @a(%[[CTX]], %[[X]]) :
module attributes {tp.manifest = "tprt-manifest 4\0Aabi 4\0Atarget cuda\0Afunc \22cycle\22 1 0\0Amesh - 0\0Aarg 0 f32 1 4 s=|\0Aend\0A"} {
  memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
  func.func @cycle(%ctx: !llvm.ptr, %x: memref<4xf32>) {
    func.call @a(%ctx, %x) : (!llvm.ptr, memref<4xf32>) -> ()
    return
  }
  func.func private @a(%ctx: !llvm.ptr, %x: memref<4xf32>) {
    func.call @b(%ctx, %x) : (!llvm.ptr, memref<4xf32>) -> ()
    return
  }
  func.func private @b(%ctx: !llvm.ptr, %x: memref<4xf32>) {
    %t = memref.get_global @table : memref<4xf32>
    linalg.add ins(%x, %t : memref<4xf32>, memref<4xf32>) outs(%x : memref<4xf32>)
    func.call @a(%ctx, %x) : (!llvm.ptr, memref<4xf32>) -> ()
    return
  }
}
