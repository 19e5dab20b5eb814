func.func @f(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = math.exp %x : tensor<8xf32>
  return %e, %e : tensor<8xf32>, tensor<8xf32>
}
