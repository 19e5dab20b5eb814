// A planted bug: a program that writes into its input behind
// bufferization's back (a store through a read_only to_buffer).
tp.mesh @world ["tp" = 2]
func.func @f(%a: tensor<4x4xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}) -> (tensor<4x4xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}) attributes {tp.spmd = @world} {
  %m = bufferization.to_buffer %a read_only : tensor<4x4xf32> to memref<4x4xf32>
  %c0 = arith.constant 0 : index
  %v = arith.constant 7.0 : f32
  memref.store %v, %m[%c0, %c0] : memref<4x4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %r = linalg.add ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
