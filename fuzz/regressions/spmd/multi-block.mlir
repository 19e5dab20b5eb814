tp.mesh @world ["tp" = 2]
func.func @f(%x: tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]>}, %c: i1) -> tensor<8xf32> {
  cf.cond_br %c, ^a, ^b
^a:
  %e = math.exp %x : tensor<8xf32>
  return %e : tensor<8xf32>
^b:
  return %x : tensor<8xf32>
}
