// RUN: tp-opt %s --tp-convert-gemm-to-blas --cse | FileCheck %s

// Tests that contractions become tprt_rt_gemm calls with a constant
// descriptor, {dtype, trans_a, trans_b, epilogue, M, N, K, lda, ldb, ldc,
// ldd, batch0, batch1, strides of A, B, C, D}, with the right transposes,
// sizes, leading dimensions and batch strides (f16/bf16: dtype 2/3,
// accumulating in f32); one global per distinct descriptor; that a fresh
// output zeroed just before is overwritten instead (C null, the fill gone);
// that strided inputs are copied; that strided outputs and integer types
// are left to the loops. Without `epilogues`, no loop around a GEMM folds
// into it (gemm-epilogues.mlir: with).

// The descriptors, one each: plain; B transposed (ldb = K); A transposed
// (lda = M); batched (4 entries, strides 8*32, 32*16, 8*16); attention's
// scores; f16.
// CHECK-DAG: llvm.mlir.global private constant @[[$PLAIN:__tp_gemm_desc_[0-9]+]](dense<[0, 0, 0, 0, 16, 128, 512, 512, 128, 128, 128, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]> : tensor<21xi64>)
// CHECK-DAG: llvm.mlir.global private constant @[[$BT:__tp_gemm_desc_[0-9]+]](dense<[0, 0, 1, 0, 16, 128, 512, 512, 512, 128, 128, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]> : tensor<21xi64>)
// CHECK-DAG: llvm.mlir.global private constant @[[$AT:__tp_gemm_desc_[0-9]+]](dense<[0, 1, 0, 0, 16, 128, 512, 16, 128, 128, 128, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]> : tensor<21xi64>)
// CHECK-DAG: llvm.mlir.global private constant @[[$BATCH:__tp_gemm_desc_[0-9]+]](dense<[0, 0, 0, 0, 8, 16, 32, 32, 16, 16, 16, 4, 1, 256, 0, 512, 0, 128, 0, 128, 0]> : tensor<21xi64>)
// Q(b, i, h, d) K(b, j, h, d) -> S(b, h, i, j) on [2, 8, 4, 16]: a (b, h)
// batch of Q K^T with M = N = 8, K = 16, lda = ldb = 4*16 = 64, ldc = 8;
// batch strides Q: 8*4*16 = 512 and 16; S: 4*8*8 = 256 and 64.
// CHECK-DAG: llvm.mlir.global private constant @[[$SCORES:__tp_gemm_desc_[0-9]+]](dense<[0, 0, 1, 0, 8, 8, 16, 64, 64, 8, 8, 2, 4, 512, 16, 512, 16, 256, 64, 256, 64]> : tensor<21xi64>)
// CHECK-DAG: llvm.mlir.global private constant @[[$F16:__tp_gemm_desc_[0-9]+]](dense<[2, 0, 0, 0, 16, 128, 512, 512, 128, 128, 128, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]> : tensor<21xi64>)
// Grouped-query attention, 3 query heads over each of 2 key/value heads
// (@grouped): Q(b, i, h, g, d) K(b, j, h, d) -> S(b, h, g, i, j) on
// [2, 8, 2, 3, 16]. The query heads of a group are no batch stride apart in
// K: g is a batch loop of stride 0 in K (h and g the call's batch, 2 x 3;
// strides Q 48, 16; K 16, 0; S 192, 64), and b a loop around the call.
// CHECK-DAG: llvm.mlir.global private constant @[[$GQA_S:__tp_gemm_desc_[0-9]+]](dense<[0, 0, 1, 0, 8, 8, 16, 96, 32, 8, 8, 2, 3, 48, 16, 16, 0, 192, 64, 192, 64]> : tensor<21xi64>)
// And P(b, h, g, i, j) V(b, j, h, e) -> O(b, i, h, g, e): M = 8, N = 16,
// K = 8; strides P 192, 64; V 16, 0; O 48, 16.
// CHECK-DAG: llvm.mlir.global private constant @[[$GQA_O:__tp_gemm_desc_[0-9]+]](dense<[0, 0, 0, 0, 8, 16, 8, 8, 32, 96, 96, 2, 3, 192, 64, 16, 0, 48, 16, 48, 16]> : tensor<21xi64>)
// CHECK-NOT: llvm.mlir.global

