func.func @structural(%m: tensor<16x32xf32>, %v: tensor<16xf32>, %s: f32) {
  %e = tensor.empty() : tensor<32x16xf32>
  %0 = linalg.transpose ins(%m : tensor<16x32xf32>) outs(%e : tensor<32x16xf32>) permutation = [1, 32>, %v: tensor<16xf32>, %s: f32) {
  %e = tensor.empty() : tensor<32x16xf32>
  %0 = linalg.transpose ins(%m : tensor<16x32xf32>) outs(%e : tensor<32x16xf32>) permutation = [1, 0]
  %1 = linalg.broadcast ins(%v : tensor<16xf32>) outs(%m : tensor<16x32xf32>) ÿÿÿÿÿÿÿdimensions = [1]
  %2 = linalg.reduce ins(%m : tensor<16x32xf32>) outs(%v : tensor<16xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %sum = arith.addf %in, %init : f32
      linal0]
  %1 = linalg.broadcast ins(%v : tensor<16xf32>) outs(%m : tensor<16x32xf32>) ÿÿÿÿÿÿÿdimensions = [1]
  %2 = linalg.reduce ins(%m : tensor<16x32xf32>) outs(%v : tensor<16xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %sum = arith.addf %in, %init : f32
      linalg.yield %sum : f32
    }
  %3 = linalg.fill ins(%s : f32) outs(%m : tensor<16x32xf32>) -> tensor<16x32xf32>
  return
}
