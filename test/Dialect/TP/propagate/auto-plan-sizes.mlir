// The automatic planner's choice follows the machine model and the budget,
// on an MLP with 4096 tokens:
// - a machine whose collectives are slow (a machine-model
//   file) computes everything on every device: one collective would cost
//   more than the whole MLP;
// - the built-in H200 without a budget splits the tokens (data parallelism:
//   weights replicated, the output all-gathered, which moves fewer bytes
//   than Megatron-LM's all-reduce of it);
// - the H200 with a budget below the replicated weights (350 MB: Megatron's
//   plan holds 192 MB of arguments and 128 MB of activations at its peak,
//   the two hidden tensors) splits the weights, Megatron-LM's way.
// RUN: tp-opt %s --tp-propagate="auto-plan cost-model=%S/Inputs/slow-network.json" | FileCheck %s --check-prefix=SLOW
// RUN: tp-opt %s --tp-propagate="auto-plan" | FileCheck %s --check-prefix=DATA
// RUN: tp-opt %s --tp-propagate="auto-plan memory-per-device=350MB" | FileCheck %s --check-prefix=FAST

tp.mesh @world ["tp" = 4]

// SLOW-LABEL: func.func @large_mlp
// SLOW-SAME: tensor<4096x4096xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}
// SLOW-SAME: tensor<4096x16384xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}
// SLOW-SAME: tensor<16384x4096xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}
// SLOW-NOT: tp.reshard

// DATA-LABEL: func.func @large_mlp
// DATA-SAME: tensor<4096x4096xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}
// DATA-SAME: tensor<4096x16384xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}
// DATA-SAME: tensor<16384x4096xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}
// DATA: linalg.matmul {tp.shardings = [#tp.sharding<@world, [{"tp"}, {}]>]}
// DATA: %[[Y:.*]] = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{"tp"}, {}]>]}
// DATA: tp.reshard %[[Y]] <@world, [{}, {}]>

// FAST-LABEL: func.func @large_mlp
// FAST-SAME: tensor<4096x4096xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}
// FAST-SAME: tensor<4096x16384xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}
// FAST-SAME: tensor<16384x4096xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}
// FAST: tp.reshard {{.*}} <@world, [{}, {}]>
func.func @large_mlp(%x: tensor<4096x4096xf32>, %w1: tensor<4096x16384xf32>,
                     %w2: tensor<16384x4096xf32>) -> tensor<4096x4096xf32> {
  %c0 = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4096x16384xf32>
  %f1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<4096x16384xf32>) -> tensor<4096x16384xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<4096x4096xf32>, tensor<4096x16384xf32>)
                     outs(%f1 : tensor<4096x16384xf32>) -> tensor<4096x16384xf32>
  %e2 = tensor.empty() : tensor<4096x4096xf32>
  %f2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %y = linalg.matmul ins(%h, %w2 : tensor<4096x16384xf32>, tensor<16384x4096xf32>)
                     outs(%f2 : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %y : tensor<4096x4096xf32>
}