#a_t = affine_map<(m, n, k) -> (k, m)>
#b = affine_map<(m, n, k) -> (k, n)>
#b_t = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
#att_q = affine_map<(b, h, i, j, d) -> (b, i, h, d)>
#att_k = affine_map<(b, h, i, j, d) -> (b, j, h, d)>
#att_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>

// CHECK-LABEL: func.func @gemms
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[D:.*]] = llvm.mlir.addressof @[[$PLAIN]]
// (C is the caller's: accumulated into, C = D; no bias.)
// CHECK: call @tprt_rt_gemm(%[[CTX]], %[[D]], %{{.*}}, %{{.*}}, %[[C:.*]], %[[C]], %[[NULL]])
// CHECK: llvm.mlir.addressof @[[$BT]]
// CHECK: call @tprt_rt_gemm
// CHECK: llvm.mlir.addressof @[[$AT]]
// CHECK: call @tprt_rt_gemm
// CHECK: llvm.mlir.addressof @[[$BATCH]]
// CHECK: call @tprt_rt_gemm
// CHECK-NOT: linalg.matmul
// CHECK-NOT: linalg.batch_matmul
func.func @gemms(%ctx: !llvm.ptr, %a: memref<16x512xf32>, %b: memref<512x128xf32>,
                 %c: memref<16x128xf32>, %bt: memref<128x512xf32>, %at: memref<512x16xf32>,
                 %ba: memref<4x8x32xf32>, %bb: memref<4x32x16xf32>, %bc: memref<4x8x16xf32>) {
  // Plain: M=16 N=128 K=512, lda=512 ldb=128 ldc=128, no batch.
  // (C is the caller's: accumulated into.)
  linalg.matmul ins(%a, %b : memref<16x512xf32>, memref<512x128xf32>) outs(%c : memref<16x128xf32>)
  // B stored transposed (N x K): ldb = K.
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, #b_t, #c]
      ins(%a, %bt : memref<16x512xf32>, memref<128x512xf32>) outs(%c : memref<16x128xf32>)
  // A stored transposed (K x M): lda = M.
  linalg.matmul indexing_maps = [#a_t, #b, #c]
      ins(%at, %b : memref<512x16xf32>, memref<512x128xf32>) outs(%c : memref<16x128xf32>)
  // Batched: 4 entries, strides 8*32, 32*16, 8*16.
  linalg.batch_matmul ins(%ba, %bb : memref<4x8x32xf32>, memref<4x32x16xf32>) outs(%bc : memref<4x8x16xf32>)
  return
}

// CHECK-LABEL: func.func @attention_scores
// CHECK: llvm.mlir.addressof @[[$SCORES]]
// CHECK: call @tprt_rt_gemm
func.func @attention_scores(%ctx: !llvm.ptr, %q: memref<2x8x4x16xf32>, %k: memref<2x8x4x16xf32>, %s: memref<2x4x8x8xf32>) {
  linalg.generic {indexing_maps = [#att_q, #att_k, #att_s],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<2x8x4x16xf32>, memref<2x8x4x16xf32>) outs(%s : memref<2x4x8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// A fresh output whose first use zeroes it: the fill goes, the GEMM
// overwrites (accumulate 0). Kept: a fill of another value, a fill of the
// caller's buffer, and a fresh buffer read between its fill and the GEMM.
// CHECK-LABEL: func.func @zeroed_outputs
// CHECK: memref.alloc() : memref<16x128xf32>
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NOT: linalg.fill
// CHECK: call @tprt_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[NULL]], %{{.*}}, %[[NULL]])
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<16x128xf32>)
// CHECK: call @tprt_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C1:.*]], %[[C1]], %[[NULL]])
// CHECK: linalg.fill
// CHECK: call @tprt_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C2:.*]], %[[C2]], %[[NULL]])
// CHECK: linalg.fill
// CHECK: memref.copy
// CHECK: call @tprt_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C3:.*]], %[[C3]], %[[NULL]])
func.func @zeroed_outputs(%ctx: !llvm.ptr, %a: memref<16x512xf32>, %b: memref<512x128xf32>,
                          %out: memref<16x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %c = memref.alloc() : memref<16x128xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<16x128xf32>)
  linalg.matmul ins(%a, %b : memref<16x512xf32>, memref<512x128xf32>) outs(%c : memref<16x128xf32>)
  %d = memref.alloc() : memref<16x128xf32>
  linalg.fill ins(%one : f32) outs(%d : memref<16x128xf32>)
  linalg.matmul ins(%a, %b : memref<16x512xf32>, memref<512x128xf32>) outs(%d : memref<16x128xf32>)
  linalg.fill ins(%zero : f32) outs(%out : memref<16x128xf32>)
  linalg.matmul ins(%a, %b : memref<16x512xf32>, memref<512x128xf32>) outs(%out : memref<16x128xf32>)
  %e = memref.alloc() : memref<16x128xf32>
  linalg.fill ins(%zero : f32) outs(%e : memref<16x128xf32>)
  memref.copy %e, %out : memref<16x128xf32> to memref<16x128xf32>
  linalg.matmul ins(%a, %b : memref<16x512xf32>, memref<512x128xf32>) outs(%e : memref<16x128xf32>)
  memref.copy %c, %out : memref<16x128xf32> to memref<16x128xf32>
  memref.copy %d, %out : memref<16x128xf32> to memref<16x128xf32>
  memref.copy %e, %out : memref<16x128xf32> to memref<16x128xf32>
  return
}

// Uses nested in later ops (a loop over the result's rows) come after the
// GEMM: the fill still goes. A write nested in an earlier op comes before:
// that fill stays.
// CHECK-LABEL: func.func @zeroed_then_looped
// CHECK: %[[C:.*]] = memref.alloc() : memref<16x128xf32>
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NOT: linalg.fill
// CHECK: call @tprt_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[NULL]], %{{.*}}, %[[NULL]])
// CHECK: scf.for
// CHECK: memref.subview %[[C]]
// CHECK: %[[D:.*]] = memref.alloc() : memref<16x128xf32>
// CHECK: scf.for
// CHECK: memref.subview %[[D]]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[D]] : memref<16x128xf32>)
// CHECK: call @tprt_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[P:.*]], %[[P]], %[[NULL]])
func.func @zeroed_then_looped(%ctx: !llvm.ptr, %a: memref<16x512xf32>, %b: memref<512x128xf32>,
                              %out: memref<16x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c = memref.alloc() : memref<16x128xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<16x128xf32>)
  linalg.matmul ins(%a, %b : memref<16x512xf32>, memref<512x128xf32>) outs(%c : memref<16x128xf32>)
  scf.for %i = %c0 to %c16 step %c1 {
    %row = memref.subview %c[%i, 0] [1, 128] [1, 1] : memref<16x128xf32> to memref<128xf32, strided<[1], offset: ?>>
    %dst = memref.subview %out[%i, 0] [1, 128] [1, 1] : memref<16x128xf32> to memref<128xf32, strided<[1], offset: ?>>
    memref.copy %row, %dst : memref<128xf32, strided<[1], offset: ?>> to memref<128xf32, strided<[1], offset: ?>>
  }
  %d = memref.alloc() : memref<16x128xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %row = memref.subview %d[%i, 0] [1, 128] [1, 1] : memref<16x128xf32> to memref<128xf32, strided<[1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%row : memref<128xf32, strided<[1], offset: ?>>)
  }
  linalg.fill ins(%zero : f32) outs(%d : memref<16x128xf32>)
  linalg.matmul ins(%a, %b : memref<16x512xf32>, memref<512x128xf32>) outs(%d : memref<16x128xf32>)
  memref.copy %d, %out : memref<16x128xf32> to memref<16x128xf32>
  memref.dealloc %c : memref<16x128xf32>
  memref.dealloc %d : memref<16x128xf32>
  return
}

