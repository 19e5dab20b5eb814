// RUN: tp-opt %s --split-input-file --canonicalize --cse | FileCheck %s --check-prefix=CANON
// RUN: tp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(linalg-generalize-named-ops))" | FileCheck %s --check-prefix=GENERALIZE

// Tests that tp-opt runs the upstream passes that mlir-opt users know, and
// that tp ops survive them: canonicalization keeps used collectives, CSE merges
// identical ones (they are pure on tensors), unused ones are removed.

tp.mesh @world ["tp" = 4]

// CANON-LABEL: func.func @collectives
// GENERALIZE-LABEL: func.func @collectives
func.func @collectives(%x: tensor<16x128xf32>) -> (tensor<16x128xf32>, tensor<16x128xf32>) attributes {tp.spmd = @world} {
  // CANON: %[[R:.*]] = tp.all_reduce sum %{{.*}} over @world ["tp"]
  // CANON-NOT: tp.all_reduce
  // CANON-NOT: tp.all_gather
  // CANON: return %[[R]], %[[R]]
  %a = tp.all_reduce sum %x over @world ["tp"] : tensor<16x128xf32>
  %b = tp.all_reduce sum %x over @world ["tp"] : tensor<16x128xf32>
  %unused = tp.all_gather %x over @world ["tp"] dim 1 : tensor<16x128xf32> -> tensor<16x512xf32>
  return %a, %b : tensor<16x128xf32>, tensor<16x128xf32>
}

// -----

// Tests that linalg passes run on an annotated global-form function and leave
// its shardings in place.

tp.mesh @world ["tp" = 4]

// GENERALIZE-LABEL: func.func @matmul
// GENERALIZE-SAME: {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}
// GENERALIZE: linalg.generic
// GENERALIZE: tp.annotate %{{.*}} <@world, [{}, {"tp"}]>
func.func @matmul(%x: tensor<16x512xf32>,
                  %w: tensor<512x256xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                  %acc: tensor<16x256xf32>) -> tensor<16x256xf32> {
  %y = linalg.matmul ins(%x, %w : tensor<16x512xf32>, tensor<512x256xf32>)
                     outs(%acc : tensor<16x256xf32>) -> tensor<16x256xf32>
  %a = tp.annotate %y <@world, [{}, {"tp"}]> : tensor<16x256xf32>
  return %a : tensor<16x256xf32>
}
