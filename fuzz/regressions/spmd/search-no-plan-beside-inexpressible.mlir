// The search beside a fixed point the model cannot express, finding no plan
// at all (a mesh axis of 2^63-1 devices): it read the absent incumbent
// (Planner::totalsOf). Its size is a multiple of 4: tp-fuzz-spmd then searches.
tp.mesh @world ["tp" = 9223372036854775807]
func.func @f(%a: tensor<?x4xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
             %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %r = linalg.add ins(%a, %b : tensor<?x4xf32>, tensor<?x4xf32>) outs(%a : tensor<?x4xf32>) -> tensor<?x4xf32>
  %s = linalg.add ins(%r, %b : tensor<?x4xf32>, tensor<?x4xf32>) outs(%b : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %s : tensor<?x4xf32>
}
