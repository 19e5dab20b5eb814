// Bad auto-plan input: a clean error naming the bad value, never a crash.

// A budget below what any plan needs names the least it could be.
// RUN: not tp-opt %s --tp-propagate="auto-plan memory-per-device=1MB" 2>&1 | FileCheck %s --check-prefix=BUDGET
// BUDGET: auto-plan-invalid.mlir:[[@LINE+18]]:1: error: auto-plan: no plan fits memory-per-device=1000000 bytes: the function's arguments and the activations live at its peak need at least 2146304 bytes per device (every open argument split as far as the mesh allows, annotated ones as annotated)
// RUN: not tp-opt %s --tp-propagate="auto-plan memory-per-device=lots" 2>&1 | FileCheck %s --check-prefix=SIZE
// SIZE: error: tp-propagate: memory-per-device='lots' is not a size: expected a positive number of bytes with an optional unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), e.g. 80GB
// RUN: not tp-opt %s --tp-propagate="auto-plan cost-model=%S/Inputs/missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: tp-propagate: cost-model: cannot read the machine model '{{.*}}missing.json': {{.*}} (expected "h200" or a file written by tprt-bench --calibrate)
// RUN: not tp-opt %s --tp-propagate="auto-plan cost-model=%S/Inputs/negative-bandwidth.json" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: tp-propagate: cost-model: machine model '{{.*}}negative-bandwidth.json': collectives.reduce_scatter."bus_bytes_per_second" is -1; expected a positive number
// RUN: not tp-opt %s --tp-propagate="auto-plan cost-model=%s" 2>&1 | FileCheck %s --check-prefix=NOTJSON
// NOTJSON: error: tp-propagate: cost-model: machine model '{{.*}}auto-plan-invalid.mlir' is not JSON: {{.*}}
// RUN: not tp-opt %s --tp-propagate="memory-per-device=1GB" 2>&1 | FileCheck %s --check-prefix=OFF
// OFF: error: tp-propagate: memory-per-device applies to auto-plan and search, which are off
// RUN: not tp-opt %s --tp-propagate="cost-model=%S/Inputs/slow-network.json" 2>&1 | FileCheck %s --check-prefix=NOMODEL
// NOMODEL: error: tp-propagate: cost-model applies to auto-plan and search, which are off
// search reads its machine model as auto-plan does.
// RUN: not tp-opt %s --tp-propagate="search cost-model=%S/Inputs/negative-bandwidth.json" 2>&1 | FileCheck %s --check-prefix=NEGATIVE

tp.mesh @world ["tp" = 4]

func.func @mlp(%x: tensor<16x512xf32>,
               %w1: tensor<512x2048xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
               %w2: tensor<2048x512xf32>) -> tensor<16x512xf32> {
  %c0 = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x2048xf32>
  %f1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<16x2048xf32>) -> tensor<16x2048xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x512xf32>, tensor<512x2048xf32>)
                     outs(%f1 : tensor<16x2048xf32>) -> tensor<16x2048xf32>
  %e2 = tensor.empty() : tensor<16x512xf32>
  %f2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<16x512xf32>) -> tensor<16x512xf32>
  %y = linalg.matmul ins(%h, %w2 : tensor<16x2048xf32>, tensor<2048x512xf32>)
                     outs(%f2 : tensor<16x512xf32>) -> tensor<16x512xf32>
  return %y : tensor<16x512xf32>
}

// COIN-OR's solvers are loaded when a plan first solves a programme: where
// they cannot be, that plan fails with the library and the loader's reason;
// a pipeline that solves nothing (no search, no auto-plan) never loads them.
// RUN: not tp-opt %s --tp-propagate="auto-plan" --tp-coin-library-dir=%t.missing 2>&1 | FileCheck %s --check-prefix=NOCOIN
// NOCOIN: auto-plan-invalid.mlir:{{[0-9]+}}:1: error: auto-plan: cannot load COIN-OR's {{.*}}.missing/libClp.so.1 ({{.*}}No such file or directory); install coinor-libcbc3 (Debian) or an equivalent
// RUN: tp-opt %s --tp-spmd="search=false" --tp-coin-library-dir=%t.missing | FileCheck %s --check-prefix=UNSOLVED
// UNSOLVED: func.func @mlp({{.*}}attributes {tp.spmd = @world}
