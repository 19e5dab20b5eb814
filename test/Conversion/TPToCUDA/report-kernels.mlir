// RUN: tp-opt %s --tp-report-kernels -o /dev/null 2>&1 | FileCheck %s
// RUN: not tp-opt %s --tp-report-kernels=cost-model=%t.missing -o /dev/null 2>&1 | FileCheck %s --check-prefix=MODEL
// RUN: tp-opt %s --tp-report-kernels=matmul-precision=high -o /dev/null 2>&1 | FileCheck %s --check-prefix=TF32
// RUN: not tp-opt %s --tp-report-kernels=matmul-precision=fast -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADPRECISION

// Each kernel (the tp.cost tp-map-linalg-to-gpu left on it) and each GEMM call
// (its tprt_gemm_desc) with its roofline time on the H200 model (4 TB/s, 50
// TFLOP/s for f32): 4 MB are 1 us, a 2 Gflop f32 GEMM 40 us (its C read and
// written: it accumulates); an epilogue says what it adds (a residual: C
// apart from D; a bias; GELU). A run of @step counts its two calls of
// @layer (a kernel and a GEMM each). A launch without a tp.cost says so.

// CHECK: tp-report: GPU kernels and GEMM calls modelled on h200 (roofline: the larger of the bytes at 4.00 TB/s and the flops at 50 TFLOP/s for f32, 600 for 16-bit GEMMs;
// CHECK: tp-report @layer:   kernel 0: 4 blocks x 128 threads, 2 ops fused, 4.00 MB, 1.00 Mflop: 1.00 us
// CHECK: tp-report @layer:   gemm 0: 1000 x 1000 x 1000 f32, 2.00 Gflop, 16.00 MB: 40.00 us
// CHECK: tp-report @layer: 1 kernel and 1 GEMM call a run: 41.00 us modelled (kernels 1.00 us, GEMMs 40.00 us)
// CHECK: tp-report @step:   kernel 0: 2 blocks x 256 threads, no cost recorded
// CHECK: tp-report @step:   gemm 0: 10 x 10 x 10 16-bit, batch 6, 12000 flop, 3.6 kB: 0.00 us
// CHECK: tp-report @step:   gemm 1: 10 x 10 x 10 f32, + residual, + bias, GELU, 2000 flop, 1.6 kB: 0.00 us
// CHECK: tp-report @step: 3 kernels and 4 GEMM calls a run (with 2 x @layer): 82.00 us modelled (kernels 2.00 us, GEMMs 80.00 us)
// A call in a loop (a grouped-query attention's batch beyond the call's
// two batch loops) counts once per iteration: 4 calls of a batch of 6.
// CHECK: tp-report @grouped:   gemm 0: 10 x 10 x 10 16-bit, batch 24 in 4 calls, 48000 flop, 14.4 kB: 0.00 us
// CHECK: tp-report @grouped: 0 kernels and 4 GEMM calls a run
// A grid known at run time only says so.
// CHECK: tp-report @dynamic:   kernel 0: a run-time number of blocks x 64 threads, no cost recorded
// The attention kernel's mma.sync flops (tensor_flops, part of flops) at the
// 16-bit rate: 60 Gflop at 600 TFLOP/s, 100 us, plus the other 1 Gflop at 50,
// 20 us.
// CHECK: tp-report @tensor:   kernel 0: 8 blocks x 128 threads, 7 ops fused, 1.00 MB, 61.00 Gflop (60.00 Gflop on tensor cores): 120.00 us
// MODEL: error: tp-report-kernels: cannot read the machine model
// At matmul precision 'high', f32 GEMMs run on TF32 tensor cores: 300
// TFLOP/s on the H200 model; the 2 Gflop GEMM's 16 MB take
// (4 us): its flops take longer, 2e9 / 3e14 s = 6.67 us.
// TF32: flops at 300 TFLOP/s for f32 (matmul precision 'high'), 600 for 16-bit GEMMs
// TF32: tp-report @layer:   gemm 0: 1000 x 1000 x 1000 f32, 2.00 Gflop, 16.00 MB: 6.67 us
// BADPRECISION: error: tp-report-kernels: matmul precision 'fast' is not one of highest, high, medium

// f32, 1000^3, C = D.
llvm.mlir.global private constant @__tp_gemm_desc_0(dense<[0, 0, 0, 0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]> : tensor<21xi64>) : !llvm.array<21 x i64>
// bf16, 10^3, a batch of 2 x 3.
llvm.mlir.global private constant @__tp_gemm_desc_1(dense<[3, 0, 0, 0, 10, 10, 10, 10, 10, 10, 10, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0]> : tensor<21xi64>) : !llvm.array<21 x i64>
// f32, 10^3, bias and GELU.
llvm.mlir.global private constant @__tp_gemm_desc_2(dense<[0, 0, 0, 3, 10, 10, 10, 10, 10, 10, 10, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]> : tensor<21xi64>) : !llvm.array<21 x i64>

func.func private @layer(%ctx: !llvm.ptr, %p: !llvm.ptr) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    gpu.terminator
  } {tp.cost = {bytes = 4000000 : i64, flops = 1000000 : i64, ops = 2 : i64}}
  %d = llvm.mlir.addressof @__tp_gemm_desc_0 : !llvm.ptr
  %null = llvm.mlir.zero : !llvm.ptr
  func.call @tprt_rt_gemm(%ctx, %d, %p, %p, %p, %p, %null)
      : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  return
}

func.func @step(%ctx: !llvm.ptr, %p: !llvm.ptr, %q: !llvm.ptr) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  func.call @layer(%ctx, %p) : (!llvm.ptr, !llvm.ptr) -> ()
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  func.call @layer(%ctx, %p) : (!llvm.ptr, !llvm.ptr) -> ()
  %null = llvm.mlir.zero : !llvm.ptr
  %narrow = llvm.mlir.addressof @__tp_gemm_desc_1 : !llvm.ptr
  func.call @tprt_rt_gemm(%ctx, %narrow, %p, %p, %null, %p, %null)
      : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  %gelu = llvm.mlir.addressof @__tp_gemm_desc_2 : !llvm.ptr
  func.call @tprt_rt_gemm(%ctx, %gelu, %p, %p, %q, %p, %q)
      : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  return
}

func.func @grouped(%ctx: !llvm.ptr, %p: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %null = llvm.mlir.zero : !llvm.ptr
  %narrow = llvm.mlir.addressof @__tp_gemm_desc_1 : !llvm.ptr
  scf.for %b = %c0 to %c4 step %c1 {
    func.call @tprt_rt_gemm(%ctx, %narrow, %p, %p, %null, %p, %null)
        : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  }
  return
}

func.func @dynamic(%ctx: !llvm.ptr, %n: index) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

func.func @tensor(%ctx: !llvm.ptr) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c8, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    gpu.terminator
  } {tp.cost = {bytes = 1000000 : i64, flops = 61000000000 : i64, ops = 7 : i64, tensor_flops = 60000000000 : i64}}
  return
}

func.func private @tprt_rt_gemm(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
