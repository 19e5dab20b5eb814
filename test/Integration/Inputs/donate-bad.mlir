tp.mesh @world ["tp" = 4]

// The donated weights are read again after the update is written: the update
// cannot take their buffer.
func.func @bad(%w: tensor<64x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>, tp.donate = 0 : i64},
               %g: tensor<64x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>})
    -> (tensor<64x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
        tensor<64x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}) {
  %e = tensor.empty() : tensor<64x128xf32>
  %new = linalg.sub ins(%w, %g : tensor<64x128xf32>, tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %e2 = tensor.empty() : tensor<64x128xf32>
  %old = linalg.add ins(%w, %new : tensor<64x128xf32>, tensor<64x128xf32>) outs(%e2 : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %new, %old : tensor<64x128xf32>, tensor<64x128xf32>
}
