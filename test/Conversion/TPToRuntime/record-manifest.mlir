// RUN: tp-opt %s --tp-record-manifest --split-input-file --verify-diagnostics | FileCheck %s
// RUN: tp-opt %s --tp-record-manifest=target=cuda --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=CUDA
// RUN: not tp-opt %s --tp-record-manifest=target=tpu --split-input-file 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: tp-opt %s --tp-record-manifest=matmul-precision=high --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=HIGH
// RUN: not tp-opt %s --tp-record-manifest=matmul-precision=fast --split-input-file 2>&1 | FileCheck %s --check-prefix=PRECISION
// HIGH: tp.manifest = "tprt-manifest 4\0Aabi 6\0Atarget cpu\0Aprecision high\0Afunc
// PRECISION: error: tp-record-manifest: matmul precision 'fast' is not one of highest, high, medium
// CUDA: tp.manifest = "tprt-manifest 4\0Aabi 6\0Atarget cuda\0Afunc
// TARGET: error: tp-record-manifest: target 'tpu' is not one of cpu, cuda

// Tests the manifest of a local-form function: global shapes from the
// shardings, axis indices, partial axes, quoted names, argument and result
// names (tp.name), and an unsharded
// function; and the functions it cannot describe.

tp.mesh @grid ["dp" = 2, "tp" = 4]

// CHECK: tp.manifest = "tprt-manifest 4
// CHECK-SAME: abi 6\0Atarget cpu
// CHECK-SAME: func \22f\22 2 1
// CHECK-SAME: mesh \22grid\22 2 \22dp\22 2 \22tp\22 4
// CHECK-SAME: arg 0 f32 2 16 512 s=0/1|
// CHECK-SAME: arg 1 bf16 1 8 s=| \22h.0.ln_1.weight\22
// CHECK-SAME: result 0 f32 2 16 512 s=/|1 \22out\22
// CHECK-SAME: end
// CHECK-SAME: func \22g\22 1 0
// CHECK-SAME: mesh - 0
// CHECK-SAME: arg 0 i64 0 s=|
// Private functions and declarations are not entry points.
// CHECK-NOT: h\22
// The arguments keep their shardings (tp-fold-addends-into-gemm reads
// them), not their names; tp-protect-inputs, not this pass, keeps version
// 4's promise that the entry points never write their inputs.
// CHECK: func.func @f(%{{.*}}: tensor<8x128xf32> {tp.sharding = #tp.sharding<@grid, [{"dp"}, {"tp"}]>}, %{{.*}}: tensor<8xbf16> {tp.sharding = #tp.sharding<@grid, [{}]>})
// CHECK: func.func @g(%{{.*}}: tensor<i64>)
// CHECK: func.func private @h(tensor<i64>)
func.func @f(%x: tensor<8x128xf32> {tp.sharding = #tp.sharding<@grid, [{"dp"}, {"tp"}]>},
             %y: tensor<8xbf16> {tp.sharding = #tp.sharding<@grid, [{}]>, tp.name = "h.0.ln_1.weight"})
    -> (tensor<16x512xf32> {tp.sharding = #tp.sharding<@grid, [{}, {}], partial = ["tp"]>, tp.name = "out"})
    attributes {tp.spmd = @grid} {
  %e = tensor.empty() : tensor<16x512xf32>
  return %e : tensor<16x512xf32>
}
func.func @g(%i: tensor<i64>) {
  return
}
// Private functions and declarations are not entry points.
func.func private @h(%i: tensor<i64>)

// -----

// Names with spaces, quotes and backslashes survive, quoted and escaped.

tp.mesh @"my mesh" ["tensor \"parallel\"" = 2]

// CHECK: tp.manifest = "tprt-manifest 4
// CHECK-SAME: func \22my func\\\\\22 1 0
// CHECK-SAME: mesh \22my mesh\22 1 \22tensor \\\22parallel\\\22\22 2
// CHECK-SAME: arg 0 f32 1 8 s=0|
func.func @"my func\\"(%x: tensor<4xf32> {tp.sharding = #tp.sharding<@"my mesh", [{"tensor \"parallel\""}]>})
    attributes {tp.spmd = @"my mesh"} {
  return
}

// -----

// expected-error @+1 {{'func.func' op arg #0 has element type 'i8'; the CPU runtime takes f32, f64, f16, bf16, i32 or i64}}
func.func @f(%x: tensor<4xi8>) {
  return
}

// -----

// expected-error @+1 {{'func.func' op result #0 has type 'tensor<?xf32>'; the CPU runtime takes statically shaped ranked tensors}}
func.func @f(%x: tensor<4xf32>) -> tensor<?xf32> {
  %c = tensor.cast %x : tensor<4xf32> to tensor<?xf32>
  return %c : tensor<?xf32>
}

// -----

// expected-error @+1 {{'func.func' op arg #0 has type 'tensor<8x0xf32>', with a dimension of size 0; the CPU runtime takes tensors that hold at least one element}}
func.func @f(%x: tensor<8x0xf32>) -> tensor<8x0xf32> {
  return %x : tensor<8x0xf32>
}

// -----

// An unprefixed attribute named like one of llvm.func's own would be taken as
// it by the LLVM lowering (a symbol as `linkage` crashed its verifier); private
// functions are checked too.
// expected-error @+1 {{'func.func' op has attribute 'linkage' = @grid, a name the LLVM lowering takes as llvm.func's own 'linkage'; remove it or give it a dialect prefix}}
func.func private @g(%x: tensor<4xf32>) attributes {linkage = @grid} {
  return
}

// -----

// MLIR 22's verifier accepts an expand_shape whose output_shape disagrees
// with its result type; bufferization would turn it into a
// memref.expand_shape that does not verify (found by tp-fuzz-lower-cpu).
func.func @f(%x: tensor<64x96xf32>) -> tensor<64x2x48xf32> {
  // expected-error @+1 {{output_shape [28, 2, 48] disagrees with the result type 'tensor<64x2x48xf32>' at dimension 0 (28 vs 64)}}
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [28, 2, 48] : tensor<64x96xf32> into tensor<64x2x48xf32>
  return %e : tensor<64x2x48xf32>
}

// -----

// CHECK-LABEL: module attributes {tp.manifest = "tprt-manifest 4\0Aabi 6\0Atarget cpu\0Afunc \22g\22 1 0
// CHECK: func.func @g
// CHECK-SAME: llvm.linkage = #llvm.linkage<external>
// CHECK-SAME: tpx.note = "kept"
func.func @g(%x: tensor<4xf32>) attributes {tpx.note = "kept", llvm.linkage = #llvm.linkage<external>} {
  return
}

// -----

// A donated argument (tp.donate): a `donate <result> <argument>` line after the
// results.
tp.mesh @world ["tp" = 4]
// CHECK-LABEL: module
// CHECK: result 1 f32 1 8 s=0|\0Adonate 1 0\0Aend\0A"
func.func @step(%w: tensor<2xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]>, tp.donate = 1 : i64})
    -> (tensor<2xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]>},
        tensor<2xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]>}) attributes {tp.spmd = @world} {
  return %w, %w : tensor<2xf32>, tensor<2xf32>
}
