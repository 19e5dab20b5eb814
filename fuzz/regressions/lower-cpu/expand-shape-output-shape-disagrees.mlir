#map = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
#map1 = affine_map<(d0, d1, d2, d3, d4) -> (d4, d2, d3)>
#map2 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#map3 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>
#map4 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>
#map5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2, d3)>
#map6 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#map7 = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4, d2)>
#map8 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
module {
  tp.mesh @world ["tp" = 2]
  func.func @attention(%arg0: tensor<2x8x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {}, {}]>}, %arg1: tensor<64x96xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}, %arg2: tensor<32x64xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}) -> (tensor<2x8x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {}, {}]>}) attributes {tp.spmd = @world} {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() {tp.shardings = [#tp.sharding<@world, [{}, {}, {"tp"}, {}]>]} : tensor<2x8x2x48xf32>
    %1 = linalg.fill {tp.shardings = [#tp.sharding<@world, [{}, {}, {"tp"}, {}]>]} ins(%cst : f32) outs(%0 : tensor<2x8x2x48xf32>) -> tensor<2x8x2x48xf32>
    %expanded = tensor.expand_shape %arg1 [[0], [1, 2]] output_shape [28, 2, 48] {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}, {}]>]} : tensor<64x96xf32> into tensor<64x2x48xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %expanded : tensor<2x8x64xf32>, tensor<64x2x48xf32>) outs(%1 : tensor<2x8x2x48xf32>) attrs =  {tp.shardings = [#tp.sharding<@world, [{}, {}, {"tp"}, {}]>]} {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %14 = arith.mulf %in, %in_3 : f32
      %15 = arith.addf %out, %14 : f32
      linalg.yield %15 : f32
    } -> tensor<2x8x2x48xf32>
    %extracted_slice = tensor.extract_slice %2[0, 0, 0, 0] [2, 8, 2, 16] [1, 1, 1, 1] {tp.shardings = [#tp.sharding<@world, [{}, {}, {"tp"}, {}]>]} : tensor<2x8x2x48xf32> to tensor<2x8x2x16xf32>
    %extracted_slice_0 = tensor.extract_slice %2[0, 0, 0, 16] [2, 8, 2, 16] [1, 1, 1, 1] {tp.shardings = [#tp.sharding<@world, [{}, {}, {"tp"}, {}]>]} : tensor<2x8x2x48xf32> to tensor<2x8x2x16xf32>
    %extracted_slice_1 = tensor.extract_slice %2[0, 0, 0, 32] [2, 8, 2, 16] [1, 1, 1, 1] {tp.shardings = [#tp.sharding<@world, [{}, {}, {"tp"}, {}]>]} : tensor<2x8x2x48xf32> to tensor<2x8x2x16xf32>
    %3 = tensor.empty() {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}, {}, {}]>]} : tensor<2x2x8x8xf32>
    %4 = linalg.fill {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}, {}, {}]>]} ins(%cst : f32) outs(%3 : tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
    %5 = linalg.generic {indexing_maps = [#map3, #map4, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%extracted_slice, %extracted_slice_1 : tensor<2x8x2x16xf32>, tensor<2x8x2x16xf32>) outs(%4 : tensor<2x2x8x8xf32>) attrs =  {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}, {}, {}]>]} {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %14 = arith.mulf %in, %in_3 : f32
      %15 = arith.addf %out, %14 : f32
      linalg.yield %15 : f32
    } -> tensor<2x2x8x8xf32>
    %6 = linalg.softmax {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}, {}, {}]>]} dimension(3) ins(%5 : tensor<2x2x8x8xf32>) outs(%3 : tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
    %7 = tensor.empty() {tp.shardings = [#tp.sharding<@world, [{}, {}, {"tp"}, {}]>]} : tensor<2x8x2x16xf32>
    %8 = linalg.fill {tp.shardings = [#tp.sharding<@world, [{}, {}, {"tp"}, {}]>]} ins(%cst : f32) outs(%7 : tensor<2x8x2x16xf32>) -> tensor<2x8x2x16xf32>
    %9 = linalg.generic {indexing_maps = [#map3, #map5, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%6, %extracted_slice_1 : tensor<2x2x8x8xf32>, tensor<2x8x2x16xf32>) outs(%8 : tensor<2x8x2x16xf32>) attrs =  {tp.shardings = [#tp.sharding<@world, [{}, {}, {"tp"}, {}]>]} {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %14 = arith.mulf %in, %in_3 : f32
      %15 = arith.addf %out, %14 : f32
      linalg.yield %15 : f32
    } -> tensor<2x8x2x16xf32>
    %expanded_2 = tensor.expand_shape %arg2 [[0, 1], [2]] output_shape [2, 16, 64] {tp.shardings = [#tp.sharding<@world, [{"tp"}, {}, {}]>]} : tensor<32x64xf32> into tensor<2x16x64xf32>
    %10 = tensor.empty() {tp.shardings = [#tp.sharding<@world, [{}, {}, {}]>]} : tensor<2x8x64xf32>
    %11 = linalg.fill {tp.shardings = [#tp.sharding<@world, [{}, {}, {}]>]} ins(%cst : f32) outs(%10 : tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
    %12 = linalg.generic {indexing_maps = [#map6, #map7, #map8], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%9, %expanded_2 : tensor<2x8x2x16xf32>, tensor<2x16x64xf32>) outs(%11 : tensor<2x8x64xf32>) attrs =  {tp.shardings = [#tp.sharding<@world, [{}, {}, {}], partial = ["tp"]>]} {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %14 = arith.mulf %in, %in_3 : f32
      %15 = arith.addf %out, %14 : f32
      linalg.yield %15 : f32
    } -> tensor<2x8x64xf32>
    %13 = tp.all_reduce sum %12 over @world ["tp"] {tp.shardings = [#tp.sharding<@world, [{}, {}, {}]>]} : tensor<2x8x64xf32>
    return %13 : tensor<2x8x64xf32>
  }
}

