// RUN: tp-opt %s --tp-lower-to-cpu | FileCheck %s
// RUN: tp-opt %tp_src_root/examples/mlp.mlir --tp-spmd --tp-lower-to-cpu | FileCheck %s --check-prefix=MLP

// Tests the whole CPU lowering of a local-form function: everything is LLVM,
// results are out-parameters after the arguments, the arena of the
// intermediates (tp-plan-arena: the all_reduce's result) last, the context first,
// the runtime is called through the context's table (no runtime symbol), the
// entry wrapper loads every buffer pointer (the function it calls is internal,
// reached through it only), the manifest is a global, and no
// tp op or mesh is left.

tp.mesh @world ["tp" = 2]

// CHECK-NOT: tp.
// CHECK-NOT: @tprt_rt_
// CHECK: llvm.func internal @f(%[[FCTX:[a-z0-9]+]]: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr)
// CHECK: %[[TABLE:.*]] = llvm.load %[[FCTX]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[SLOT:.*]] = llvm.getelementptr inbounds %[[TABLE]][8] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: %[[FN:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call %[[FN]](%[[FCTX]], {{.*}}) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i32, i32, i64) -> ()
// CHECK-NOT: @tprt_rt_
// CHECK: llvm.func @tprt_entry_f(%[[CTX:.*]]: !llvm.ptr, %[[BUFS:.*]]: !llvm.ptr)
// CHECK: %[[S0:.*]] = llvm.getelementptr %[[BUFS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[BUFS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[S2:.*]] = llvm.getelementptr %[[BUFS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P2:.*]] = llvm.load %[[S2]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call @f(%[[CTX]], %[[P0]], %[[P1]], %[[P2]])
// CHECK: llvm.mlir.global external constant @tprt_manifest("tprt-manifest 4\0Aabi 6\0Atarget cpu\0Afunc \22f\22 1 1\0Amesh \22world\22 1 \22tp\22 2\0Aarg 0 f32 1 8 s=0|\0Aresult 0 f32 1 8 s=0|\0Aarena 64\0Aend\0A\00")
func.func @f(%x: tensor<4xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]>})
    -> (tensor<4xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]>})
    attributes {tp.spmd = @world} {
  %r = tp.all_reduce sum %x over @world ["tp"] : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %m = linalg.mul ins(%r, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// MLP-NOT: tp.
// MLP: llvm.func internal @mlp(
// MLP: llvm.getelementptr inbounds %{{.*}}[8] : (!llvm.ptr) -> !llvm.ptr, i8
// MLP: llvm.func @tprt_entry_mlp(
// MLP: @tprt_manifest("tprt-manifest 4\0Aabi 6\0Atarget cpu\0Afunc \22mlp\22 4 1\0Amesh \22world\22 1 \22tp\22 4\0Aarg 0 f32 2 16 512 s=/|\0Aarg 1 f32 2 512 2048 s=/0|\0Aarg 2 f32 1 2048 s=0|\0Aarg 3 f32 2 2048 512 s=0/|\0Aresult 0 f32 2 16 512 s=/|\0Aarena 65536\0Aend\0A\00")