// CHECK-LABEL: func.func @strided
func.func @strided(%ctx: !llvm.ptr, %a: memref<16x512xf32, strided<[1024, 1]>>, %b: memref<512x128xf32>,
                   %c: memref<16x128xf32>, %cs: memref<16x128xf32, strided<[256, 1]>>,
                   %h: memref<16x512xf16>, %hb: memref<512x128xf16>, %hc: memref<16x128xf16>,
                   %ac: memref<16x512xf32>,
                   %i: memref<16x512xi32>, %ib: memref<512x128xi32>, %ic: memref<16x128xi32>) {
  // A strided: copied, multiplied, freed.
  // CHECK: %[[COPY:.*]] = memref.alloc() : memref<16x512xf32>
  // CHECK: memref.copy %{{.*}}, %[[COPY]]
  // CHECK: call @tprt_rt_gemm
  // CHECK: memref.dealloc %[[COPY]]
  linalg.matmul ins(%a, %b : memref<16x512xf32, strided<[1024, 1]>>, memref<512x128xf32>) outs(%c : memref<16x128xf32>)
  // Strided output, integers: loops.
  // CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<16x512xf32>, memref<512x128xf32>) outs(%{{.*}} : memref<16x128xf32, strided<[256, 1]>>)
  linalg.matmul ins(%ac, %b : memref<16x512xf32>, memref<512x128xf32>) outs(%cs : memref<16x128xf32, strided<[256, 1]>>)
  // CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<16x512xi32>, memref<512x128xi32>)
  linalg.matmul ins(%i, %ib : memref<16x512xi32>, memref<512x128xi32>) outs(%ic : memref<16x128xi32>)
  // f16 storage: dtype 2 in the descriptor, f32 inside.
  // CHECK: llvm.mlir.addressof @[[$F16]]
  // CHECK: call @tprt_rt_gemm
  linalg.matmul ins(%h, %hb : memref<16x512xf16>, memref<512x128xf16>) outs(%hc : memref<16x128xf16>)
  return
}

