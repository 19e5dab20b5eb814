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
