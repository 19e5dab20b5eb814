// Local-form programs that are wrong in ways a sharded run can hide, for
// verify.test; wrong-reference.mlir has what each should compute.
tp.mesh @m ["tp" = 2]

// "Replicated", but device 1 adds 1 to its copy: device 0's copy (the one the
// gather reads) is right.
func.func @disagree(%x: tensor<8xf32> {tp.sharding = #tp.sharding<@m, [{}]>})
    -> (tensor<8xf32> {tp.sharding = #tp.sharding<@m, [{}]>}) attributes {tp.spmd = @m} {
  %i = tp.axis_index @m ["tp"] : index
  %n = arith.index_cast %i : index to i32
  %f = arith.sitofp %n : i32 to f32
  %t = tensor.splat %f : tensor<8xf32>
  %y = arith.addf %x, %t : tensor<8xf32>
  return %y : tensor<8xf32>
}

// A pending sum made replicated by copying each device's term instead of
// summing them (an all_reduce that copies).
func.func @copy(%x: tensor<8xf32> {tp.sharding = #tp.sharding<@m, [{}], partial = ["tp"]>})
    -> (tensor<8xf32> {tp.sharding = #tp.sharding<@m, [{}]>}) attributes {tp.spmd = @m} {
  return %x : tensor<8xf32>
}

// The same, right.
func.func @sum(%x: tensor<8xf32> {tp.sharding = #tp.sharding<@m, [{}], partial = ["tp"]>})
    -> (tensor<8xf32> {tp.sharding = #tp.sharding<@m, [{}]>}) attributes {tp.spmd = @m} {
  %y = tp.all_reduce sum %x over @m ["tp"] : tensor<8xf32>
  return %y : tensor<8xf32>
}

// Device 1 never returns: an endless loop, in no collective.
func.func @stuck(%x: tensor<8xf32> {tp.sharding = #tp.sharding<@m, [{}]>})
    -> (tensor<8xf32> {tp.sharding = #tp.sharding<@m, [{}]>}) attributes {tp.spmd = @m} {
  %i = tp.axis_index @m ["tp"] : index
  %c1 = arith.constant 1 : index
  %spin = arith.cmpi eq, %i, %c1 : index
  %r = scf.while (%v = %x) : (tensor<8xf32>) -> tensor<8xf32> {
    scf.condition(%spin) %v : tensor<8xf32>
  } do {
  ^bb0(%w: tensor<8xf32>):
    %e = linalg.map { math.exp } ins(%w : tensor<8xf32>) outs(%w : tensor<8xf32>)
    scf.yield %e : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
