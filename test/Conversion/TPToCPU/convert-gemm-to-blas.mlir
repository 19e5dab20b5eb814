// RUN: tp-opt %s --tp-convert-gemm-to-blas --cse | FileCheck %s

// Tests that f32 matmuls and batch matmuls become tprt_rt_sgemm calls with
// the right transposes, sizes, leading dimensions and batch strides; that
// strided inputs are copied; that strided outputs and other element types
// are left to the loops.

#a_t = affine_map<(m, n, k) -> (k, m)>
#b = affine_map<(m, n, k) -> (k, n)>
#b_t = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>

// CHECK-LABEL: func.func @gemms
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr
func.func @gemms(%ctx: !llvm.ptr, %a: memref<16x512xf32>, %b: memref<512x128xf32>,
                 %c: memref<16x128xf32>, %bt: memref<128x512xf32>, %at: memref<512x16xf32>,
                 %ba: memref<4x8x32xf32>, %bb: memref<4x32x16xf32>, %bc: memref<4x8x16xf32>) {
  // Plain: no transposes, batch 1, m=16 n=128 k=512, lda=512 ldb=128 ldc=128.
  // CHECK-DAG: %[[F:.*]] = arith.constant 0 : i32
  // CHECK-DAG: %[[M:.*]] = arith.constant 16 : i64
  // CHECK-DAG: %[[N:.*]] = arith.constant 128 : i64
  // CHECK-DAG: %[[K:.*]] = arith.constant 512 : i64
  // CHECK: call @tprt_rt_sgemm(%[[CTX]], %[[F]], %[[F]], %{{.*}}, %[[M]], %[[N]], %[[K]], %{{.*}}, %[[K]], %{{.*}}, %{{.*}}, %[[N]], %{{.*}}, %{{.*}}, %[[N]], %{{.*}})
  linalg.matmul ins(%a, %b : memref<16x512xf32>, memref<512x128xf32>) outs(%c : memref<16x128xf32>)
  // B transposed (stored n x k).
  // CHECK: %[[T:.*]] = arith.constant 1 : i32
  // CHECK: call @tprt_rt_sgemm(%[[CTX]], %{{.*}}, %[[T]],
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, #b_t, #c]
      ins(%a, %bt : memref<16x512xf32>, memref<128x512xf32>) outs(%c : memref<16x128xf32>)
  // A transposed (stored k x m).
  // CHECK: call @tprt_rt_sgemm(%[[CTX]], %[[T]], %[[F]],
  linalg.matmul indexing_maps = [#a_t, #b, #c]
      ins(%at, %b : memref<512x16xf32>, memref<512x128xf32>) outs(%c : memref<16x128xf32>)
  // Batched: batch 4, strides 8*32, 32*16, 8*16.
  // CHECK-DAG: %[[B4:.*]] = arith.constant 4 : i64
  // CHECK: call @tprt_rt_sgemm(%[[CTX]], %{{.*}}, %{{.*}}, %[[B4]],
  linalg.batch_matmul ins(%ba, %bb : memref<4x8x32xf32>, memref<4x32x16xf32>) outs(%bc : memref<4x8x16xf32>)
  // CHECK-NOT: linalg.matmul
  // CHECK-NOT: linalg.batch_matmul
  return
}

// CHECK-LABEL: func.func @strided
func.func @strided(%ctx: !llvm.ptr, %a: memref<16x512xf32, strided<[1024, 1]>>, %b: memref<512x128xf32>,
                   %c: memref<16x128xf32>, %cs: memref<16x128xf32, strided<[256, 1]>>,
                   %h: memref<16x512xf16>, %hb: memref<512x128xf16>, %hc: memref<16x128xf16>,
                   %ac: memref<16x512xf32>) {
  // A strided: copied, multiplied, freed.
  // CHECK: %[[COPY:.*]] = memref.alloc() : memref<16x512xf32>
  // CHECK: memref.copy %{{.*}}, %[[COPY]]
  // CHECK: call @tprt_rt_sgemm
  // CHECK: memref.dealloc %[[COPY]]
  linalg.matmul ins(%a, %b : memref<16x512xf32, strided<[1024, 1]>>, memref<512x128xf32>) outs(%c : memref<16x128xf32>)
  // Strided output, f16: loops.
  // CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<16x512xf32>, memref<512x128xf32>) outs(%{{.*}} : memref<16x128xf32, strided<[256, 1]>>)
  linalg.matmul ins(%ac, %b : memref<16x512xf32>, memref<512x128xf32>) outs(%cs : memref<16x128xf32, strided<[256, 1]>>)
  // CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<16x512xf16>, memref<512x128xf16>)
  linalg.matmul ins(%h, %hb : memref<16x512xf16>, memref<512x128xf16>) outs(%hc : memref<16x128xf16>)
  return
}
// CHECK: func.func private @tprt_rt_sgemm(!llvm.ptr, i32, i32, i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64)
