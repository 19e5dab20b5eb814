tp.mesh @a ["tp" = 2]
tp.mesh @b ["x" = 4]
func.func @f(%x: tensor<4xf32> {tp.sharding = #tp.sharding<@b, [{"x"}]>}) -> tensor<4xf32> attributes {tp.spmd = @a} {
  return %x : tensor<4xf32>
}
