// RUN: tp-opt %s --split-input-file --tp-outline-repeated-layers=min-layer-ops=2 | FileCheck %s
// RUN: tp-opt %s --split-input-file --tp-outline-repeated-layers="max-layers=0 max-function-ops=2" | FileCheck %s --check-prefix=PARTS
// RUN: tp-opt %s --split-input-file --tp-outline-repeated-layers="min-layer-ops=2 straight-line-calls=2" | FileCheck %s --check-prefix=STRAIGHT

// Two layers tanh(x * w): one function, called once per layer with its weight.
// CHECK-LABEL: func.func @two_layers
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>, %[[W0:.*]]: tensor<8xf32>, %[[W1:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[L0:.*]] = call @two_layers_layer0(%[[X]], %[[W0]])
// CHECK-NEXT: %[[L1:.*]] = call @two_layers_layer0(%[[L0]], %[[W1]])
// CHECK-NEXT: return %[[L1]]
// CHECK: func.func private @two_layers_layer0(%[[A:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[A]], %[[B]]
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[M]]
// CHECK-NEXT: return %[[T]]
func.func @two_layers(%x: tensor<8xf32>, %w0: tensor<8xf32>, %w1: tensor<8xf32>) -> tensor<8xf32> {
  %a = arith.mulf %x, %w0 : tensor<8xf32>
  %b = math.tanh %a : tensor<8xf32>
  %c = arith.mulf %b, %w1 : tensor<8xf32>
  %d = math.tanh %c : tensor<8xf32>
  return %d : tensor<8xf32>
}

// -----

// Local form: the layers share constants and a tensor.empty that CSE made
// once for all (leaves, cloned into the layer function), and each ends in an
// all_reduce; the layer function keeps tp.spmd. A prefix and a suffix that
// are not layers stay where they are.
tp.mesh @world ["tp" = 2]
#id = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @local
// CHECK: arith.negf
// CHECK-NEXT: %[[C0:.*]] = call @local_layer0(%{{.*}}, %arg1)
// CHECK-NEXT: %[[C1:.*]] = call @local_layer0(%[[C0]], %arg2)
// CHECK-NEXT: %[[C2:.*]] = call @local_layer0(%[[C1]], %arg3)
// CHECK-NEXT: math.exp %[[C2]]
// CHECK: func.func private @local_layer0(%{{.*}}: tensor<4x8xf32>, %{{.*}}: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {passthrough = ["noinline"], tp.spmd = @world}
// CHECK-DAG: arith.constant 5.000000e-01 : f32
// CHECK-DAG: tensor.empty() : tensor<4x8xf32>
// CHECK: linalg.generic
// CHECK: tp.all_reduce sum
// CHECK-NEXT: return
func.func @local(%x: tensor<4x8xf32>, %w0: tensor<4x8xf32>, %w1: tensor<4x8xf32>, %w2: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {passthrough = ["noinline"], tp.spmd = @world} {
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %p = arith.negf %x : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %w0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %h = arith.mulf %m, %half : f32
    linalg.yield %h : f32
  } -> tensor<4x8xf32>
  %1 = tp.all_reduce sum %0 over @world ["tp"] : tensor<4x8xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%1, %w1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %h = arith.mulf %m, %half : f32
    linalg.yield %h : f32
  } -> tensor<4x8xf32>
  %3 = tp.all_reduce sum %2 over @world ["tp"] : tensor<4x8xf32>
  %4 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%3, %w2 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %h = arith.mulf %m, %half : f32
    linalg.yield %h : f32
  } -> tensor<4x8xf32>
  %5 = tp.all_reduce sum %4 over @world ["tp"] : tensor<4x8xf32>
  %6 = math.exp %5 : tensor<4x8xf32>
  return %6 : tensor<4x8xf32>
}

// -----

