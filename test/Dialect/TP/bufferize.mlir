// RUN: tp-opt %s --one-shot-bufferize="bufferize-function-boundaries" --split-input-file | FileCheck %s
// RUN: tp-opt %s --one-shot-bufferize="bufferize-function-boundaries" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=KEEP
// RUN: tp-opt %tp_src_root/examples/mlp.mlir --tp-spmd --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=MLP

// A whole partitioned MLP bufferizes: its all_reduce writes a buffer and no
// tensor is left (the linalg ops keep their tp.shardings, now describing
// their output buffers).
// MLP-LABEL: func.func @mlp
// MLP-NOT: tensor<
// MLP: tp.all_reduce sum %{{.*}} over @world ["tp"] into %{{.*}} : memref<16x512xf32>
// MLP-NOT: tensor<

// Tests that every data collective bufferizes to its buffer form: the
// operand's buffer is read, a new buffer of the result's shape is allocated
// and written, the result's tp.shardings is dropped.

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: func.func @collectives
// CHECK-SAME: (%[[X:.*]]: memref<16x128xf32{{.*}}>) -> (memref<16x128xf32>, memref<16x512xf32>, memref<4x128xf32>, memref<4x512xf32>, memref<4x128xf32>)
func.func @collectives(%x: tensor<16x128xf32>) -> (tensor<16x128xf32>, tensor<16x512xf32>, tensor<4x128xf32>, tensor<4x512xf32>, tensor<4x128xf32>) attributes {tp.spmd = @world} {
  // CHECK: %[[A:.*]] = memref.alloc() {{.*}}: memref<16x128xf32>
  // CHECK: tp.all_reduce sum %[[X]] over @world ["tp"] into %[[A]] : memref<16x128xf32{{.*}}> -> memref<16x128xf32>
  // CHECK-NOT: tp.shardings
  %a = tp.all_reduce sum %x over @world ["tp"] {tp.shardings = [#tp.sharding<@world, [{}, {}]>]} : tensor<16x128xf32>
  // CHECK: %[[B:.*]] = memref.alloc() {{.*}}: memref<16x512xf32>
  // CHECK: tp.all_gather %[[X]] over @world ["tp"] dim 1 into %[[B]]
  %b = tp.all_gather %x over @world ["tp"] dim 1 : tensor<16x128xf32> -> tensor<16x512xf32>
  // CHECK: %[[C:.*]] = memref.alloc() {{.*}}: memref<4x128xf32>
  // CHECK: tp.reduce_scatter sum %[[A]] over @world ["tp"] dim 0 into %[[C]]
  %c = tp.reduce_scatter sum %a over @world ["tp"] dim 0 : tensor<16x128xf32> -> tensor<4x128xf32>
  // CHECK: %[[D:.*]] = memref.alloc() {{.*}}: memref<4x512xf32>
  // CHECK: tp.all_to_all %[[X]] over @world ["tp"] split 0 concat 1 into %[[D]]
  %d = tp.all_to_all %x over @world ["tp"] split 0 concat 1 : tensor<16x128xf32> -> tensor<4x512xf32>
  // CHECK: %[[E:.*]] = memref.alloc() {{.*}}: memref<4x128xf32>
  // CHECK: tp.all_slice %[[X]] over @world ["tp"] dim 0 into %[[E]]
  %e = tp.all_slice %x over @world ["tp"] dim 0 : tensor<16x128xf32> -> tensor<4x128xf32>
  // CHECK: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]]
  return %a, %b, %c, %d, %e : tensor<16x128xf32>, tensor<16x512xf32>, tensor<4x128xf32>, tensor<4x512xf32>, tensor<4x128xf32>
}

// -----

// Tests that a collective reads its operand where it is, even a strided
// view into another buffer (no copy), and that a later in-place write of that
// buffer stays after the read.

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: func.func @slice_then_overwrite
func.func @slice_then_overwrite(%x: tensor<16x256xf32>) -> (tensor<16x128xf32>, tensor<16x256xf32>) attributes {tp.spmd = @world} {
  // CHECK: %[[V:.*]] = memref.subview
  // CHECK: tp.all_reduce sum %[[V]] over @world ["tp"] into %{{.*}} : memref<16x128xf32, strided<{{.*}}>> -> memref<16x128xf32>
  %s = tensor.extract_slice %x[0, 128] [16, 128] [1, 1] : tensor<16x256xf32> to tensor<16x128xf32>
  %a = tp.all_reduce sum %s over @world ["tp"] : tensor<16x128xf32>
  %zero = arith.constant 0.0 : f32
  // CHECK-NEXT: arith.constant
  // CHECK-NEXT: linalg.fill
  %f = linalg.fill ins(%zero : f32) outs(%x : tensor<16x256xf32>) -> tensor<16x256xf32>
  return %a, %f : tensor<16x128xf32>, tensor<16x256xf32>
}

// -----

// Tests that buffer-form collectives are kept by canonicalization and CSE:
// they write memory (two identical ones are two writes).

tp.mesh @world ["tp" = 4]

// KEEP-LABEL: func.func @kept
// KEEP-COUNT-2: tp.all_reduce
func.func @kept(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) attributes {tp.spmd = @world} {
  %a = tp.all_reduce sum %x over @world ["tp"] : tensor<16xf32>
  %b = tp.all_reduce sum %x over @world ["tp"] : tensor<16xf32>
  return %a, %b : tensor<16xf32>, tensor<16xf32>
}
