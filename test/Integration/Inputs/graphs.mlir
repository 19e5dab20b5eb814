tp.mesh @world ["tp" = 4]

// A replicated input cut into column blocks: each rank's result is a strided
// device copy (all_slice), which the counting fake of CUDA really makes, so the
// values of runs replayed from a CUDA graph can be checked without a GPU.
func.func @cut(%x: tensor<8x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>})
    -> (tensor<8x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}) {
  return %x : tensor<8x16xf32>
}

// A constant that is not a splat, uploaded on a GPU into the constants' buffer
// the session keeps, by the rank's first run alone (tp-upload-constants).
func.func @shift(%x: tensor<8x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>})
    -> (tensor<8x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}) {
  %c = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0]]> : tensor<1x16xf32>
  %b = tensor.collapse_shape %c [[0, 1]] : tensor<1x16xf32> into tensor<16xf32>
  %e = tensor.empty() : tensor<8x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
    ^bb0(%a: f32, %v: f32, %o: f32):
      %s = arith.addf %a, %v : f32
      linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
