tp.mesh @world ["tp" = 2]
func.func @f(%x: tensor<?x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}, %n: index) -> tensor<?x2x4xf32> {
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [4, 2, 4] : tensor<?x8xf32> into tensor<?x2x4xf32>
  return %e : tensor<?x2x4xf32>
}
