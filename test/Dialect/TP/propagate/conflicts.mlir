// RUN: tp-opt %s --tp-propagate --split-input-file --verify-diagnostics | FileCheck %s
// The search keeps the plan of the cases with remarks: their remarks, held
// back while it decided, come out once.
// RUN: tp-opt %s --tp-propagate=search --split-input-file --verify-diagnostics -o /dev/null

// Tests that two annotations of one value that disagree are both kept: the
// value takes the first, and a reshard feeds the second.

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @two_annotations
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>})
// CHECK: %[[R:.*]] = tp.reshard %[[X]] <@world, [{}, {"tp"}]>
// CHECK: %[[A:.*]] = tp.annotate %[[X]] <@world, [{"tp"}, {}]>
// CHECK: %[[B:.*]] = tp.annotate %[[R]] <@world, [{}, {"tp"}]>
// CHECK-NOT: tp.reshard
func.func @two_annotations(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %a = tp.annotate %x <@world, [{"tp"}, {}]> : tensor<8x8xf32>
  %b = tp.annotate %x <@world, [{}, {"tp"}]> : tensor<8x8xf32>
  return %a, %b : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// Tests that a constrained argument and a constrained result that disagree
// give one reshard: the op follows its input (no gather), the result is
// resharded before it is returned.

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @arg_vs_result
// CHECK: %[[E:.*]] = math.exp %{{.*}} {tp.shardings = [#tp.sharding<@world, [{"tp"}, {}]>]}
// CHECK: %[[R:.*]] = tp.reshard %[[E]] <@world, [{}, {"tp"}]>
// CHECK: return %[[R]]
func.func @arg_vs_result(%x: tensor<8x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>})
    -> (tensor<8x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}) {
  %0 = math.exp %x : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// Tests that an op with both operands split differently picks the cheaper
// side: gathering the small vector beats gathering the large matrix.

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @cheaper_side
// CHECK-SAME: %[[M:[^:]*]]: tensor<1024x64xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}
// CHECK-SAME: %[[V:[^:]*]]: tensor<64xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]>}
// CHECK: %[[RV:.*]] = tp.reshard %[[V]] <@world, [{}]>
// CHECK: linalg.generic {{.*}} ins(%[[M]], %[[RV]] {{.*}} {tp.shardings = [#tp.sharding<@world, [{"tp"}, {}]>]}
func.func @cheaper_side(%m: tensor<1024x64xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
                        %v: tensor<64xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]>}) -> tensor<1024x64xf32> {
  %e = tensor.empty() : tensor<1024x64xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m, %v : tensor<1024x64xf32>, tensor<64xf32>) outs(%e : tensor<1024x64xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
  } -> tensor<1024x64xf32>
  return %0 : tensor<1024x64xf32>
}

// -----

// Tests that a partial value is reduced before a non-linear op.

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @partial_then_exp
// CHECK: %[[P:.*]] = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]}
// CHECK: %[[R:.*]] = tp.reshard %[[P]] <@world, [{}, {}]>
// CHECK: math.exp %[[R]]
func.func @partial_then_exp(%a: tensor<8x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                            %b: tensor<64x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>})
    -> (tensor<8x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %p = linalg.matmul ins(%a, %b : tensor<8x64xf32>, tensor<64x8xf32>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  %x = math.exp %p : tensor<8x8xf32>
  return %x : tensor<8x8xf32>
}

// -----

// Tests that an op without a rule is replicated with a remark naming it, its
// split operand gathered first.

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @no_rule
// CHECK: %[[R:.*]] = tp.reshard %{{.*}} <@world, [{}]>
// CHECK: tensor.reshape %[[R]]
// CHECK-SAME: tp.shardings = [#tp.sharding<@world, [{}, {}]>]
func.func @no_rule(%t: tensor<16xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]>}, %shape: tensor<2xi64>) -> tensor<4x4xf32> {
  // expected-remark @+1 {{no sharding rule for 'tensor.reshape'; its tensors are replicated}}
  %0 = tensor.reshape %t(%shape) : (tensor<16xf32>, tensor<2xi64>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Tests that a split dynamic dimension stays split (its divisibility is
// checked once sizes are known).

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @dynamic
// CHECK: math.exp {{.*}} {tp.shardings = [#tp.sharding<@world, [{"tp"}, {}]>]}
// CHECK-NOT: tp.reshard
func.func @dynamic(%x: tensor<?x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}) -> tensor<?x8xf32> {
  %0 = math.exp %x : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// Tests that a loop (no sharding rule) is replicated with one remark: its
// split input is gathered first, and its terminator is not reported apart.

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @loop
// CHECK: %[[G:.*]] = tp.reshard %{{.*}} <@world, [{}, {}]>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[G]])
// CHECK: } {tp.shardings = [#tp.sharding<@world, [{}, {}]>]}
func.func @loop(%x: tensor<8x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}, %n: index) -> tensor<8x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-remark @+1 {{no sharding rule for 'scf.for'; its tensors are replicated}}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<8x8xf32>) {
    %e = math.exp %acc : tensor<8x8xf32>
    scf.yield %e : tensor<8x8xf32>
  }
  return %r : tensor<8x8xf32>
}

// -----

// Tests that a size query (tensor.dim) of a split tensor needs no data
// movement and no remark.

tp.mesh @world ["tp" = 2]

// CHECK-LABEL: func.func @dim_query
// CHECK-NOT: tp.reshard
// CHECK: tensor.dim
func.func @dim_query(%x: tensor<?x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}) -> index {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x8xf32>
  return %d : index
}