// Layers that differ are left alone: other shapes ...
// CHECK-LABEL: func.func @other_shapes
// CHECK-NOT: call
// CHECK: return
func.func @other_shapes(%x: tensor<8xf32>, %w0: tensor<8xf32>, %y: tensor<4xf32>, %w1: tensor<4xf32>) -> (tensor<8xf32>, tensor<4xf32>) {
  %a = arith.mulf %x, %w0 : tensor<8xf32>
  %b = math.tanh %a : tensor<8xf32>
  %c = arith.mulf %y, %w1 : tensor<4xf32>
  %d = math.tanh %c : tensor<4xf32>
  return %b, %d : tensor<8xf32>, tensor<4xf32>
}

// -----

// ... other constants ...
// CHECK-LABEL: func.func @other_constants
// CHECK-NOT: call
// CHECK: return
// Parts: no layer function, the 4 ops cut into 2 parts of 2, called once each
// in order, the constants cloned into the parts that read them.
// PARTS-LABEL: func.func @other_constants
// PARTS-NEXT: %[[P0:.*]] = call @other_constants_part0(%arg0)
// PARTS-NEXT: %[[P1:.*]] = call @other_constants_part1(%[[P0]])
// PARTS-NEXT: return %[[P1]]
// PARTS: func.func private @other_constants_part0(%{{.*}}: tensor<8xf32>) -> tensor<8xf32> attributes {passthrough = ["noinline"]}
// PARTS-NEXT: arith.constant dense<1.000000e+00>
// PARTS-NEXT: arith.mulf
// PARTS-NEXT: math.tanh
// PARTS: func.func private @other_constants_part1(%{{.*}}: tensor<8xf32>) -> tensor<8xf32> attributes {passthrough = ["noinline"]}
// PARTS-NEXT: arith.constant dense<2.000000e+00>
// PARTS-NEXT: arith.mulf
// PARTS-NEXT: math.tanh
func.func @other_constants(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c1 = arith.constant dense<1.0> : tensor<8xf32>
  %c2 = arith.constant dense<2.0> : tensor<8xf32>
  %a = arith.mulf %x, %c1 : tensor<8xf32>
  %b = math.tanh %a : tensor<8xf32>
  %c = arith.mulf %b, %c2 : tensor<8xf32>
  %d = math.tanh %c : tensor<8xf32>
  return %d : tensor<8xf32>
}

// -----

// ... or the same ops reading their inputs differently (x * w, then b * b).
// CHECK-LABEL: func.func @other_dataflow
// CHECK-NOT: call
// CHECK: return
func.func @other_dataflow(%x: tensor<8xf32>, %w0: tensor<8xf32>) -> tensor<8xf32> {
  %a = arith.mulf %x, %w0 : tensor<8xf32>
  %b = math.tanh %a : tensor<8xf32>
  %c = arith.mulf %b, %b : tensor<8xf32>
  %d = math.tanh %c : tensor<8xf32>
  return %d : tensor<8xf32>
}

// -----

// A value a layer makes and something after the next layer reads (a
// residual, an activation kept for backward) is a result of the layer
// function; a training step's forward and backward layers become two
// functions.
// CHECK-LABEL: func.func @two_kinds
// CHECK-NEXT: %[[F0:.*]]:2 = call @[[FWD:two_kinds_layer.]](%arg0, %arg1)
// CHECK-NEXT: %[[F1:.*]]:2 = call @[[FWD]](%[[F0]]#1, %arg2)
// CHECK-NEXT: %[[B0:.*]] = call @[[BWD:two_kinds_layer.]](%[[F1]]#1, %[[F1]]#0, %arg2)
// CHECK-NEXT: %[[B1:.*]] = call @[[BWD]](%[[B0]], %[[F0]]#0, %arg1)
// CHECK-NEXT: return %[[B1]]
// CHECK-DAG: func.func private @[[FWD]]({{.*}}) -> (tensor<8xf32>, tensor<8xf32>)
// CHECK-DAG: func.func private @[[BWD]]({{.*}}) -> tensor<8xf32>
func.func @two_kinds(%x: tensor<8xf32>, %w0: tensor<8xf32>, %w1: tensor<8xf32>) -> tensor<8xf32> {
  %a0 = arith.mulf %x, %w0 : tensor<8xf32>
  %h0 = math.tanh %a0 : tensor<8xf32>
  %a1 = arith.mulf %h0, %w1 : tensor<8xf32>
  %h1 = math.tanh %a1 : tensor<8xf32>
  %g1 = arith.subf %h1, %a1 : tensor<8xf32>
  %s1 = arith.divf %g1, %w1 : tensor<8xf32>
  %t1 = math.exp %s1 : tensor<8xf32>
  %g0 = arith.subf %t1, %a0 : tensor<8xf32>
  %s0 = arith.divf %g0, %w0 : tensor<8xf32>
  %t0 = math.exp %s0 : tensor<8xf32>
  return %t0 : tensor<8xf32>
}

