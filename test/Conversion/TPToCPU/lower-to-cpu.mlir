// RUN: tp-opt %s --tp-lower-to-cpu | FileCheck %s
// RUN: tp-opt %tp_src_root/examples/mlp.mlir --tp-spmd --tp-lower-to-cpu | FileCheck %s --check-prefix=MLP

// Tests the whole CPU lowering of a local-form function: everything is LLVM,
// results are out-parameters after the arguments, the context comes first,
// the entry wrapper loads every buffer pointer, the manifest is a global, and
// no tp op or mesh is left.

tp.mesh @world ["tp" = 2]

// CHECK-NOT: tp.
// CHECK-LABEL: llvm.func @f(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK: llvm.call @tprt_rt_all_reduce
// CHECK: llvm.func @tprt_rt_all_reduce(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i32, i32, i64)
// CHECK: llvm.func @tprt_entry_f(%[[CTX:.*]]: !llvm.ptr, %[[BUFS:.*]]: !llvm.ptr)
// CHECK: %[[S0:.*]] = llvm.getelementptr %[[BUFS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[BUFS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call @f(%[[CTX]], %[[P0]], %[[P1]])
// CHECK: llvm.mlir.global external constant @tprt_manifest("tprt-manifest 1\0Afunc f 1 1\0Amesh world 1 tp=2\0Aarg 0 f32 1 8 s=0|\0Aresult 0 f32 1 8 s=0|\0Aend\0A\00")
func.func @f(%x: tensor<4xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]>})
    -> (tensor<4xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]>})
    attributes {tp.spmd = @world} {
  %r = tp.all_reduce sum %x over @world ["tp"] : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %m = linalg.mul ins(%r, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// MLP-NOT: tp.
// MLP: llvm.func @mlp(
// MLP: llvm.call @tprt_rt_all_reduce
// MLP: llvm.func @tprt_entry_mlp(
// MLP: @tprt_manifest("tprt-manifest 1\0Afunc mlp 4 1\0Amesh world 1 tp=4\0Aarg 0 f32 2 16 512 s=/|\0Aarg 1 f32 2 512 2048 s=/0|\0Aarg 2 f32 1 2048 s=0|\0Aarg 3 f32 2 2048 512 s=0/|\0Aresult 0 f32 2 16 512 s=/|\0Aend\0A\00")
