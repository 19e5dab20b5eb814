// Three equal residual MLP layers, x + tanh(x wa + c) wb, whose bias c is a
// constant that is not a splat (the same in every layer): tp-compile outlines
// them into one function called three times, which reads the constant.
// test/Integration/cuda-graphs.test runs it on the CUDA target.
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
tp.mesh @world ["tp" = 4]

func.func @layers(%x0: tensor<8x16xf32>,
    %w0a: tensor<16x32xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
    %w0b: tensor<32x16xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
    %w1a: tensor<16x32xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
    %w1b: tensor<32x16xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
    %w2a: tensor<16x32xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
    %w2b: tensor<32x16xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>})
    -> (tensor<8x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant dense<[-0.375, -0.25, -0.125, 0.0, 0.125, 0.25, 0.375, -0.375, -0.25, -0.125, 0.0, 0.125, 0.25, 0.375, -0.375, -0.25, -0.125, 0.0, 0.125, 0.25, 0.375, -0.375, -0.25, -0.125, 0.0, 0.125, 0.25, 0.375, -0.375, -0.25, -0.125, 0.0]> : tensor<32xf32>
  %e0 = tensor.empty() : tensor<8x32xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h0 = linalg.matmul ins(%x0, %w0a : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f0 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %t0 = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h0, %c0 : tensor<8x32xf32>, tensor<32xf32>) outs(%e0 : tensor<8x32xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      %r = math.tanh %s : f32
      linalg.yield %r : f32
  } -> tensor<8x32xf32>
  %o0 = tensor.empty() : tensor<8x16xf32>
  %g0 = linalg.fill ins(%zero : f32) outs(%o0 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y0 = linalg.matmul ins(%t0, %w0b : tensor<8x32xf32>, tensor<32x16xf32>) outs(%g0 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %x1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x0, %y0 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%o0 : tensor<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %c1 = arith.constant dense<[-0.375, -0.25, -0.125, 0.0, 0.125, 0.25, 0.375, -0.375, -0.25, -0.125, 0.0, 0.125, 0.25, 0.375, -0.375, -0.25, -0.125, 0.0, 0.125, 0.25, 0.375, -0.375, -0.25, -0.125, 0.0, 0.125, 0.25, 0.375, -0.375, -0.25, -0.125, 0.0]> : tensor<32xf32>
  %e1 = tensor.empty() : tensor<8x32xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h1 = linalg.matmul ins(%x1, %w1a : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %t1 = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h1, %c1 : tensor<8x32xf32>, tensor<32xf32>) outs(%e1 : tensor<8x32xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      %r = math.tanh %s : f32
      linalg.yield %r : f32
  } -> tensor<8x32xf32>
  %o1 = tensor.empty() : tensor<8x16xf32>
  %g1 = linalg.fill ins(%zero : f32) outs(%o1 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y1 = linalg.matmul ins(%t1, %w1b : tensor<8x32xf32>, tensor<32x16xf32>) outs(%g1 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %x2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x1, %y1 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%o1 : tensor<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %c2 = arith.constant dense<[-0.375, -0.25, -0.125, 0.0, 0.125, 0.25, 0.375, -0.375, -0.25, -0.125, 0.0, 0.125, 0.25, 0.375, -0.375, -0.25, -0.125, 0.0, 0.125, 0.25, 0.375, -0.375, -0.25, -0.125, 0.0, 0.125, 0.25, 0.375, -0.375, -0.25, -0.125, 0.0]> : tensor<32xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h2 = linalg.matmul ins(%x2, %w2a : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f2 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %t2 = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h2, %c2 : tensor<8x32xf32>, tensor<32xf32>) outs(%e2 : tensor<8x32xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      %r = math.tanh %s : f32
      linalg.yield %r : f32
  } -> tensor<8x32xf32>
  %o2 = tensor.empty() : tensor<8x16xf32>
  %g2 = linalg.fill ins(%zero : f32) outs(%o2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y2 = linalg.matmul ins(%t2, %w2b : tensor<8x32xf32>, tensor<32x16xf32>) outs(%g2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %x3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x2, %y2 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%o2 : tensor<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
  } -> tensor<8x16xf32>
  return %x3 : tensor<8x16xf32>
}
