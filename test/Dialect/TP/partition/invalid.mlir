// RUN: tp-opt %s --split-input-file --tp-propagate --tp-partition --verify-diagnostics

// Tests what partitioning refuses, each with one located error and no
// half-partitioned output: programs whose structure it does not split, and
// queries of dimensions that do not exist. (A loop that propagation
// replicated whole is partitioned: propagate/conflicts.mlir.)

tp.mesh @world ["tp" = 4]

func.func @dim_out_of_range(%x: tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}) -> index {
  %c5 = arith.constant 5 : index
  // expected-error @below {{'tensor.dim' op queries dimension 5 of a tensor of rank 2}}
  %d = tensor.dim %x, %c5 : tensor<16x512xf32>
  return %d : index
}

// -----

tp.mesh @world ["tp" = 4]

func.func @loop(%x: tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}) -> tensor<16x512xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-remark @below {{no sharding rule for 'scf.for'; its tensors are replicated}}
  // expected-error @below {{'scf.for' op is control flow over tensors with shardings inside, which partitioning does not split yet (it runs such regions replicated only); unroll the loop or move the constraint out of the region}}
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %x) -> tensor<16x512xf32> {
    %b = tp.annotate %a <@world, [{"tp"}, {}]> : tensor<16x512xf32>
    scf.yield %b : tensor<16x512xf32>
  }
  return %r : tensor<16x512xf32>
}

// -----

tp.mesh @world ["tp" = 4]

// expected-error @below {{'func.func' op has 3 blocks; sharding handles functions of one block (structured control flow), not branches between blocks}}
func.func @branches(%x: tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}, %c: i1) -> tensor<16x512xf32> {
  cf.cond_br %c, ^a, ^b
^a:
  return %x : tensor<16x512xf32>
^b:
  %e = tensor.empty() : tensor<16x512xf32>
  return %e : tensor<16x512xf32>
}

// -----

// Control flow over scalars only is left alone.

tp.mesh @world ["tp" = 4]

func.func @scalar_loop(%x: tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}, %n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %c0) -> index {
    %b = arith.addi %a, %i : index
    scf.yield %b : index
  }
  return %r : index
}
