func.func @f(%a: tensor<4x4xindex>, %b: tensor<4x4xindex>, %c: tensor<4x4xindex>) -> tensor<4x4xindex> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x4xindex>, tensor<4x4xindex>) outs(%c : tensor<4x4xindex>) -> tensor<4x4xindex>
  return %r : tensor<4x4xindex>
}
