// RUN: tp-opt %s --tp-report-kernels -o /dev/null 2>&1 | FileCheck %s
// RUN: not tp-opt %s --tp-report-kernels=cost-model=%t.missing -o /dev/null 2>&1 | FileCheck %s --check-prefix=MODEL

// Each kernel (the tp.cost tp-map-linalg-to-gpu left on it) and each GEMM call
// with its roofline time on the H200 model (4 TB/s, 50 TFLOP/s for f32): 4 MB
// are 1 us, a 2 Gflop f32 GEMM 40 us (its C read and written: it accumulates);
// a run of @step counts its two calls of @layer (a kernel and a GEMM each). A
// launch without a tp.cost says so.

// CHECK: tp-report: GPU kernels and GEMM calls modelled on h200 (roofline: the larger of the bytes at 4.00 TB/s and the flops at 50 TFLOP/s for f32, 600 for 16-bit GEMMs;
// CHECK: tp-report @layer:   kernel 0: 4 blocks x 128 threads, 2 ops fused, 4.00 MB, 1.00 Mflop: 1.00 us
// CHECK: tp-report @layer:   gemm 0: 1000 x 1000 x 1000 f32, 2.00 Gflop, 16.00 MB: 40.00 us
// CHECK: tp-report @layer: 1 kernel and 1 GEMM call a run: 41.00 us modelled (kernels 1.00 us, GEMMs 40.00 us)
// CHECK: tp-report @step:   kernel 0: 2 blocks x 256 threads, no cost recorded
// CHECK: tp-report @step:   gemm 0: 10 x 10 x 10 16-bit, batch 6, 12000 flop, 3.6 kB: 0.00 us
// CHECK: tp-report @step: 3 kernels and 3 GEMM calls a run (with 2 x @layer): 82.00 us modelled (kernels 2.00 us, GEMMs 80.00 us)
// MODEL: error: tp-report-kernels: cannot read the machine model

func.func private @layer(%ctx: !llvm.ptr, %p: !llvm.ptr) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    gpu.terminator
  } {tp.cost = {bytes = 4000000 : i64, flops = 1000000 : i64, ops = 2 : i64}}
  %i0 = arith.constant 0 : i32
  %i1 = arith.constant 1 : i32
  %n = arith.constant 1000 : i64
  %one = arith.constant 1 : i64
  %zero = arith.constant 0 : i64
  func.call @tprt_rt_sgemm(%ctx, %i0, %i0, %i1, %n, %n, %n, %p, %n, %p, %n, %p, %n,
                           %one, %one, %zero, %zero, %zero, %zero, %zero, %zero)
      : (!llvm.ptr, i32, i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64,
         !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
  return
}

func.func @step(%ctx: !llvm.ptr, %p: !llvm.ptr) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  func.call @layer(%ctx, %p) : (!llvm.ptr, !llvm.ptr) -> ()
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  func.call @layer(%ctx, %p) : (!llvm.ptr, !llvm.ptr) -> ()
  %bf16 = arith.constant 5 : i32
  %i0 = arith.constant 0 : i32
  %ten = arith.constant 10 : i64
  %two = arith.constant 2 : i64
  %three = arith.constant 3 : i64
  %zero = arith.constant 0 : i64
  func.call @tprt_rt_gemm_narrow(%ctx, %bf16, %i0, %i0, %i0, %ten, %ten, %ten, %p, %ten, %p, %ten, %p, %ten,
                                 %two, %three, %zero, %zero, %zero, %zero, %zero, %zero)
      : (!llvm.ptr, i32, i32, i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64,
         !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
  return
}

func.func private @tprt_rt_sgemm(!llvm.ptr, i32, i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64)
func.func private @tprt_rt_gemm_narrow(!llvm.ptr, i32, i32, i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64)
