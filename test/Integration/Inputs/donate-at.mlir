tp.mesh @world ["tp" = 4]

// A decode step's cache update at a position given at run time (a 0-d integer
// input, as a decode loop passes its step), the cache donated. On a GPU the
// host code reads the position (tp-mark-host-reads: cuda-host-reads.test).
func.func @append_at(%cache: tensor<2x8x6x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}, {}, {}]>, tp.donate = 0 : i64},
                     %k: tensor<2x8x1x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}, {}, {}]>},
                     %pos: tensor<i64> {tp.sharding = #tp.sharding<@world, []>})
    -> (tensor<2x8x6x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}, {}, {}]>}) {
  %p = tensor.extract %pos[] : tensor<i64>
  %i = arith.index_cast %p : i64 to index
  %new = tensor.insert_slice %k into %cache[0, 0, %i, 0] [2, 8, 1, 16] [1, 1, 1, 1]
      : tensor<2x8x1x16xf32> into tensor<2x8x6x16xf32>
  return %new : tensor<2x8x6x16xf32>
}
