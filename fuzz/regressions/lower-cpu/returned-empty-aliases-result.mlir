module {
  tp.mesh @world ["tp" = 4]
  func.func @f(%arg0: tensor<16x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}) -> (tensor<16x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}, tensor<16x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}, tensor<16x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}, tensor<16x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}) attributes {tp.spmd = @world} {
    %0 = tensor.empty() {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]} : tensor<16x128xf32>
    %1 = linalg.add {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]} ins(%arg0, %arg0 : tensor<16x128xf32>, tensor<16x128xf32>) outs(%0 : tensor<16x128xf32>) -> tensor<16x128xf32>
    return %0, %arg0, %1, %arg0 : tensor<16x128xf32>, tensor<16x128xf32>, tensor<16x128xf32>, tensor<16x128xf32>
  }
}

