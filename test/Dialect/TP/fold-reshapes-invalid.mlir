// RUN: tp-opt %s --tp-fold-reshapes --split-input-file --verify-diagnostics

// MLIR 22's verifier accepts an expand_shape whose static output_shape disagrees
// with its result type; the folding patterns would then build reshapes that do
// not verify. The pass refuses it, naming the dimension.

func.func @disagreeing_output_shape(%x: tensor<16x64xf32>) -> tensor<2x8x4x16xf32> {
  // expected-error @+1 {{output_shape [1, 8, 4, 16] disagrees with the result type 'tensor<2x8x4x16xf32>' at dimension 0 (1 vs 2)}}
  %e = tensor.expand_shape %x [[0, 1], [2, 3]] output_shape [1, 8, 4, 16] : tensor<16x64xf32> into tensor<2x8x4x16xf32>
  return %e : tensor<2x8x4x16xf32>
}

// -----

// MLIR 22's verifier reads reassociation indices as 32-bit numbers: one
// beyond 32 bits that wraps to a valid index passes it (fuzzed: the reshape
// sharding rule then read past the dimensions). The pass refuses it.

func.func @wrapping_reassociation(%x: tensor<8x4xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'tensor.collapse_shape' op reassociation [[0, 4294967297]] does not name each dimension of the expanded type once, in order}}
  %c = tensor.collapse_shape %x [[0, 4294967297]] : tensor<8x4xf32> into tensor<32xf32>
  return %c : tensor<32xf32>
}
