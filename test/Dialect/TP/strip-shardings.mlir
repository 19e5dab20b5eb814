// RUN: tp-opt %s --tp-strip-shardings --split-input-file --verify-diagnostics | FileCheck %s

// Tests that constraints, tp attributes and meshes go, leaving the unsharded
// program.

// CHECK-NOT: tp.
// CHECK: func.func @f(%[[W:.*]]: tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x4xf32>
// CHECK: linalg.add ins(%[[W]], %[[W]] : tensor<8x4xf32>, tensor<8x4xf32>) outs(%[[E]] : tensor<8x4xf32>)
// CHECK-NOT: tp.
tp.mesh @world ["tp" = 4]
func.func @f(%w: tensor<8x4xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>})
    -> (tensor<8x4xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  %h = tp.annotate %w <@world, [{"tp"}, {}]> : tensor<8x4xf32>
  %r = tp.reshard %h <@world, [{}, {}]> : tensor<8x4xf32>
  %e = tensor.empty() {tp.shardings = [#tp.sharding<@world, [{}, {}]>]} : tensor<8x4xf32>
  %s = linalg.add ins(%r, %w : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %s : tensor<8x4xf32>
}

// -----

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{'func.func' op is in local form (tp.spmd); only a program in global form can be unsharded}}
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> attributes {tp.spmd = @world} {
  return %x : tensor<2xf32>
}