// Each contraction of grouped-query attention: a loop over the batch (b)
// around one call, whose operands start at b's offsets (Q 768, K 256, S 384
// elements per step; then P 384, V 256, O 768).

// CHECK-LABEL: func.func @grouped
// CHECK-SAME: (%[[CTX:[^:]*]]: !llvm.ptr, %[[Q:[^:]*]]: memref<2x8x2x3x16xf32>
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-DAG: %[[OQ:.*]] = arith.muli %[[B]], %c768
// CHECK-DAG: %[[OK:.*]] = arith.muli %[[B]], %c256
// CHECK-DAG: %[[OS:.*]] = arith.muli %[[B]], %c384
// CHECK: %[[DESC:.*]] = llvm.mlir.addressof @[[$GQA_S]]
// CHECK: memref.extract_aligned_pointer_as_index %[[Q]]
// CHECK: %[[EQ:.*]] = arith.index_cast %[[OQ]] : index to i64
// CHECK: %[[PQ:.*]] = llvm.getelementptr %{{.*}}[%[[EQ]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: %[[EK:.*]] = arith.index_cast %[[OK]] : index to i64
// CHECK: %[[PK:.*]] = llvm.getelementptr %{{.*}}[%[[EK]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: %[[ES:.*]] = arith.index_cast %[[OS]] : index to i64
// CHECK: %[[PS:.*]] = llvm.getelementptr %{{.*}}[%[[ES]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: call @tprt_rt_gemm(%[[CTX]], %[[DESC]], %[[PQ]], %[[PK]], %[[PS]], %[[PS]], %{{.*}})
// CHECK: }
// CHECK: scf.for
// CHECK: llvm.mlir.addressof @[[$GQA_O]]
// CHECK: call @tprt_rt_gemm
// CHECK: }
// CHECK-NOT: linalg.generic
// CHECK: func.func private @tprt_rt_gemm(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
func.func @grouped(%ctx: !llvm.ptr, %q: memref<2x8x2x3x16xf32>, %k: memref<2x8x2x16xf32>, %s: memref<2x2x3x8x8xf32>, %v: memref<2x8x2x16xf32>, %o: memref<2x8x2x3x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, h, g, i, j, d) -> (b, i, h, g, d)>, affine_map<(b, h, g, i, j, d) -> (b, j, h, d)>, affine_map<(b, h, g, i, j, d) -> (b, h, g, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<2x8x2x3x16xf32>, memref<2x8x2x16xf32>) outs(%s : memref<2x2x3x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, g, i, e, j) -> (b, h, g, i, j)>, affine_map<(b, h, g, i, e, j) -> (b, j, h, e)>, affine_map<(b, h, g, i, e, j) -> (b, i, h, g, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%s, %v : memref<2x2x3x8x8xf32>, memref<2x8x2x16xf32>) outs(%o : memref<2x8x2x3x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}
