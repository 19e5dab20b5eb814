// RUN: tp-opt %s --tp-copy-repeated-results | FileCheck %s

// A tensor returned twice gets a copy for the repeat; distinct results and
// non-tensor results are left alone.

// CHECK-LABEL: func.func @twice
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[N:.*]]: index)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[C:.*]] = linalg.copy ins(%[[X]] : tensor<4xf32>) outs(%[[E]] : tensor<4xf32>) -> tensor<4xf32>
// CHECK: return %[[X]], %[[C]], %[[N]], %[[N]] : tensor<4xf32>, tensor<4xf32>, index, index
func.func @twice(%x: tensor<4xf32>, %n: index) -> (tensor<4xf32>, tensor<4xf32>, index, index) {
  return %x, %x, %n, %n : tensor<4xf32>, tensor<4xf32>, index, index
}

// CHECK-LABEL: func.func @distinct
// CHECK-NOT: linalg.copy
// CHECK: return %arg0, %arg1
func.func @distinct(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  return %x, %y : tensor<4xf32>, tensor<4xf32>
}

// After bufferization (the pipelines run the pass again there): a buffer
// returned twice, as a returned tensor.empty and an op writing into it in
// place become, gets a fresh buffer for the repeat; dynamic sizes are read
// off the buffer.

// CHECK-LABEL: func.func @buffer_twice
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>)
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[X]], %[[A]] : memref<4xf32> to memref<4xf32>
// CHECK: return %[[X]], %[[A]] : memref<4xf32>, memref<4xf32>
func.func @buffer_twice(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  return %x, %x : memref<4xf32>, memref<4xf32>
}

// CHECK-LABEL: func.func @buffer_dynamic
// CHECK-SAME: (%[[X:.*]]: memref<?x8xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[D:.*]] = memref.dim %[[X]], %[[C0]]
// CHECK: %[[A:.*]] = memref.alloc(%[[D]]) : memref<?x8xf32>
// CHECK: memref.copy %[[X]], %[[A]]
// CHECK: return %[[X]], %[[A]]
func.func @buffer_dynamic(%x: memref<?x8xf32>) -> (memref<?x8xf32>, memref<?x8xf32>) {
  return %x, %x : memref<?x8xf32>, memref<?x8xf32>
}
