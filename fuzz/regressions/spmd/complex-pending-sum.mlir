tp.mesh @world ["tp" = 2]
func.func @f(%x: tensor<4x8xcomplex<f32>> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) -> tensor<4x8xcomplex<f32>> {
  %p = tp.annotate %x <@world, [{}, {}], partial = ["tp"]> : tensor<4x8xcomplex<f32>>
  return %p : tensor<4x8xcomplex<f32>>
}
