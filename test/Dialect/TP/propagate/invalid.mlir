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
