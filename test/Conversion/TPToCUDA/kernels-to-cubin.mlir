// REQUIRES: cuda
// RUN: tp-opt %s --tp-map-linalg-to-gpu --gpu-kernel-outlining \
// RUN:   | mlir-opt --nvvm-attach-target="chip=sm_90" --lower-affine --convert-scf-to-cf \
// RUN:       --convert-gpu-to-nvvm --reconcile-unrealized-casts --gpu-module-to-binary="format=bin toolkit=%cuda_root" \
// RUN:   | FileCheck %s

// The kernels --tp-map-linalg-to-gpu makes go through MLIR's own GPU path
// (outlining, NVVM, gpu-module-to-binary with CUDA 13's ptxas): a row kernel
// (the pointwise exp and the block reduction over its rows, fused; gpu.all_reduce:
// warp shuffles and shared memory), a thread-per-row reduction and a pointwise
// kernel each become a cubin for sm_90.

// CHECK-COUNT-3: gpu.binary @{{[a-z_0-9]+}}  [#gpu.object<#nvvm.target<chip = "sm_90">
// CHECK-NOT: gpu.func

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @kernels(%x: memref<4x1000xf32>, %y: memref<4x1000xf32>, %s: memref<4xf32>,
                   %m: memref<4x8xf32>, %t: memref<4xf32>, %z: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x1000xf32>) outs(%y : memref<4x1000xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<4x1000xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %sq, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%m : memref<4x8xf32>) outs(%t : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maxnumf %acc, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : memref<4x8xf32>) outs(%z : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  return
}
