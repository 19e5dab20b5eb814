// RUN: tp-opt %s --split-input-file --tp-partition --verify-diagnostics | FileCheck %s

// Tests ops without a PartitionableOpInterface model (tensor.cast has none):
// replicated, they run unchanged on every device; split, they are refused
// with an error naming the op.

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @replicated_cast
// CHECK-SAME: tp.spmd = @world
// CHECK: tensor.cast %arg0 {{.*}} : tensor<8x16xf32> to tensor<?x16xf32>
func.func @replicated_cast(%x: tensor<8x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>})
    -> (tensor<?x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  %c = tensor.cast %x {tp.shardings = [#tp.sharding<@world, [{}, {}]>]} : tensor<8x16xf32> to tensor<?x16xf32>
  return %c : tensor<?x16xf32>
}

// -----

tp.mesh @world ["tp" = 2]

func.func @split_cast(%x: tensor<8x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>})
    -> (tensor<?x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}) {
  // expected-error @+1 {{'tensor.cast' op has split or pending tensors but no partitioning model; 'tensor.cast' needs a PartitionableOpInterface model to run on shards}}
  %c = tensor.cast %x {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]} : tensor<8x16xf32> to tensor<?x16xf32>
  return %c : tensor<?x16xf32>
}
