tp.mesh @world ["tp" = 4]
tp.mesh @grid ["dp" = 2, "tp" = 4]
func.func @global(%x: tensor<16x512xf32> {tp.sharding = #tp.sharding<@grid, [{"dp"}, {}]>},
                  %w: tensor<512x2048xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>})
    -> (tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}], partial = ["tp"]>}) {
  %a = tp.annotate %x <@world, [{}, {"tp"}]> : tensor<16x512xf32>
  %r = tp.reshard %a <@grid, [{"dp", "tp"}, {}]> : tensor<16x512xf32>
  %e = tensor.empty() {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]} : tensor<16x512xf32>
  return %r : tensor<16x512xf32>
}
func.func @local(%x: tensor<16x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}) attributes {tp.spmd = @world} {
  %0 = tp.all_reduce sum %x over @world ["tp"] : tensor<16x128xf32>
  %1 = tp.all_gather %0 over @world ["tp"] dim 1 : tensor<16x128xf32> -> tensor<16x512xf32>
  %2 = tp.reduce_scatter max %1 over @world ["tp"] dim 0 : tensor<16x512xf32> -> tensor<4x512xf32>
  %3 = tp.all_to_all %2 over @world ["tp"] split 1 concat 0 : tensor<4x512xf32> -> tensor<16x128xf32>
  %4 = tp.all_slice %1 over @world ["tp"] dim 1 : tensor<16x512xf32> -> tensor<16x128xf32>
  %5 = tp.axis_index @world ["tp"] : index
  return
}
