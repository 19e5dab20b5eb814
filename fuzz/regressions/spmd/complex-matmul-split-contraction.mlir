tp.mesh @world ["tp" = 2]
func.func @f(%x: tensor<4x8xcomplex<f32>>, %w: tensor<8x4xcomplex<f32>> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}) -> tensor<4x4xcomplex<f32>> {
  %e = tensor.empty() : tensor<4x4xcomplex<f32>>
  %m = linalg.matmul ins(%x, %w : tensor<4x8xcomplex<f32>>, tensor<8x4xcomplex<f32>>) outs(%e : tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
  return %m : tensor<4x4xcomplex<f32>>
}
