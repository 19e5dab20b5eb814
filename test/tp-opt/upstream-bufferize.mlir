// RUN: tp-opt %s --one-shot-bufferize="bufferize-function-boundaries" --convert-linalg-to-loops | FileCheck %s

// Tests that bufferization and loop lowering run on a function whose
// arguments carry shardings, and keep them.

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: func.func @plain
// CHECK-SAME: memref<512x256xf32, strided<[?, ?], offset: ?>> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
func.func @plain(%x: tensor<16x512xf32>,
                 %w: tensor<512x256xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                 %acc: tensor<16x256xf32>) -> tensor<16x256xf32> {
  %y = linalg.matmul ins(%x, %w : tensor<16x512xf32>, tensor<512x256xf32>)
                     outs(%acc : tensor<16x256xf32>) -> tensor<16x256xf32>
  return %y : tensor<16x256xf32>
}
