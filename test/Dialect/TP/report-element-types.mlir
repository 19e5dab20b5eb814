// RUN: tp-opt %s --tp-report -o /dev/null 2>&1 | FileCheck %s

// Tests that the report sizes tensors of any element type: index as 64 bits,
// complex numbers and vectors by their parts.

tp.mesh @world ["tp" = 4]

// CHECK: memory per device:
// CHECK-NEXT: arguments: 16480 B
func.func @f(%x: tensor<16x128xindex> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
             %y: tensor<4xcomplex<f32>>,
             %z: tensor<4xvector<4xf32>>)
    attributes {tp.spmd = @world} {
  return
}
