// Invalid (two shardings for one result) and already canonical: no pattern
// or folder changes it.
tp.mesh @world ["tp" = 4]
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b {tp.shardings = [#tp.sharding<@world, [{}]>, #tp.sharding<@world, [{}]>]} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
