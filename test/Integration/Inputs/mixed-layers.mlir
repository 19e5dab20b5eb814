// Four residual MLP layers, x + tanh(x w_a / 8) w_b / sqrt(hidden), whose
// hidden widths are 256, 256, 512 and 128: the first two are the same
// computation (tp-compile outlines them into one function called twice), the
// others differ and stay inline. test/Integration/layers.test runs it.
#id = affine_map<(i, j) -> (i, j)>
tp.mesh @world ["tp" = 4]

func.func @mixed(%x: tensor<8x64xf32>,
    %w0a: tensor<64x256xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
    %w0b: tensor<256x64xf32>,
    %w1a: tensor<64x256xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
    %w1b: tensor<256x64xf32>,
    %w2a: tensor<64x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
    %w2b: tensor<512x64xf32>,
    %w3a: tensor<64x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
    %w3b: tensor<128x64xf32>)
    -> (tensor<8x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %in_scale = arith.constant 0.125 : f32
  %out_scale0 = arith.constant 0.0625 : f32
  %e0 = tensor.empty() : tensor<8x256xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %h0 = linalg.matmul ins(%x, %w0a : tensor<8x64xf32>, tensor<64x256xf32>) outs(%f0 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %t0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h0 : tensor<8x256xf32>) outs(%e0 : tensor<8x256xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.mulf %a, %in_scale : f32
      %r = math.tanh %s : f32
      linalg.yield %r : f32
  } -> tensor<8x256xf32>
  %o0 = tensor.empty() : tensor<8x64xf32>
  %g0 = linalg.fill ins(%zero : f32) outs(%o0 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y0 = linalg.matmul ins(%t0, %w0b : tensor<8x256xf32>, tensor<256x64xf32>) outs(%g0 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %r0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y0 : tensor<8x64xf32>, tensor<8x64xf32>) outs(%o0 : tensor<8x64xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.mulf %b, %out_scale0 : f32
      %r = arith.addf %a, %s : f32
      linalg.yield %r : f32
  } -> tensor<8x64xf32>
  %out_scale1 = arith.constant 0.0625 : f32
  %e1 = tensor.empty() : tensor<8x256xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %h1 = linalg.matmul ins(%r0, %w1a : tensor<8x64xf32>, tensor<64x256xf32>) outs(%f1 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %t1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h1 : tensor<8x256xf32>) outs(%e1 : tensor<8x256xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.mulf %a, %in_scale : f32
      %r = math.tanh %s : f32
      linalg.yield %r : f32
  } -> tensor<8x256xf32>
  %o1 = tensor.empty() : tensor<8x64xf32>
  %g1 = linalg.fill ins(%zero : f32) outs(%o1 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y1 = linalg.matmul ins(%t1, %w1b : tensor<8x256xf32>, tensor<256x64xf32>) outs(%g1 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r0, %y1 : tensor<8x64xf32>, tensor<8x64xf32>) outs(%o1 : tensor<8x64xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.mulf %b, %out_scale1 : f32
      %r = arith.addf %a, %s : f32
      linalg.yield %r : f32
  } -> tensor<8x64xf32>
  %out_scale2 = arith.constant 0.044194173824159216 : f32
  %e2 = tensor.empty() : tensor<8x512xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x512xf32>) -> tensor<8x512xf32>
  %h2 = linalg.matmul ins(%r1, %w2a : tensor<8x64xf32>, tensor<64x512xf32>) outs(%f2 : tensor<8x512xf32>) -> tensor<8x512xf32>
  %t2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h2 : tensor<8x512xf32>) outs(%e2 : tensor<8x512xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.mulf %a, %in_scale : f32
      %r = math.tanh %s : f32
      linalg.yield %r : f32
  } -> tensor<8x512xf32>
  %o2 = tensor.empty() : tensor<8x64xf32>
  %g2 = linalg.fill ins(%zero : f32) outs(%o2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y2 = linalg.matmul ins(%t2, %w2b : tensor<8x512xf32>, tensor<512x64xf32>) outs(%g2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r1, %y2 : tensor<8x64xf32>, tensor<8x64xf32>) outs(%o2 : tensor<8x64xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.mulf %b, %out_scale2 : f32
      %r = arith.addf %a, %s : f32
      linalg.yield %r : f32
  } -> tensor<8x64xf32>
  %out_scale3 = arith.constant 0.08838834764831843 : f32
  %e3 = tensor.empty() : tensor<8x128xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x128xf32>) -> tensor<8x128xf32>
  %h3 = linalg.matmul ins(%r2, %w3a : tensor<8x64xf32>, tensor<64x128xf32>) outs(%f3 : tensor<8x128xf32>) -> tensor<8x128xf32>
  %t3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h3 : tensor<8x128xf32>) outs(%e3 : tensor<8x128xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.mulf %a, %in_scale : f32
      %r = math.tanh %s : f32
      linalg.yield %r : f32
  } -> tensor<8x128xf32>
  %o3 = tensor.empty() : tensor<8x64xf32>
  %g3 = linalg.fill ins(%zero : f32) outs(%o3 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y3 = linalg.matmul ins(%t3, %w3b : tensor<8x128xf32>, tensor<128x64xf32>) outs(%g3 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %r3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r2, %y3 : tensor<8x64xf32>, tensor<8x64xf32>) outs(%o3 : tensor<8x64xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.mulf %b, %out_scale3 : f32
      %r = arith.addf %a, %s : f32
      linalg.yield %r : f32
  } -> tensor<8x64xf32>
  return %r3 : tensor<8x64xf32>
}
