// RUN: tp-opt %s --tp-partition --split-input-file --verify-diagnostics | FileCheck %s

// Tests the MLP in local form: shard types for arguments, results and every
// value, the annotation gone, the pending sum reduced by one all_reduce, and
// the function marked tp.spmd with its global shardings kept.

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>},
// CHECK-SAME: %[[W1:.*]]: tensor<512x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
// CHECK-SAME: %[[W2:.*]]: tensor<512x512xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>})
// CHECK-SAME: -> (tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>})
// CHECK-SAME: attributes {tp.spmd = @world}
func.func @mlp(%x: tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>},
               %w1: tensor<512x2048xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
               %w2: tensor<2048x512xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>})
    -> (tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  // CHECK: %[[E1:.*]] = tensor.empty() {{.*}} : tensor<16x512xf32>
  %e1 = tensor.empty() {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]} : tensor<16x2048xf32>
  %a1 = linalg.fill {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]} ins(%zero : f32) outs(%e1 : tensor<16x2048xf32>) -> tensor<16x2048xf32>
  // CHECK: %[[H:.*]] = linalg.matmul {{.*}} ins(%[[X]], %[[W1]] : tensor<16x512xf32>, tensor<512x512xf32>) outs(%{{.*}} : tensor<16x512xf32>) -> tensor<16x512xf32>
  %h = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]} ins(%x, %w1 : tensor<16x512xf32>, tensor<512x2048xf32>) outs(%a1 : tensor<16x2048xf32>) -> tensor<16x2048xf32>
  // CHECK: %[[G:.*]] = math.tanh %[[H]] {{.*}} : tensor<16x512xf32>
  %g = math.tanh %h {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]} : tensor<16x2048xf32>
  // CHECK-NOT: tp.annotate
  %ga = tp.annotate %g <@world, [{}, {"tp"}]> : tensor<16x2048xf32>
  %e2 = tensor.empty() {tp.shardings = [#tp.sharding<@world, [{}, {}]>]} : tensor<16x512xf32>
  %a2 = linalg.fill {tp.shardings = [#tp.sharding<@world, [{}, {}]>]} ins(%zero : f32) outs(%e2 : tensor<16x512xf32>) -> tensor<16x512xf32>
  // CHECK: %[[Y:.*]] = linalg.matmul {{.*}} ins(%[[G]], %[[W2]] : tensor<16x512xf32>, tensor<512x512xf32>) outs(%{{.*}} : tensor<16x512xf32>)
  %y = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]} ins(%ga, %w2 : tensor<16x2048xf32>, tensor<2048x512xf32>) outs(%a2 : tensor<16x512xf32>) -> tensor<16x512xf32>
  // CHECK: %[[R:.*]] = tp.all_reduce sum %[[Y]] over @world ["tp"] {{.*}}: tensor<16x512xf32>
  %r = tp.reshard %y <@world, [{}, {}]> : tensor<16x512xf32>
  // CHECK: return %[[R]] : tensor<16x512xf32>
  return %r : tensor<16x512xf32>
}

// -----

// Tests that a split reduction whose init is not zero (a bias accumulated
// into the product) counts the init once: on the first device of the group,
// zeros elsewhere.

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @bias_init
// CHECK-SAME: (%[[A:.*]]: tensor<8x32xf32> {{.*}}, %[[B:.*]]: tensor<32x8xf32> {{.*}}, %[[C:.*]]: tensor<8x8xf32>
// CHECK: %[[I:.*]] = tp.axis_index @world ["tp"] : index
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[I]], %{{.*}} : index
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: %[[INIT:.*]] = arith.select %[[FIRST]], %[[C]], %[[Z]] : tensor<8x8xf32>
// CHECK: linalg.matmul {{.*}} outs(%[[INIT]] : tensor<8x8xf32>)
func.func @bias_init(%a: tensor<8x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                     %b: tensor<64x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
                     %c: tensor<8x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>})
    -> (tensor<8x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}], partial = ["tp"]>}) {
  %y = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]} ins(%a, %b : tensor<8x64xf32>, tensor<64x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

// Tests that linalg.index over a split loop is offset by the device's first
// index (the one-hot lookup of a vocab-parallel embedding).

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: func.func @onehot
// CHECK: %[[P:.*]] = tp.axis_index @world ["tp"] : index
// CHECK: %[[S:.*]] = arith.constant 256 : index
// CHECK: %[[OFF:.*]] = arith.muli %[[P]], %[[S]] : index
// CHECK: linalg.generic
// CHECK: %[[V:.*]] = linalg.index 1 : index
// CHECK: %[[G:.*]] = arith.addi %[[V]], %[[OFF]] : index
// CHECK: arith.index_cast %[[G]]
// CHECK: -> tensor<16x256xf32>
func.func @onehot(%ids: tensor<16xi64> {tp.sharding = #tp.sharding<@world, [{}]>})
    -> (tensor<16x1024xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]} : tensor<16x1024xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(t, v) -> (t)>, affine_map<(t, v) -> (t, v)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<16xi64>) outs(%e : tensor<16x1024xf32>) attrs = {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]} {
    ^bb0(%id: i64, %out: f32):
      %v = linalg.index 1 : index
      %vi = arith.index_cast %v : index to i64
      %hit = arith.cmpi eq, %id, %vi : i64
      %r = arith.select %hit, %one, %zero : f32
      linalg.yield %r : f32
  } -> tensor<16x1024xf32>
  return %o : tensor<16x1024xf32>
}

