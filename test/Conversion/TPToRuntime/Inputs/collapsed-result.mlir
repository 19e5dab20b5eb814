// A local-form function whose result collapses what it computes.
tp.mesh @world ["tp" = 2]
func.func @g(%x: tensor<2x4xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>})
    -> (tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{}]>})
    attributes {tp.spmd = @world} {
  %y = math.exp %x : tensor<2x4xf32>
  %r = tensor.collapse_shape %y [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  return %r : tensor<8xf32>
}
