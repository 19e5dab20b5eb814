// RUN: tp-opt %s --tp-propagate --split-input-file --verify-diagnostics

// Tests that constraints on two meshes in one function, which no reshard can
// reconcile, are an error naming both places.

tp.mesh @a ["tp" = 2]
tp.mesh @b ["tp" = 4]

// expected-note @+1 {{argument #0 of @f is here}}
func.func @f(%x: tensor<8xf32> {tp.sharding = #tp.sharding<@a, [{"tp"}]>}) -> tensor<8xf32> {
  // expected-error @+1 {{'tp.annotate' uses mesh @b but argument #0 of @f uses @a; a function is partitioned over one mesh}}
  %0 = tp.annotate %x <@b, [{"tp"}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Tests that a call cycle, which cannot be inlined, is an error.

func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = func.call @g(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func @g(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'func.call' op is part of a call cycle through @f; shardings are propagated through calls by inlining them, which a cycle prevents}}
  %0 = func.call @f(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Tests that a non-divisible split in a constraint is rejected with the
// sizes before anything propagates.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<6x8xf32>) -> tensor<6x8xf32> {
  // expected-error @+1 {{'tp.annotate' op dimension 0 of size 6 is not divisible by 4, the total size of axes ["tp"] of mesh @world}}
  %0 = tp.annotate %x <@world, [{"tp"}, {}]> : tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}
