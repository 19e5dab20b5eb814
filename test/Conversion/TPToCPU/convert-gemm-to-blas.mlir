// RUN: tp-opt %s --tp-convert-gemm-to-blas --cse | FileCheck %s

// Tests that f32 contractions become tprt_rt_sgemm calls (f16/bf16:
// tprt_rt_gemm_narrow, accumulating in f32) with the right
// transposes, sizes, leading dimensions and batch strides; that a fresh
// output zeroed just before is overwritten instead (accumulate 0, the fill
// gone); that strided inputs are copied; that strided outputs and integer
// types are left to the loops.

#a_t = affine_map<(m, n, k) -> (k, m)>
#b = affine_map<(m, n, k) -> (k, n)>
#b_t = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
#att_q = affine_map<(b, h, i, j, d) -> (b, i, h, d)>
#att_k = affine_map<(b, h, i, j, d) -> (b, j, h, d)>
#att_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>

// CHECK-LABEL: func.func @gemms
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr
func.func @gemms(%ctx: !llvm.ptr, %a: memref<16x512xf32>, %b: memref<512x128xf32>,
                 %c: memref<16x128xf32>, %bt: memref<128x512xf32>, %at: memref<512x16xf32>,
                 %ba: memref<4x8x32xf32>, %bb: memref<4x32x16xf32>, %bc: memref<4x8x16xf32>) {
  // Plain: M=16 N=128 K=512, lda=512 ldb=128 ldc=128, no batch.
  // CHECK-DAG: %[[F:.*]] = arith.constant 0 : i32
  // CHECK-DAG: %[[T:.*]] = arith.constant 1 : i32
  // CHECK-DAG: %[[M:.*]] = arith.constant 16 : i64
  // CHECK-DAG: %[[N:.*]] = arith.constant 128 : i64
  // CHECK-DAG: %[[K:.*]] = arith.constant 512 : i64
  // CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
  // CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
  // (C is the caller's: accumulated into.)
  // CHECK: call @tprt_rt_sgemm(%[[CTX]], %[[F]], %[[F]], %[[T]], %[[M]], %[[N]], %[[K]], %{{.*}}, %[[K]], %{{.*}}, %[[N]], %{{.*}}, %[[N]], %[[ONE]], %[[ONE]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]])
  linalg.matmul ins(%a, %b : memref<16x512xf32>, memref<512x128xf32>) outs(%c : memref<16x128xf32>)
  // B stored transposed (N x K): ldb = K.
  // CHECK: call @tprt_rt_sgemm(%[[CTX]], %[[F]], %[[T]], %[[T]], %[[M]], %[[N]], %[[K]], %{{.*}}, %[[K]], %{{.*}}, %[[K]],
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, #b_t, #c]
      ins(%a, %bt : memref<16x512xf32>, memref<128x512xf32>) outs(%c : memref<16x128xf32>)
  // A stored transposed (K x M): lda = M.
  // CHECK: call @tprt_rt_sgemm(%[[CTX]], %[[T]], %[[F]], %[[T]], %[[M]], %[[N]], %[[K]], %{{.*}}, %[[M]],
  linalg.matmul indexing_maps = [#a_t, #b, #c]
      ins(%at, %b : memref<512x16xf32>, memref<512x128xf32>) outs(%c : memref<16x128xf32>)
  // Batched: 4 entries, strides 8*32, 32*16, 8*16.
  // CHECK-DAG: %[[B4:.*]] = arith.constant 4 : i64
  // CHECK-DAG: %[[SA:.*]] = arith.constant 256 : i64
  // CHECK: call @tprt_rt_sgemm(%[[CTX]], %[[F]], %[[F]], %[[T]], {{.*}}, %[[B4]], %[[ONE]], %[[SA]], %[[ZERO]], %[[K]], %[[ZERO]], %[[N]], %[[ZERO]])
  linalg.batch_matmul ins(%ba, %bb : memref<4x8x32xf32>, memref<4x32x16xf32>) outs(%bc : memref<4x8x16xf32>)
  // CHECK-NOT: linalg.matmul
  // CHECK-NOT: linalg.batch_matmul
  return
}

// CHECK-LABEL: func.func @attention_scores
// Q(b, i, h, d) K(b, j, h, d) -> S(b, h, i, j) on [2, 8, 4, 16]: a (b, h)
// batch of Q K^T with M = N = 8, K = 16, lda = ldb = 4*16 = 64, ldc = 8;
// batch strides Q: 8*4*16 = 512 and 16; S: 4*8*8 = 256 and 64.
// CHECK-DAG: %[[F:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[T:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : i64
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : i64
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : i64
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[C512:.*]] = arith.constant 512 : i64
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : i64
// CHECK: call @tprt_rt_sgemm(%{{.*}}, %[[F]], %[[T]], %[[T]], %[[C8]], %[[C8]], %[[C16]], %{{.*}}, %[[C64]], %{{.*}}, %[[C64]], %{{.*}}, %[[C8]], %[[C2]], %[[C4]], %[[C512]], %[[C16]], %[[C512]], %[[C16]], %[[C256]], %[[C64]])
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
// CHECK-NOT: linalg.fill
// CHECK: call @tprt_rt_sgemm(%{{.*}}, %c0_i32, %c0_i32, %c0_i32,
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<16x128xf32>)
// CHECK: call @tprt_rt_sgemm(%{{.*}}, %c0_i32, %c0_i32, %c1_i32,
// CHECK: linalg.fill
// CHECK: call @tprt_rt_sgemm(%{{.*}}, %c0_i32, %c0_i32, %c1_i32,
// CHECK: linalg.fill
// CHECK: memref.copy
// CHECK: call @tprt_rt_sgemm(%{{.*}}, %c0_i32, %c0_i32, %c1_i32,
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
// CHECK-NOT: linalg.fill
// CHECK: call @tprt_rt_sgemm(%{{.*}}, %c0_i32, %c0_i32, %c0_i32,
// CHECK: scf.for
// CHECK: memref.subview %[[C]]
// CHECK: %[[D:.*]] = memref.alloc() : memref<16x128xf32>
// CHECK: scf.for
// CHECK: memref.subview %[[D]]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[D]] : memref<16x128xf32>)
// CHECK: call @tprt_rt_sgemm(%{{.*}}, %c0_i32, %c0_i32, %c1_i32,
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
  // CHECK: call @tprt_rt_sgemm
  // CHECK: memref.dealloc %[[COPY]]
  linalg.matmul ins(%a, %b : memref<16x512xf32, strided<[1024, 1]>>, memref<512x128xf32>) outs(%c : memref<16x128xf32>)
  // Strided output, integers: loops.
  // CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<16x512xf32>, memref<512x128xf32>) outs(%{{.*}} : memref<16x128xf32, strided<[256, 1]>>)
  linalg.matmul ins(%ac, %b : memref<16x512xf32>, memref<512x128xf32>) outs(%cs : memref<16x128xf32, strided<[256, 1]>>)
  // CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<16x512xi32>, memref<512x128xi32>)
  linalg.matmul ins(%i, %ib : memref<16x512xi32>, memref<512x128xi32>) outs(%ic : memref<16x128xi32>)
  // f16 storage: the narrow entry point with the dtype code (2), f32 inside.
  // CHECK: %[[F16:.*]] = arith.constant 2 : i32
  // CHECK: call @tprt_rt_gemm_narrow(%{{.*}}, %[[F16]],
  linalg.matmul ins(%h, %hb : memref<16x512xf16>, memref<512x128xf16>) outs(%hc : memref<16x128xf16>)
  return
}
// CHECK-DAG: func.func private @tprt_rt_gemm_narrow(!llvm.ptr, i32, i32, i32, i32, i64,
// CHECK-DAG: func.func private @tprt_rt_sgemm(!llvm.ptr, i32, i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64)
