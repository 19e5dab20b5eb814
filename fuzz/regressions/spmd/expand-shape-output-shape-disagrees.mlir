tp.mesh @world ["tp" = 2]
func.func @a.tention(%x: tensor<16x64xf32>,
                     %wq: tensor<64x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                     %wk: tensor<64x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                     %wv: tensor<64x64xf32> {ptsh.arding = #tp.sharding<@world, [{}, {"tp"}]>},
                     %wo: tensor<64x64xf32>)
    -> (tensor<16x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %q = linalg.matmul ins(%x, %wq : tensor<16x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<16x64xf32>) -> tensor<16x64xf32>
  %k = linalg.matmul ins(%x, %wk : tensor<16x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<16x64xf32>) -> tensor<16x64xf32>
  %v = linalg.matmul ins(%x, %wv : tensor<16x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<16x64xf32>) -> tensor<16x64xf32>
  %q4 = tensor.expand_shape %q [[0, 1], [2, 3]] output_shape [2, 8, 4, 16] : tensor<16x64xf32> into tensor<2x8x4x16xf32>
  %k4 = tensor.expand_shape %k [[0, 1], [2, 3]] output_shape [1, 8, 4, 16] : tensor<16x64xf32> into tensor<2x8x4x16xf32>
  %v4 = tensor.expand_shape %v [[0, 1], [2, 3]] output_shape [2, 8, 4, 61] : tensor<16x64xf32> into tensor<2x8x4x16xf32>
  %t = tensor.empty() : tensor<2x4x8x16xf32>
  %qt = linalg.transpose ins(%q4 : tensor<2x8x4x16xf32>) outs(%t : tensor<2x4x8x16xf32>) permutation = [0, 2, 1, 3]
  %vt = linalg.transpose ins(%v4 : tensor<2x8x4x16xf32>) outs(%t : tensor<2x4x8x16xf32>) permutation = [0, 2, 1, 3]
  %tk = tensor.empty() : tensor<2x4x16x8xf32>
  %kt = linalg.transpose ins(%k4 : tensor<2x8x4x16xf32>) outs(%tk : tensor<2x4x16x8xf32>) permutation = [0, 2, 3, 1]
  %q3 = tensor.collapse_shape %qt [[0, 1], [2], [3]] : tensor<2x4x8x16xf32> into tensor<8x8x16xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x4x16x8xf32> into tensor<8x16x8xf32>
  %v3 = tensor.collapse_shape %vt [[0, 1], [2], [3]] : tensor<2x4x8x16xf32> into tensor<8x8x16xf32>
  %es = tensor.empty() : tensor<8x8x8xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%es : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<8x8x16xf32>, tensor<8x16x8xf32>) outs(%sacc : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<8x8x8xf32>) outs(%es : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %ec = tensor.empty() : tensor<8x8x16xf32>
  %cacc = linalg.fill ins(%zero : f32) outs(%ec : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
  %c = linalg.batch_matmul ins(%p, %v3 : tensor<8x8x8xf32>, tensor<8x8x16xf32>) outs(%cacc : tensor<8x8x16xf32>) -> tensor<8x8x16xf32>
  %c4 = tensor.expand_shape %c [[0, 1], [2], [3]] output_shape [1, 4, 8, 16] : tensor<8x8x16xf32> into tensor<2x4x8x16xf32>
  %t2 = tensor.empty() : tensor<2x8x4x16xf32>
  %ct = linalg.transpose ins(%c4 : tensor<2x4x8x16xf32>) outs(%t2 : tensor<2x8x4x16xf32>) permutation = [0, 2, 1, 3]
  %c2 = tensor.collapse_shape %ct [[0, 1], [2, 3]] : tensor<2x8x4x16xf32> into tensor<16x64xf32>
  %out = linalg.matmul ins(%c2, %wo : tensor<16x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %out : tensor<16x64xf32>
}
