// The sums of squares of 4 rows of 4096 bf16 values in [-1, 1): about 1365
// each (4096 / 3). Accumulated in bf16 they would stop at 256, where the
// spacing of bf16 (2) swallows every term; tp-widen-reductions accumulates in
// f32 and rounds once.
#se = affine_map<(s, e) -> (s, e)>
#s = affine_map<(s, e) -> (s)>
tp.mesh @world ["tp" = 2]
func.func @sum_of_squares(%x: tensor<4x4096xbf16> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>})
    -> (tensor<4xbf16> {tp.sharding = #tp.sharding<@world, [{}]>}) {
  %zero = arith.constant 0.0 : bf16
  %es = tensor.empty() : tensor<4xbf16>
  %zs = linalg.fill ins(%zero : bf16) outs(%es : tensor<4xbf16>) -> tensor<4xbf16>
  %ss = linalg.generic {indexing_maps = [#se, #s], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x4096xbf16>) outs(%zs : tensor<4xbf16>) {
    ^bb0(%v: bf16, %acc: bf16):
      %v2 = arith.mulf %v, %v : bf16
      %r = arith.addf %v2, %acc : bf16
      linalg.yield %r : bf16
  } -> tensor<4xbf16>
  return %ss : tensor<4xbf16>
}
