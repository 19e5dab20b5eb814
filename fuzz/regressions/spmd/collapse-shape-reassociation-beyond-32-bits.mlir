tp.mesh @world ["tp" = 2]
func.func @f(%x: tensor<8x4xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}) -> tensor<32xf32> {
  %c = tensor.collapse_shape %x [[0, 4294967297]] : tensor<8x4xf32> into tensor<32xf32>
  return %c : tensor<32xf32>
}
