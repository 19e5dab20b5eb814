tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16x128xindex> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}) -> tensor<16x128xindex> {
  return %x : tensor<16x128xindex>
}
