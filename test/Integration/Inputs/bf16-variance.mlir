// The sums of squared deviations of 4 rows of 4096 bf16 values in [-1, 1)
// from a second input (a layernorm's variance, from the activations and
// their mean): thousands each. Accumulated in bf16 they would stop at 256
// (the spacing of bf16 there, 2, swallows every term); tp-widen-reductions
// accumulates sums of terms made from several inputs in f32 as well.
#se = affine_map<(s, e) -> (s, e)>
#s = affine_map<(s, e) -> (s)>
tp.mesh @world ["tp" = 2]
func.func @variance(%x: tensor<4x4096xbf16> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
                    %m: tensor<4xbf16> {tp.sharding = #tp.sharding<@world, [{"tp"}]>})
    -> (tensor<4xbf16> {tp.sharding = #tp.sharding<@world, [{}]>}) {
  %zero = arith.constant 0.0 : bf16
  %es = tensor.empty() : tensor<4xbf16>
  %zs = linalg.fill ins(%zero : bf16) outs(%es : tensor<4xbf16>) -> tensor<4xbf16>
  %ss = linalg.generic {indexing_maps = [#se, #s, #s], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<4x4096xbf16>, tensor<4xbf16>) outs(%zs : tensor<4xbf16>) {
    ^bb0(%v: bf16, %mean: bf16, %acc: bf16):
      %d = arith.subf %v, %mean : bf16
      %d2 = arith.mulf %d, %d : bf16
      %r = arith.addf %d2, %acc : bf16
      linalg.yield %r : bf16
  } -> tensor<4xbf16>
  return %ss : tensor<4xbf16>
}
