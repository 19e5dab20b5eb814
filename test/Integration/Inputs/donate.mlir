tp.mesh @world ["tp" = 4]

// One SGD step, w - lr * g, with w donated to the result: the new weights are
// written in the old ones' buffer.
func.func @sgd(%w: tensor<64x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>, tp.donate = 0 : i64},
               %g: tensor<64x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>})
    -> (tensor<64x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}) {
  %lr = arith.constant 0.1 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %new = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%w, %g : tensor<64x128xf32>, tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %m = arith.mulf %b, %lr : f32
      %s = arith.subf %a, %m : f32
      linalg.yield %s : f32
  } -> tensor<64x128xf32>
  return %new : tensor<64x128xf32>
}


// A decode step's cache update: this step's keys (batch 2, 8 heads, 1 new
// position, 16 per head) written into the cache at position 3, heads split
// over "tp"; the cache is donated, so the step writes it in place.
func.func @append(%cache: tensor<2x8x6x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}, {}, {}]>, tp.donate = 0 : i64},
                  %k: tensor<2x8x1x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}, {}, {}]>})
    -> (tensor<2x8x6x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}, {}, {}]>}) {
  %new = tensor.insert_slice %k into %cache[0, 0, 3, 0] [2, 8, 1, 16] [1, 1, 1, 1]
      : tensor<2x8x1x16xf32> into tensor<2x8x6x16xf32>
  return %new : tensor<2x8x6x16xf32>
}

