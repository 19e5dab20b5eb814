// A mesh with a batch axis ("dp" x "tp", 8 devices) and a budget that fits
// every weight replicated: the planner picks data parallelism over all 8
// devices (the 4096 tokens split by both axes, weights replicated, the
// output all-gathered once), because on the H200 model it moves fewer bytes
// than Megatron-LM's all-reduce of the output and splits the GEMMs as far.
// RUN: tp-opt %s --tp-spmd="auto-plan memory-per-device=1GB" | FileCheck %s
// RUN: tp-opt %s --tp-spmd="auto-plan memory-per-device=1GB" --tp-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// CHECK-LABEL: func.func @mlp
// CHECK-SAME: tensor<512x512xf32> {tp.sharding = #tp.sharding<@grid, [{"dp", "tp"}, {}]>}
// CHECK-SAME: tensor<512x2048xf32> {tp.sharding = #tp.sharding<@grid, [{}, {}]>}
// CHECK-SAME: tensor<2048x512xf32> {tp.sharding = #tp.sharding<@grid, [{}, {}]>}
// CHECK-NOT: tp.all_reduce
// CHECK: tp.all_gather {{.*}} over @grid ["dp", "tp"] dim 0
// CHECK-NOT: tp.all_
// CHECK: return

// REPORT: %arg0 : tensor<4096x512xf32> row-parallel #tp.sharding<@grid, [{"dp", "tp"}, {}]>
// REPORT: %arg1 : tensor<512x2048xf32> replicated
// REPORT-NEXT: runner-up {{.*}}: {{.*}} us modelled (+{{[1-9][0-9.]*}} us)


tp.mesh @grid ["dp" = 2, "tp" = 4]

func.func @mlp(%x: tensor<4096x512xf32>,
               %w1: tensor<512x2048xf32>,
               %w2: tensor<2048x512xf32>)
    -> (tensor<4096x512xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4096x2048xf32>
  %a1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4096x2048xf32>) -> tensor<4096x2048xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<4096x512xf32>, tensor<512x2048xf32>) outs(%a1 : tensor<4096x2048xf32>) -> tensor<4096x2048xf32>
  %g = math.tanh %h : tensor<4096x2048xf32>
  %e2 = tensor.empty() : tensor<4096x512xf32>
  %a2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4096x512xf32>) -> tensor<4096x512xf32>
  %y = linalg.matmul ins(%g, %w2 : tensor<4096x2048xf32>, tensor<2048x512xf32>) outs(%a2 : tensor<4096x512xf32>) -> tensor<4096x512xf32>
  return %y : tensor<4096x512xf32>
}
