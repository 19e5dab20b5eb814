// Four residual MLP layers x + tanh(x w_a) w_b with weights of scale 1 (as
// tp-run --random-inputs draws them): each layer multiplies the residual's
// magnitude by about 10, and f32 rounding with it, so that a right program
// misses --verify's fixed 1e-5 and passes on the model's own sensitivity.
// test/Integration/verify.test runs it.
#id = affine_map<(i, j) -> (i, j)>
tp.mesh @world ["tp" = 4]

func.func @deep(%x: tensor<8x64xf32>,
    %w0a: tensor<64x256xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
    %w0b: tensor<256x64xf32>,
    %w1a: tensor<64x256xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
    %w1b: tensor<256x64xf32>,
    %w2a: tensor<64x256xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
    %w2b: tensor<256x64xf32>,
    %w3a: tensor<64x256xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
    %w3b: tensor<256x64xf32>)
    -> (tensor<8x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x256xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %h0 = linalg.matmul ins(%x, %w0a : tensor<8x64xf32>, tensor<64x256xf32>) outs(%f0 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %t0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h0 : tensor<8x256xf32>) outs(%e0 : tensor<8x256xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = math.tanh %a : f32
      linalg.yield %r : f32
  } -> tensor<8x256xf32>
  %o0 = tensor.empty() : tensor<8x64xf32>
  %g0 = linalg.fill ins(%zero : f32) outs(%o0 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y0 = linalg.matmul ins(%t0, %w0b : tensor<8x256xf32>, tensor<256x64xf32>) outs(%g0 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %r0 = arith.addf %x, %y0 : tensor<8x64xf32>
  %e1 = tensor.empty() : tensor<8x256xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %h1 = linalg.matmul ins(%r0, %w1a : tensor<8x64xf32>, tensor<64x256xf32>) outs(%f1 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %t1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h1 : tensor<8x256xf32>) outs(%e1 : tensor<8x256xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = math.tanh %a : f32
      linalg.yield %r : f32
  } -> tensor<8x256xf32>
  %o1 = tensor.empty() : tensor<8x64xf32>
  %g1 = linalg.fill ins(%zero : f32) outs(%o1 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y1 = linalg.matmul ins(%t1, %w1b : tensor<8x256xf32>, tensor<256x64xf32>) outs(%g1 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %r1 = arith.addf %r0, %y1 : tensor<8x64xf32>
  %e2 = tensor.empty() : tensor<8x256xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %h2 = linalg.matmul ins(%r1, %w2a : tensor<8x64xf32>, tensor<64x256xf32>) outs(%f2 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %t2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h2 : tensor<8x256xf32>) outs(%e2 : tensor<8x256xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = math.tanh %a : f32
      linalg.yield %r : f32
  } -> tensor<8x256xf32>
  %o2 = tensor.empty() : tensor<8x64xf32>
  %g2 = linalg.fill ins(%zero : f32) outs(%o2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y2 = linalg.matmul ins(%t2, %w2b : tensor<8x256xf32>, tensor<256x64xf32>) outs(%g2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %r2 = arith.addf %r1, %y2 : tensor<8x64xf32>
  %e3 = tensor.empty() : tensor<8x256xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %h3 = linalg.matmul ins(%r2, %w3a : tensor<8x64xf32>, tensor<64x256xf32>) outs(%f3 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %t3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h3 : tensor<8x256xf32>) outs(%e3 : tensor<8x256xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = math.tanh %a : f32
      linalg.yield %r : f32
  } -> tensor<8x256xf32>
  %o3 = tensor.empty() : tensor<8x64xf32>
  %g3 = linalg.fill ins(%zero : f32) outs(%o3 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y3 = linalg.matmul ins(%t3, %w3b : tensor<8x256xf32>, tensor<256x64xf32>) outs(%g3 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %r3 = arith.addf %r2, %y3 : tensor<8x64xf32>
  return %r3 : tensor<8x64xf32>
}
