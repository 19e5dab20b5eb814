// The same invalid op, and a dead constant for the sweep to erase.
tp.mesh @world ["tp" = 4]
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %dead = arith.constant 0.25 : f32
  %0 = arith.addf %a, %b {tp.shardings = [#tp.sharding<@world, [{}]>, #tp.sharding<@world, [{}]>]} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
