// RUN: tp-opt %s --tp-convert-gemm-to-blas=epilogues=true --cse | FileCheck %s
// RUN: tp-opt %s --tp-convert-gemm-to-blas --cse | FileCheck %s --check-prefix=PLAIN

// Tests that with `epilogues` (as --tp-lower-to-cuda runs it) the loops
// around a GEMM that its call can do go into it: the bias and residual loop
// that writes its output before it (the call's bias and C), and a GELU in
// its tanh form after it (the call writes the GELU's output; the fresh
// buffer goes). And that loops that only look alike stay: a bias read by
// the rows, a residual that overlaps the output, a write between the loop
// and the GEMM, GELU's erf form, a GELU whose input is read again.
// Descriptor fields: {dtype, trans_a, trans_b, epilogue, M, N, K, lda, ldb,
// ldc, ldd, ...}; epilogue 1 is the bias, 2 GELU, 3 both.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#last2 = affine_map<(d0, d1, d2) -> (d1, d2)>
#qa = affine_map<(b, s, h, d, k) -> (b, s, k)>
#qb = affine_map<(b, s, h, d, k) -> (k, h, d)>
#qc = affine_map<(b, s, h, d, k) -> (b, s, h, d)>
#id4 = affine_map<(b, s, h, d) -> (b, s, h, d)>
#hd = affine_map<(b, s, h, d) -> (h, d)>

// CHECK-DAG: llvm.mlir.global private constant @[[$BIAS:__tp_gemm_desc_[0-9]+]](dense<[0, 0, 0, 1, 16, 32, 64, 64, 32, 32, 32, 1, 1,
// CHECK-DAG: llvm.mlir.global private constant @[[$NONE:__tp_gemm_desc_[0-9]+]](dense<[0, 0, 0, 0, 16, 32, 64, 64, 32, 32, 32, 1, 1,
// CHECK-DAG: llvm.mlir.global private constant @[[$GELU:__tp_gemm_desc_[0-9]+]](dense<[0, 0, 0, 3, 16, 32, 64, 64, 32, 32, 32, 1, 1,
// CHECK-DAG: llvm.mlir.global private constant @[[$HEADS:__tp_gemm_desc_[0-9]+]](dense<[0, 0, 0, 1, 8, 96, 64, 64, 96, 96, 96, 1, 1,
// CHECK-DAG: llvm.mlir.global private constant @[[$PLAINGELU:__tp_gemm_desc_[0-9]+]](dense<[0, 0, 0, 2, 16, 32, 64, 64, 32, 32, 32, 1, 1,
// PLAIN-NOT: dense<[0, 0, 0, {{[1-3]}},

// The bias alone, then residual + bias (C apart from D), then the residual
// being the output itself (D += A B + bias).
// CHECK-LABEL: func.func @addends
// CHECK-SAME: (%[[CTX:[^:]*]]: !llvm.ptr
// CHECK-NOT: linalg.generic
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[D:.*]] = llvm.mlir.addressof @[[$BIAS]]
// CHECK: call @tprt_rt_gemm(%[[CTX]], %[[D]], %{{.*}}, %{{.*}}, %[[NULL]], %[[OUT:[0-9]+]], %[[B:[0-9]+]])
// CHECK: call @tprt_rt_gemm(%[[CTX]], %[[D]], %{{.*}}, %{{.*}}, %[[RES:.*]], %[[OUT]], %[[B]])
// CHECK: call @tprt_rt_gemm(%[[CTX]], %[[D]], %{{.*}}, %{{.*}}, %[[OUT]], %[[OUT]], %[[B]])
// CHECK-NOT: linalg.generic
// PLAIN-LABEL: func.func @addends
// PLAIN-COUNT-3: linalg.generic
func.func @addends(%ctx: !llvm.ptr, %a: memref<16x64xf32>, %w: memref<64x32xf32>,
                   %bias: memref<32xf32>, %res: memref<16x32xf32>, %out: memref<16x32xf32>) {
  linalg.generic {indexing_maps = [#col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<32xf32>) outs(%out : memref<16x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.matmul ins(%a, %w : memref<16x64xf32>, memref<64x32xf32>) outs(%out : memref<16x32xf32>)
  linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%res, %bias : memref<16x32xf32>, memref<32xf32>) outs(%out : memref<16x32xf32>) {
  ^bb0(%r: f32, %x: f32, %o: f32):
    %s = arith.addf %x, %r : f32
    linalg.yield %s : f32
  }
  linalg.matmul ins(%a, %w : memref<16x64xf32>, memref<64x32xf32>) outs(%out : memref<16x32xf32>)
  linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%out, %bias : memref<16x32xf32>, memref<32xf32>) outs(%out : memref<16x32xf32>) {
  ^bb0(%r: f32, %x: f32, %o: f32):
    %s = arith.addf %r, %x : f32
    linalg.yield %s : f32
  }
  linalg.matmul ins(%a, %w : memref<16x64xf32>, memref<64x32xf32>) outs(%out : memref<16x32xf32>)
  return
}

