// Changes of sharding on a 2x2 mesh, each a whole function: run sharded,
// compared against the unsharded identity. Covers all_gather, all_slice,
// all_to_all, all_reduce and reduce_scatter over one and both axes.
tp.mesh @mesh ["x" = 2, "y" = 2]
func.func @swap(%a: tensor<8x8xf32> {tp.sharding = #tp.sharding<@mesh, [{"x"}, {"y"}]>})
    -> (tensor<8x8xf32> {tp.sharding = #tp.sharding<@mesh, [{"y"}, {"x"}]>}) {
  %r = tp.reshard %a <@mesh, [{"y"}, {"x"}]> : tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
func.func @gather_both(%a: tensor<8x8xf32> {tp.sharding = #tp.sharding<@mesh, [{}, {"x", "y"}]>})
    -> (tensor<8x8xf32> {tp.sharding = #tp.sharding<@mesh, [{}, {}]>}) {
  %r = tp.reshard %a <@mesh, [{}, {}]> : tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
func.func @reduce_scatter(%a: tensor<8x8xf32> {tp.sharding = #tp.sharding<@mesh, [{}, {}], partial = ["x", "y"]>})
    -> (tensor<8x8xf32> {tp.sharding = #tp.sharding<@mesh, [{"y"}, {}]>}) {
  %r = tp.reshard %a <@mesh, [{"y"}, {}]> : tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
func.func @move_dim(%a: tensor<8x8xf32> {tp.sharding = #tp.sharding<@mesh, [{"x", "y"}, {}]>})
    -> (tensor<8x8xf32> {tp.sharding = #tp.sharding<@mesh, [{}, {"y", "x"}]>}) {
  %r = tp.reshard %a <@mesh, [{}, {"y", "x"}]> : tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