// -----

// Tests that a dense constant that is split is held whole and sliced (no
// communication), and a split splat becomes a local splat.

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @constants
// CHECK: %[[D:.*]] = arith.constant {{.*}}dense<{{.*}}> : tensor<4xf32>
// CHECK: %[[S:.*]] = tp.all_slice %[[D]] over @world ["tp"] dim 0 : tensor<4xf32> -> tensor<2xf32>
// CHECK: arith.constant {{.*}}dense<1.000000e+00> : tensor<2xf32>
func.func @constants() -> (tensor<4xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]>},
                           tensor<4xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]>}) {
  %d = arith.constant {tp.shardings = [#tp.sharding<@world, [{"tp"}]>]} dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %s = arith.constant {tp.shardings = [#tp.sharding<@world, [{"tp"}]>]} dense<1.0> : tensor<4xf32>
  return %d, %s : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that a dynamic size split over a mesh axis is divided at run time.

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[N:.*]]: index)
// CHECK: %[[TWO:.*]] = arith.constant 2 : index
// CHECK: %[[L:.*]] = arith.divui %[[N]], %[[TWO]] : index
// CHECK: tensor.empty(%[[L]]) {{.*}} : tensor<?x8xf32>
func.func @dynamic(%n: index) -> (tensor<?x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}) {
  %e = tensor.empty(%n) {tp.shardings = [#tp.sharding<@world, [{"tp"}, {}]>]} : tensor<?x8xf32>
  return %e : tensor<?x8xf32>
}

// -----

// Tests that a module that was not propagated is refused with a pointer to
// the missing step.

tp.mesh @world ["tp" = 2]

func.func @unpropagated(%x: tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]>}) -> tensor<8xf32> {
  // expected-error @+1 {{'math.exp' op result #0 has no sharding; run --tp-propagate first}}
  %0 = math.exp %x : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Tests that the dynamic output sizes of an expand_shape are global values
// that become local: a split one is divided by the group size.

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @dynamic_expand
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32> {{.*}}, %[[N:.*]]: index)
// CHECK: %[[L:.*]] = arith.divui %[[N]], %{{.*}} : index
// CHECK: tensor.expand_shape %[[X]] {{\[}}[0, 1], [2]] output_shape [%[[L]], 2, 8]
func.func @dynamic_expand(%x: tensor<?x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}, %n: index)
    -> (tensor<?x2x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}, {}]>}) {
  %e = tensor.expand_shape %x [[0, 1], [2]] output_shape [%n, 2, 8] {tp.shardings = [#tp.sharding<@world, [{"tp"}, {}, {}]>]} : tensor<?x8xf32> into tensor<?x2x8xf32>
  return %e : tensor<?x2x8xf32>
}

// -----

// A dynamic result dimension may be given a constant output size (fuzzed:
// the model once took every dynamic dimension for an output-size value and
// read past them): it becomes local as a constant.

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @constant_size_of_dynamic_dimension
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [2, 2, 4] {{.*}}: tensor<?x8xf32> into tensor<?x2x4xf32>
func.func @constant_size_of_dynamic_dimension(%x: tensor<?x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>})
    -> (tensor<?x2x4xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}, {}]>}) {
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [4, 2, 4] {tp.shardings = [#tp.sharding<@world, [{"tp"}, {}, {}]>]} : tensor<?x8xf32> into tensor<?x2x4xf32>
  return %e : tensor<?x2x4xf32>
}

// -----

// Tests that tensor.dim keeps meaning the global size of a split dimension:
// the local size times the group size (which tensor.empty then divides).

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @dim_of_split
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>
// CHECK: %[[D:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x8xf32>
// CHECK: %[[G:.*]] = arith.muli %[[D]], %{{.*}} : index
// CHECK: %[[L:.*]] = arith.divui %[[G]], %{{.*}} : index
// CHECK: tensor.empty(%[[L]])
func.func @dim_of_split(%x: tensor<?x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>})
    -> (tensor<?x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}) {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%d) {tp.shardings = [#tp.sharding<@world, [{"tp"}, {}]>]} : tensor<?x8xf32>
  return %e : tensor<?x8xf32>
}