// Attention's head projection: the bias [heads, dim] read by the output's
// two column dimensions (N = 4 * 24 = 96).
// CHECK-LABEL: func.func @head_bias
// CHECK-NOT: linalg.generic
// CHECK: llvm.mlir.addressof @[[$HEADS]]
// CHECK: call @tprt_rt_gemm
func.func @head_bias(%ctx: !llvm.ptr, %x: memref<1x8x64xf32>, %w: memref<64x4x24xf32>,
                     %bias: memref<4x24xf32>, %out: memref<1x8x4x24xf32>) {
  linalg.generic {indexing_maps = [#hd, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : memref<4x24xf32>) outs(%out : memref<1x8x4x24xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#qa, #qb, #qc],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<1x8x64xf32>, memref<64x4x24xf32>) outs(%out : memref<1x8x4x24xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// Bias then GELU (tanh form, written as x * sigmoid-like arithmetic: 0.5 x
// (1 + tanh(c (x + 0.044715 x^3)))): one call writes the GELU's output; the
// fresh buffer goes.
// CHECK-LABEL: func.func @bias_gelu
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.generic
// CHECK: llvm.mlir.addressof @[[$GELU]]
// CHECK: memref.extract_aligned_pointer_as_index %arg4
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: %[[GOUT:.*]] = llvm.inttoptr
// CHECK: call @tprt_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[GOUT]], %{{[0-9]+}})
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @bias_gelu(%ctx: !llvm.ptr, %a: memref<16x64xf32>, %w: memref<64x32xf32>,
                     %bias: memref<32xf32>, %out: memref<16x32xf32>) {
  %h = memref.alloc() : memref<16x32xf32>
  linalg.generic {indexing_maps = [#col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<32xf32>) outs(%h : memref<16x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.matmul ins(%a, %w : memref<16x64xf32>, memref<64x32xf32>) outs(%h : memref<16x32xf32>)
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h : memref<16x32xf32>) outs(%out : memref<16x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %c = arith.constant 0.797884583 : f32
    %k = arith.constant 0.044715 : f32
    %three = arith.constant 3.0 : f32
    %cube = math.powf %x, %three : f32
    %kc = arith.mulf %k, %cube : f32
    %inner = arith.addf %x, %kc : f32
    %scaled = arith.mulf %c, %inner : f32
    %t = math.tanh %scaled : f32
    %onet = arith.addf %one, %t : f32
    %hx = arith.mulf %x, %half : f32
    %g = arith.mulf %hx, %onet : f32
    linalg.yield %g : f32
  }
  memref.dealloc %h : memref<16x32xf32>
  return
}

// A GELU with no bias before it: the GELU epilogue alone, the output
// overwritten (the fill gone, C null).
// CHECK-LABEL: func.func @gelu_only
// CHECK: %[[NULL:.*]] = llvm.mlir.zero
// CHECK: llvm.mlir.addressof @[[$PLAINGELU]]
// CHECK: call @tprt_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[NULL]], %{{.*}}, %[[NULL]])
// CHECK-NOT: linalg
func.func @gelu_only(%ctx: !llvm.ptr, %a: memref<16x64xf32>, %w: memref<64x32xf32>,
                     %out: memref<16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %h = memref.alloc() : memref<16x32xf32>
  linalg.fill ins(%zero : f32) outs(%h : memref<16x32xf32>)
  linalg.matmul ins(%a, %w : memref<16x64xf32>, memref<64x32xf32>) outs(%h : memref<16x32xf32>)
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h : memref<16x32xf32>) outs(%out : memref<16x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %c = arith.constant 0.797884583 : f32
    %k = arith.constant 0.044715 : f32
    %x2 = arith.mulf %x, %x : f32
    %x3 = arith.mulf %x2, %x : f32
    %kc = arith.mulf %x3, %k : f32
    %inner = arith.addf %kc, %x : f32
    %scaled = arith.mulf %inner, %c : f32
    %t = math.tanh %scaled : f32
    %onet = arith.addf %t, %one : f32
    %g0 = arith.mulf %onet, %x : f32
    %g = arith.mulf %g0, %half : f32
    linalg.yield %g : f32
  }
  memref.dealloc %h : memref<16x32xf32>
  return
}

// The same GELU in bf16, its constants rounded (0.797884583 is 0.796875):
// within bf16's rounding of the tanh form, the epilogue.
// CHECK-LABEL: func.func @gelu_only_bf16
// CHECK: %[[NULL16:.*]] = llvm.mlir.zero
// CHECK: call @tprt_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[NULL16]], %{{.*}}, %[[NULL16]])
// CHECK-NOT: linalg
func.func @gelu_only_bf16(%ctx: !llvm.ptr, %a: memref<16x64xbf16>, %w: memref<64x32xbf16>,
                          %out: memref<16x32xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %h = memref.alloc() : memref<16x32xbf16>
  linalg.fill ins(%zero : bf16) outs(%h : memref<16x32xbf16>)
  linalg.matmul ins(%a, %w : memref<16x64xbf16>, memref<64x32xbf16>) outs(%h : memref<16x32xbf16>)
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h : memref<16x32xbf16>) outs(%out : memref<16x32xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    %half = arith.constant 0.5 : bf16
    %one = arith.constant 1.0 : bf16
    %c = arith.constant 0.797884583 : bf16
    %k = arith.constant 0.044715 : bf16
    %x2 = arith.mulf %x, %x : bf16
    %x3 = arith.mulf %x2, %x : bf16
    %kc = arith.mulf %x3, %k : bf16
    %inner = arith.addf %kc, %x : bf16
    %scaled = arith.mulf %inner, %c : bf16
    %t = math.tanh %scaled : bf16
    %onet = arith.addf %t, %one : bf16
    %g0 = arith.mulf %onet, %x : bf16
    %g = arith.mulf %g0, %half : bf16
    linalg.yield %g : bf16
  }
  memref.dealloc %h : memref<16x32xbf16>
  return
}

// What stays: a bias read by the rows; a residual that overlaps the output
// without being it; a write between the loop and the GEMM; GELU's erf form
// (a different function by up to 5e-4); a GELU whose input is read again.
// CHECK-LABEL: func.func @look_alikes
// CHECK: linalg.generic
// CHECK: llvm.mlir.addressof @[[$NONE]]
// CHECK: call @tprt_rt_gemm
// CHECK: linalg.generic
// CHECK: call @tprt_rt_gemm
// CHECK: linalg.generic
// CHECK: linalg.fill
// CHECK: call @tprt_rt_gemm
// CHECK: call @tprt_rt_gemm
// CHECK: linalg.generic
// CHECK: call @tprt_rt_gemm
// CHECK: linalg.generic
// CHECK: memref.copy
func.func @look_alikes(%ctx: !llvm.ptr, %a: memref<16x64xf32>, %w: memref<64x32xf32>,
                       %rowbias: memref<16xf32>, %big: memref<32x32xf32>,
                       %other: memref<16x32xf32>, %out: memref<16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  // Rows.
  linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%rowbias : memref<16xf32>) outs(%out : memref<16x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.matmul ins(%a, %w : memref<16x64xf32>, memref<64x32xf32>) outs(%out : memref<16x32xf32>)
  // Overlap: the residual and the output are two views of %big's rows
  // (the same rows here; any overlap but identity is refused alike).
  %topc = memref.reinterpret_cast %big to offset: [0], sizes: [16, 32], strides: [32, 1] : memref<32x32xf32> to memref<16x32xf32>
  %flat = memref.collapse_shape %topc [[0, 1]] : memref<16x32xf32> into memref<512xf32>
  %dstv = memref.expand_shape %flat [[0, 1]] output_shape [16, 32] : memref<512xf32> into memref<16x32xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%topc : memref<16x32xf32>) outs(%dstv : memref<16x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.matmul ins(%a, %w : memref<16x64xf32>, memref<64x32xf32>) outs(%dstv : memref<16x32xf32>)
  // A write between.
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%other : memref<16x32xf32>) outs(%out : memref<16x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.fill ins(%zero : f32) outs(%other : memref<16x32xf32>)
  linalg.matmul ins(%a, %w : memref<16x64xf32>, memref<64x32xf32>) outs(%out : memref<16x32xf32>)
  // Erf form.
  %h = memref.alloc() : memref<16x32xf32>
  linalg.fill ins(%zero : f32) outs(%h : memref<16x32xf32>)
  linalg.matmul ins(%a, %w : memref<16x64xf32>, memref<64x32xf32>) outs(%h : memref<16x32xf32>)
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h : memref<16x32xf32>) outs(%out : memref<16x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %r = arith.constant 0.707106769 : f32
    %s = arith.mulf %x, %r : f32
    %e = math.erf %s : f32
    %onee = arith.addf %one, %e : f32
    %hx = arith.mulf %x, %half : f32
    %g = arith.mulf %hx, %onee : f32
    linalg.yield %g : f32
  }
  // Read again after.
  %h2 = memref.alloc() : memref<16x32xf32>
  linalg.fill ins(%zero : f32) outs(%h2 : memref<16x32xf32>)
  linalg.matmul ins(%a, %w : memref<16x64xf32>, memref<64x32xf32>) outs(%h2 : memref<16x32xf32>)
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h2 : memref<16x32xf32>) outs(%out : memref<16x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %c = arith.constant 0.797884583 : f32
    %k = arith.constant 0.044715 : f32
    %x2 = arith.mulf %x, %x : f32
    %x3 = arith.mulf %x2, %x : f32
    %kc = arith.mulf %x3, %k : f32
    %inner = arith.addf %kc, %x : f32
    %scaled = arith.mulf %inner, %c : f32
    %t = math.tanh %scaled : f32
    %onet = arith.addf %t, %one : f32
    %g0 = arith.mulf %onet, %x : f32
    %g = arith.mulf %g0, %half : f32
    linalg.yield %g : f32
  }
  memref.copy %h2, %other : memref<16x32xf32> to memref<16x32xf32>
  memref.dealloc %h : memref<16x32xf32>
  memref.dealloc %h2 : memref<16x32xf32>
  return
}
