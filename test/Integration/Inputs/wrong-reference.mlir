// What each function of wrong-local.mlir should compute: its input.
func.func @disagree(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
func.func @copy(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
func.func @sum(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
func.func @stuck(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
