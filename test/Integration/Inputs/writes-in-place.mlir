// Ops whose outs are the function's arguments: bufferized in place, they
// would write into the caller's tensors, which the ranks read in place.
tp.mesh @world ["tp" = 2]
func.func @f(%a: tensor<8x4xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
             %b: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %r = linalg.add ins(%a, %b : tensor<8x4xf32>, tensor<8x4xf32>) outs(%a : tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = linalg.add ins(%r, %b : tensor<8x4xf32>, tensor<8x4xf32>) outs(%b : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %s : tensor<8x4xf32>
}
