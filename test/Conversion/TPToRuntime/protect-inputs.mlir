// RUN: tp-opt %s --tp-protect-inputs --split-input-file | FileCheck %s

// Only the arguments something may write into are marked: %r is the GEMM's
// accumulator (its init), %w and %x are only read.
// CHECK-LABEL: func.func @gemm
// CHECK-SAME: (%{{.*}}: tensor<8x8xf32>, %{{.*}}: tensor<4x8xf32> {bufferization.writable = false}, %{{.*}}: tensor<4x8xf32>)
func.func @gemm(%w: tensor<8x8xf32>, %r: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%r : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Through calls to a private function: what it reads stays unmarked, what
// it writes (its init) is marked in the public caller; the private
// function's own arguments are never marked.
// CHECK-LABEL: func.func @driver
// CHECK-SAME: (%{{.*}}: tensor<4x8xf32> {bufferization.writable = false}, %{{.*}}: tensor<8x8xf32>, %{{.*}}: tensor<8x8xf32>)
// CHECK-LABEL: func.func private @layer
// CHECK-SAME: (%{{.*}}: tensor<4x8xf32>, %{{.*}}: tensor<8x8xf32>)
// CHECK-NOT: bufferization.writable
func.func @driver(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = call @layer(%x, %w0) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = call @layer(%0, %w1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
func.func private @layer(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%x : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Views: a slice only read is a read; a slice written into, a returned
// argument and a collective's operand may be writes. Scalars are never
// marked, and a mark already there stays as it is.
tp.mesh @world ["tp" = 2]
// CHECK-LABEL: func.func @views
// CHECK-SAME: (%{{.*}}: tensor<4x8xf32>, %{{.*}}: tensor<4x8xf32> {bufferization.writable = false}, %{{.*}}: tensor<4x8xf32> {bufferization.writable = false}, %{{.*}}: tensor<4x8xf32> {bufferization.writable = false}, %{{.*}}: f32, %{{.*}}: tensor<4x8xf32> {bufferization.writable = true})
func.func @views(%read: tensor<4x8xf32>, %written: tensor<4x8xf32>, %returned: tensor<4x8xf32>,
                 %reduced: tensor<4x8xf32>, %s: f32, %kept: tensor<4x8xf32> {bufferization.writable = true})
    -> (tensor<2x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) attributes {tp.spmd = @world} {
  %a = tensor.extract_slice %read[0, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
  %b = tensor.extract_slice %written[2, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
  %c = linalg.copy ins(%a : tensor<2x8xf32>) outs(%b : tensor<2x8xf32>) -> tensor<2x8xf32>
  %d = tp.all_reduce sum %reduced over @world ["tp"] : tensor<4x8xf32>
  %f = linalg.fill ins(%s : f32) outs(%kept : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %c, %returned, %d, %f : tensor<2x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
