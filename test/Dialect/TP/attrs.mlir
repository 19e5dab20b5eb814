// RUN: tp-opt %s --split-input-file | tp-opt --split-input-file | FileCheck %s
// RUN: tp-opt %s --split-input-file --mlir-print-op-generic | tp-opt --split-input-file | FileCheck %s

// Tests that #tp.sharding on function arguments and results round-trips,
// including open (unannotated) arguments, partial results and rank 0.

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: func.func @mlp
// CHECK-SAME: %{{.*}}: tensor<16x512xf32>,
// CHECK-SAME: %{{.*}}: tensor<512x2048xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
// CHECK-SAME: %{{.*}}: tensor<f32> {tp.sharding = #tp.sharding<@world, []>})
// CHECK-SAME: -> (tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}], partial = ["tp"]>})
func.func @mlp(%x: tensor<16x512xf32>,
               %w1: tensor<512x2048xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
               %s: tensor<f32> {tp.sharding = #tp.sharding<@world, []>})
    -> (tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}], partial = ["tp"]>}) {
  return %x : tensor<16x512xf32>
}

// -----

// Tests that an empty partial list is the same attribute as no partial list,
// and prints without it.

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: func.func @empty_partial
// CHECK-SAME: {tp.sharding = #tp.sharding<@world, [{"tp"}]>}
func.func @empty_partial(%x: tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}], partial = []>}) {
  return
}

// -----

// Tests that tp.shardings (what propagation writes) round-trips, with a
// rank-0 entry for a non-tensor result.

tp.mesh @grid ["dp" = 2, "tp" = 4]

// CHECK-LABEL: func.func @propagated
func.func @propagated(%x: tensor<16x512xf32>) -> tensor<16x512xf32> {
  // CHECK: tensor.empty() {tp.shardings = [#tp.sharding<@grid, [{"dp"}, {"tp"}]>]} : tensor<16x512xf32>
  %e = tensor.empty() {tp.shardings = [#tp.sharding<@grid, [{"dp"}, {"tp"}]>]} : tensor<16x512xf32>
  // CHECK: arith.constant {tp.shardings = [#tp.sharding<@grid, []>]} 0 : index
  %c0 = arith.constant {tp.shardings = [#tp.sharding<@grid, []>]} 0 : index
  return %e : tensor<16x512xf32>
}

// -----

// Tests that the reduction attribute also stands alone.

// CHECK-LABEL: func.func @reduction
// CHECK-SAME: kinds = [#tp.reduction<sum>, #tp.reduction<max>, #tp.reduction<min>]
func.func @reduction() attributes {kinds = [#tp.reduction<sum>, #tp.reduction<max>, #tp.reduction<min>]} {
  return
}

// -----

// Tests that in local form (tp.spmd) argument types are shards: a dimension
// smaller than the axis size is fine there.

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: func.func @local
// CHECK-SAME: tensor<16x3xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}
// CHECK-SAME: tp.spmd = @world
func.func @local(%x: tensor<16x3xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}) attributes {tp.spmd = @world} {
  return
}

// -----

// Tests that a bufferized function keeps the shardings of its memref
// arguments (the runtime reads them), checked like tensors.

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: func.func @bufferized
// CHECK-SAME: memref<16x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}
func.func @bufferized(%x: memref<16x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}) attributes {tp.spmd = @world} {
  return
}
