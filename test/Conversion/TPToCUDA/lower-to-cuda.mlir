// REQUIRES: cuda
// RUN: tp-opt %s --tp-lower-to-cuda="format=isa" | FileCheck %s

// The whole CUDA lowering of a local-form function (one PTX image holding every
// kernel, tp-merge-kernel-modules; PTX so that
// their text can be read): each kernel takes as many parameters as its
// launch passes (whole memref descriptors: pointers, offset, sizes,
// strides); the host code calls the runtime only through the context's
// table, in program order: whether this is the rank's first run (fill_once,
// at offset 96), the upload (72) of the constant into the constants' buffer
// then, the GEMM (104) into a fresh buffer (its zeroing dropped: the fill
// has its own empty tensor, tp-unshare-fills, so no fill kernel runs), the
// all_reduce (8), the bias+tanh kernel (launch, 80); the other buffers are
// views of the arena (tp-plan-arena: the GEMM's and the all-reduce's
// outputs), so nothing is allocated (56) or freed (64); the manifest says
// target cuda and gives the sizes of the constants' buffer and of the
// arena; no gpu op, mgpu call or generic allocation is left.

// CHECK: @__tp_gpu_image_{{[a-z_]+}}("{{.*}}.target sm_90{{.*}}.visible .entry f_kernel(\0A{{.*}}f_kernel_param_
// CHECK-NOT: .entry f_kernel_0
// CHECK-NOT: @__tp_gpu_image_
// CHECK-NOT: gpu.
// CHECK: llvm.func internal @f(%[[CTX:[a-z0-9]+]]: !llvm.ptr,
// CHECK-NOT: getelementptr inbounds %{{.*}}[56]
// CHECK: getelementptr inbounds %{{.*}}[96]
// CHECK: getelementptr inbounds %{{.*}}[72]
// CHECK: getelementptr inbounds %{{.*}}[104]
// CHECK: getelementptr inbounds %{{.*}}[8]
// CHECK: %[[N19:.*]] = llvm.mlir.constant(19 : i64) : i64
// CHECK: getelementptr inbounds %{{.*}}[80]
// CHECK: llvm.call %{{.*}}(%[[CTX]], {{.*}}, %[[N19]]) :
// CHECK-NOT: getelementptr inbounds %{{.*}}[64]
// CHECK-NOT: mgpu
// CHECK-NOT: _mlir_memref_to_llvm
// CHECK: llvm.func @tprt_entry_f(
// CHECK: @tprt_manifest("tprt-manifest 4\0Aabi 6\0Atarget cuda\0A{{.*}}\0Aconstants 128\0Aarena 4096\0Aend\0A

tp.mesh @world ["tp" = 2]

func.func @f(%x: tensor<16x32xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
             %w: tensor<32x32xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>})
    -> (tensor<16x32xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>})
    attributes {tp.spmd = @world} {
  %zero = arith.constant 0.0 : f32
  %bias = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0]]> : tensor<1x32xf32>
  %e = tensor.empty() : tensor<16x32xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %p = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  %s = tp.all_reduce sum %p over @world ["tp"] : tensor<16x32xf32>
  %b = tensor.collapse_shape %bias [[0, 1]] : tensor<1x32xf32> into tensor<32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%s, %b : tensor<16x32xf32>, tensor<32xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%a: f32, %bb: f32, %o: f32):
    %t = arith.addf %a, %bb : f32
    %g = math.tanh %t : f32
    linalg.yield %g : f32
  } -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