// -----

// A driver's calls are not code for LLVM to optimize: a function of three
// calls and one op is not cut at max-function-ops=2.
// PARTS-LABEL: func.func @driver
// PARTS-NEXT: call @layer
// PARTS-NEXT: call @layer
// PARTS-NEXT: call @layer
// PARTS-NEXT: math.tanh
// PARTS-NEXT: return
// PARTS-NOT: @driver_part
func.func private @layer(%x: tensor<8xf32>) -> tensor<8xf32>
func.func @driver(%x: tensor<8xf32>) -> tensor<8xf32> {
  %a = call @layer(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %b = call @layer(%a) : (tensor<8xf32>) -> tensor<8xf32>
  %c = call @layer(%b) : (tensor<8xf32>) -> tensor<8xf32>
  %d = math.tanh %c : tensor<8xf32>
  return %d : tensor<8xf32>
}

// -----

// With straight-line-calls=2, a function making more than 2 calls keeps only
// straight-line code: a run of ops between its calls that will lower to loops
// becomes a part (called once); a run of reshapes only stays.
// STRAIGHT-LABEL: func.func @straight
// STRAIGHT-NEXT: %[[P:.*]] = call @straight_part0(%arg0)
// STRAIGHT-NEXT: %[[L0:.*]] = call @straight_layer0(%[[P]], %arg1)
// STRAIGHT-NEXT: %[[L1:.*]] = call @straight_layer0(%[[L0]], %arg2)
// STRAIGHT-NEXT: %[[L2:.*]] = call @straight_layer0(%[[L1]], %arg3)
// STRAIGHT-NEXT: %[[R:.*]] = tensor.expand_shape %[[L2]]
// STRAIGHT-NEXT: return %[[R]]
// STRAIGHT: func.func private @straight_part0(
// STRAIGHT-NEXT: arith.negf
// STRAIGHT-NEXT: math.exp
// STRAIGHT-NEXT: return
// Without it, the prefix stays.
// CHECK-LABEL: func.func @straight
// CHECK-NEXT: arith.negf
// CHECK-NEXT: math.exp
// CHECK-COUNT-3: call @straight_layer0
// CHECK-NEXT: tensor.expand_shape
func.func @straight(%x: tensor<8xf32>, %w0: tensor<8xf32>, %w1: tensor<8xf32>, %w2: tensor<8xf32>) -> tensor<2x4xf32> {
  %p = arith.negf %x : tensor<8xf32>
  %q = math.exp %p : tensor<8xf32>
  %a = arith.mulf %q, %w0 : tensor<8xf32>
  %b = math.tanh %a : tensor<8xf32>
  %c = arith.mulf %b, %w1 : tensor<8xf32>
  %d = math.tanh %c : tensor<8xf32>
  %e = arith.mulf %d, %w2 : tensor<8xf32>
  %f = math.tanh %e : tensor<8xf32>
  %r = tensor.expand_shape %f [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
