// A model whose result is NaN everywhere (0 * inf): its sharded and unsharded
// runs agree element for element, and show nothing (verify.test).
tp.mesh @world ["tp" = 2]
func.func @nan(%x: tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]>})
    -> (tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{}]>}) {
  %inf = arith.constant 0x7F800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%v: f32, %o: f32):
      %z = arith.mulf %v, %zero : f32
      %n = arith.mulf %z, %inf : f32
      linalg.yield %n : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
