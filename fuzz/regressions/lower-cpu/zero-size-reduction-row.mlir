func.func @softmax(%x: tensor<8x0xf32>) -> tensor<8x0xf32> {
  %ninf = arith.constant -3.0e38 : f32
  %e = tensor.empty() : tensor<8xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x0xf32>) outs(%m0 : tensor<8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.maximumf %a, %o : f32
      linalg.yield %r : f32
  } -> tensor<8xf32>
  %eo = tensor.empty() : tensor<8x0xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x, %m : tensor<8x0xf32>, tensor<8xf32>) outs(%eo : tensor<8x0xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      %x2 = math.exp %d : f32
      linalg.yield %x2 : f32
  } -> tensor<8x0xf32>
  return %y : tensor<8x0xf32>
}
