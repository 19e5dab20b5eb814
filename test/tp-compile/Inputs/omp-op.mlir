// An op that no conversion of the lowering handles, beside the model: MLIR 22
// crashed translating it to LLVM IR.
omp.target_exit_data
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
