// A transformer MLP block (matmul, bias + GELU, matmul) in global form.
// Megatron-LM's plan needs one annotation: the first weight split by columns over the
// 4-device mesh, the output replicated. Propagation (--tp-propagate) completes the rest:
// the second weight split by rows and the second matmul's result partial until one
// all-reduce.
tp.mesh @world ["tp" = 4]

func.func @mlp(%x: tensor<16x512xf32>,
               %w1: tensor<512x2048xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
               %b1: tensor<2048xf32>,
               %w2: tensor<2048x512xf32>)
    -> (tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x2048xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x2048xf32>) -> tensor<16x2048xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x512xf32>, tensor<512x2048xf32>)
                     outs(%acc1 : tensor<16x2048xf32>) -> tensor<16x2048xf32>
  %hb = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%h, %b1 : tensor<16x2048xf32>, tensor<2048xf32>) outs(%e1 : tensor<16x2048xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      // GELU, tanh form: 0.5 * v * (1 + tanh(sqrt(2 / pi) * (v + 0.044715 * v^3))).
      %v = arith.addf %a, %b : f32
      %c0 = arith.constant 0.044715 : f32
      %c1 = arith.constant 0.7978846 : f32
      %half = arith.constant 0.5 : f32
      %one = arith.constant 1.0 : f32
      %v2 = arith.mulf %v, %v : f32
      %v3 = arith.mulf %v2, %v : f32
      %inner = arith.mulf %v3, %c0 : f32
      %sum = arith.addf %v, %inner : f32
      %scaled = arith.mulf %sum, %c1 : f32
      %t = math.tanh %scaled : f32
      %tp1 = arith.addf %t, %one : f32
      %hv = arith.mulf %v, %half : f32
      %g = arith.mulf %hv, %tp1 : f32
      linalg.yield %g : f32
  } -> tensor<16x2048xf32>
  // The hidden activation stays split by columns: a constraint on an intermediate value.
  %hs = tp.annotate %hb <@world, [{}, {"tp"}]> : tensor<16x2048xf32>
  %e2 = tensor.empty() : tensor<16x512xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x512xf32>) -> tensor<16x512xf32>
  %y = linalg.matmul ins(%hs, %w2 : tensor<16x2048xf32>, tensor<2048x512xf32>)
                     outs(%acc2 : tensor<16x512xf32>) -> tensor<16x512xf32>
  return %y : tensor<16x512xf32>
}
