// A function returning one computed tensor and one argument twice each.
tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}) -> (tensor<16x512xf32>, tensor<16x512xf32>, tensor<16x512xf32>, tensor<16x512xf32>) {
  %e = tensor.empty() : tensor<16x512xf32>
  %y = linalg.add ins(%x, %x : tensor<16x512xf32>, tensor<16x512xf32>) outs(%e : tensor<16x512xf32>) -> tensor<16x512xf32>
  return %y, %x, %y, %x : tensor<16x512xf32>, tensor<16x512xf32>, tensor<16x512xf32>, tensor<16x512xf32>
}
