// RUN: tp-opt %s --split-input-file --tp-lower-bf16-mma --verify-diagnostics | FileCheck %s

// A bf16 mma.sync becomes nvvm.mma.sync: A's four registers and B's two, each
// a pair of bf16 bitcast to i32, the accumulator's four f32, and the result
// struct's four elements back in a vector<2x2xf32>.

// CHECK-LABEL: func.func @bf16
// CHECK-SAME: (%[[A:.*]]: vector<4x2xbf16>, %[[B:.*]]: vector<2x2xbf16>, %[[C:.*]]: vector<2x2xf32>)
// CHECK-DAG: %[[C00:.*]] = vector.extract %[[C]][0, 0] : f32 from vector<2x2xf32>
// CHECK-DAG: %[[C11:.*]] = vector.extract %[[C]][1, 1] : f32 from vector<2x2xf32>
// CHECK-DAG: %[[A3:.*]] = vector.extract %[[A]][3] : vector<2xbf16> from vector<4x2xbf16>
// CHECK-DAG: %[[A3W:.*]] = vector.bitcast %[[A3]] : vector<2xbf16> to vector<1xi32>
// CHECK-DAG: %[[A3I:.*]] = vector.extract %[[A3W]][0] : i32 from vector<1xi32>
// CHECK-DAG: %[[B1:.*]] = vector.extract %[[B]][1] : vector<2xbf16> from vector<2x2xbf16>
// CHECK: %[[R:.*]] = nvvm.mma.sync A[%{{.*}}, %{{.*}}, %{{.*}}, %[[A3I]]] B[%{{.*}}, %{{.*}}] C[%[[C00]], %{{.*}}, %{{.*}}, %[[C11]]]
// CHECK-SAME: layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>
// CHECK-SAME: multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>
// CHECK-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-SAME: (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: %[[R3:.*]] = llvm.extractvalue %[[R]][3] : !llvm.struct<(f32, f32, f32, f32)>
// CHECK: %[[D:.*]] = vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %[[R3]] : vector<2x2xf32>
// CHECK: return %[[D]]
// CHECK-NOT: nvgpu.mma.sync
func.func @bf16(%a: vector<4x2xbf16>, %b: vector<2x2xbf16>, %c: vector<2x2xf32>) -> vector<2x2xf32> {
  %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]}
      : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
  return %d : vector<2x2xf32>
}

// -----

// f16 is left to convert-nvgpu-to-nvvm.

// CHECK-LABEL: func.func @f16
// CHECK: nvgpu.mma.sync
// CHECK-NOT: nvvm.mma.sync
func.func @f16(%a: vector<4x2xf16>, %b: vector<2x2xf16>, %c: vector<2x2xf32>) -> vector<2x2xf32> {
  %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]}
      : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
  return %d : vector<2x2xf32>
}

// -----

// Another bf16 shape is an error naming the one taken.

func.func @m16n8k8(%a: vector<2x2xbf16>, %b: vector<1x2xbf16>, %c: vector<2x2xf32>) -> vector<2x2xf32> {
  // expected-error @below {{tp-lower-bf16-mma: expected the m16n8k16 shape on vector<4x2xbf16> and vector<2x2xbf16> operands with a vector<2x2xf32> accumulator}}
  %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 8]}
      : (vector<2x2xbf16>, vector<1x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
  return %d : vector<2x2xf32>
}
