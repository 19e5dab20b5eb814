// RUN: tp-opt %s --split-input-file --tp-fold-addends-into-gemm | FileCheck %s
// RUN: tp-opt %s --split-input-file --tp-fold-addends-into-gemm=narrow=1 | FileCheck %s --check-prefix=NARROW

// Tests that a GEMM whose zeroed accumulator is summed into, and whose only
// reader adds inputs to its result, starts from those inputs (a bias, a
// residual) instead; and the cases it leaves alone.

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>

// Bias and residual: both start the accumulator, the consumer goes away.
// CHECK-LABEL: func.func @bias_and_residual
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>, %[[W:.*]]: tensor<16x8xf32>, %[[B:.*]]: tensor<8xf32>, %[[R:.*]]: tensor<4x8xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[INIT:.*]] = linalg.generic {indexing_maps = [#[[ROW:.*]], #[[ID:.*]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[B]], %[[R]] : tensor<8xf32>, tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[BV:.*]]: f32, %[[RV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[BV]], %[[RV]] : f32
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<4x16xf32>, tensor<16x8xf32>) outs(%[[INIT]] : tensor<4x8xf32>)
// CHECK-NEXT: return %[[M]]
func.func @bias_and_residual(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>,
                             %r: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b, %r : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %rv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    %t = arith.addf %rv, %s : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>

// Bias then GELU: the bias starts the accumulator; the consumer keeps the
// GELU and no longer reads the bias.
// CHECK-LABEL: func.func @bias_then_tanh
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>, %[[W:.*]]: tensor<16x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK: %[[INIT:.*]] = linalg.generic
// CHECK-SAME: ins(%[[B]] : tensor<8xf32>)
// CHECK-NEXT: ^bb0(%[[BV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[BV]]
// CHECK: %[[M:.*]] = linalg.matmul {{.*}} outs(%[[INIT]] : tensor<4x8xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[M]] : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[V]]
// CHECK-NEXT: linalg.yield %[[T]]
func.func @bias_then_tanh(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>

// A residual alone is the accumulator itself; a bias defined after the GEMM
// brings the GEMM down to its consumer.
// CHECK-LABEL: func.func @residual_only
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>, %[[W:.*]]: tensor<16x8xf32>, %[[R:.*]]: tensor<4x8xf32>)
// CHECK-NOT: linalg
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<4x16xf32>, tensor<16x8xf32>) outs(%[[R]] : tensor<4x8xf32>)
// CHECK-NEXT: return %[[M]]
func.func @residual_only(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %r: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r, %m : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%rv: f32, %v: f32, %o: f32):
    %s = arith.addf %rv, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @bias_defined_after
// CHECK: tensor.collapse_shape
// CHECK: %[[INIT:.*]] = linalg.generic
// CHECK: %[[M:.*]] = linalg.generic {{.*}} outs(%[[INIT]] : tensor<2x2x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: mulf
// CHECK-NEXT: addf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[M]]
#lhs3 = affine_map<(i, j, n, k) -> (i, j, k)>
#rhs3 = affine_map<(i, j, n, k) -> (k, n)>
#out3 = affine_map<(i, j, n, k) -> (i, j, n)>
#id3 = affine_map<(i, j, n) -> (i, j, n)>
#bias3 = affine_map<(i, j, n) -> (n)>
func.func @bias_defined_after(%x: tensor<2x2x16xf32>, %w: tensor<16x8xf32>, %b: tensor<1x8xf32>) -> tensor<2x2x8xf32> {
  %e = tensor.empty() : tensor<2x2x8xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x2x8xf32>) -> tensor<2x2x8xf32>
  %m = linalg.generic {indexing_maps = [#lhs3, #rhs3, #out3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x2x16xf32>, tensor<16x8xf32>) outs(%f : tensor<2x2x8xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x2x8xf32>
  %bc = tensor.collapse_shape %b [[0, 1]] : tensor<1x8xf32> into tensor<8xf32>
  %y = linalg.generic {indexing_maps = [#id3, #bias3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%m, %bc : tensor<2x2x8xf32>, tensor<8xf32>) outs(%e : tensor<2x2x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  } -> tensor<2x2x8xf32>
  return %y : tensor<2x2x8xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
#tr = affine_map<(i, j) -> (j, i)>

// Left alone: the result read twice, an accumulator that is not zero, a
// consumer that computes with the sum before adding, a transposed read, f16.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-5: linalg.fill
// CHECK-NOT: outs(%arg
func.func @kept(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>,
                %xt: tensor<8x16xf32>, %wt: tensor<16x8xf32>,
                %xh: tensor<4x16xf16>, %wh: tensor<16x8xf16>, %bh: tensor<8xf16>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>, tensor<4x8xf16>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %f1 = linalg.fill ins(%one : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m1 = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%f1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y1 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m1, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m2 = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%f2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y2 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m2, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %t = math.tanh %v : f32
    %s = arith.addf %t, %bv : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %et = tensor.empty() : tensor<8x8xf32>
  %f3 = linalg.fill ins(%z : f32) outs(%et : tensor<8x8xf32>) -> tensor<8x8xf32>
  %m3 = linalg.matmul ins(%xt, %wt : tensor<8x16xf32>, tensor<16x8xf32>) outs(%f3 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %y3 = linalg.generic {indexing_maps = [#tr, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m3, %b : tensor<8x8xf32>, tensor<8xf32>) outs(%et : tensor<8x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  %eh = tensor.empty() : tensor<4x8xf16>
  %zh = arith.constant 0.0 : f16
  %f4 = linalg.fill ins(%zh : f16) outs(%eh : tensor<4x8xf16>) -> tensor<4x8xf16>
  %m4 = linalg.matmul ins(%xh, %wh : tensor<4x16xf16>, tensor<16x8xf16>) outs(%f4 : tensor<4x8xf16>) -> tensor<4x8xf16>
  %y4 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m4, %bh : tensor<4x8xf16>, tensor<8xf16>) outs(%eh : tensor<4x8xf16>) {
  ^bb0(%v: f16, %bv: f16, %o: f16):
    %s = arith.addf %v, %bv : f16
    linalg.yield %s : f16
  } -> tensor<4x8xf16>
  return %y, %m, %y1, %y2, %y3, %y4 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>, tensor<4x8xf16>
}

// -----

// A partial sum whose all-reduce gets the addends: the first member of the
// group starts from them, the others from zero, and the all-reduce adds them
// once. The addends must be the same on every member: replicated arguments,
// values computed from them, all-reduced values, through calls.

tp.mesh @world ["tp" = 4]
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>

// CHECK-LABEL: func.func @partial
// CHECK-SAME: %[[B:[^:]*]]: tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{}]>}, %[[R:[^:]*]]: tensor<4x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}
// CHECK-NOT: linalg.fill
// CHECK: %[[I:.*]] = tp.axis_index @world ["tp"] : index
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[I]], %{{.*}} : index
// CHECK: %[[INIT:.*]] = scf.if %[[FIRST]] -> (tensor<4x8xf32>) {
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[B]], %[[R]] : tensor<8xf32>, tensor<4x8xf32>) outs(%[[E:.*]] : tensor<4x8xf32>)
// CHECK: scf.yield %[[S]]
// CHECK: } else {
// CHECK: %[[Z2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<4x8xf32>)
// CHECK: scf.yield %[[Z2]]
// CHECK: %[[M:.*]] = linalg.matmul {{.*}} outs(%[[INIT]] : tensor<4x8xf32>)
// CHECK-NEXT: %[[A:.*]] = tp.all_reduce sum %[[M]] over @world ["tp"]
// CHECK-NEXT: return %[[A]]
func.func @partial(%x: tensor<4x4xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                   %w: tensor<4x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
                   %b: tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{}]>},
                   %r: tensor<4x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>})
    -> (tensor<4x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) attributes {tp.spmd = @world} {
  %e = tensor.empty() : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = tp.all_reduce sum %m over @world ["tp"] : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b, %r : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %rv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    %t = arith.addf %rv, %s : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// Not the same on every member of the group: an argument split over the
// reduced axis, a block each member keeps (tp.all_slice). Both stay adds after
// the all-reduce; the replicated bias before them still moves.
// CHECK-LABEL: func.func @partial_varying
// CHECK-SAME: %[[B:[^:]*]]: tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{}]>}, %[[R:[^:]*]]: tensor<4x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}
// CHECK: %[[S:.*]] = tp.all_slice
// CHECK: scf.if
// CHECK: linalg.generic {{.*}} ins(%[[B]] : tensor<8xf32>)
// CHECK: %[[A:.*]] = tp.all_reduce sum
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[R]], %[[S]] : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: arith.addf
// CHECK: arith.addf
func.func @partial_varying(%x: tensor<4x4xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                           %w: tensor<4x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
                           %b: tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{}]>},
                           %r: tensor<4x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
                           %g: tensor<16x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>})
    -> (tensor<4x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) attributes {tp.spmd = @world} {
  %s = tp.all_slice %g over @world ["tp"] dim 0 : tensor<16x8xf32> -> tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = tp.all_reduce sum %m over @world ["tp"] : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b, %r, %s : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %rv: f32, %sv: f32, %o: f32):
    %0 = arith.addf %v, %bv : f32
    %1 = arith.addf %0, %sv : f32
    %2 = arith.addf %1, %rv : f32
    linalg.yield %2 : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// Through calls: a private layer's residual argument is the entry's
// replicated input, then the previous layer's all-reduced result.
// CHECK-LABEL: func.func private @layer
// CHECK: scf.if
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<4x8xf32>)
// CHECK: linalg.matmul
// CHECK-NEXT: tp.all_reduce
// CHECK-NEXT: return
func.func @layers(%x: tensor<4x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>},
                  %w: tensor<8x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
                  %xs: tensor<4x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>})
    -> (tensor<4x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) attributes {tp.spmd = @world} {
  %0 = call @layer(%x, %xs, %w) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = call @layer(%0, %xs, %w) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
func.func private @layer(%x: tensor<4x8xf32>, %xs: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> attributes {tp.spmd = @world} {
  %e = tensor.empty() : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%xs, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = tp.all_reduce sum %m over @world ["tp"] : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %rv: f32, %o: f32):
    %t = arith.addf %rv, %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// A layer called once with the replicated input and once with what another
// function returns split over "tp": its residual argument differs between the
// members of a "tp" group, and stays after the all-reduce.
// CHECK-LABEL: func.func @layers_varying
// CHECK-LABEL: func.func private @vary
// CHECK-LABEL: func.func private @layer_kept
// CHECK-NOT: scf.if
// CHECK: linalg.matmul
// CHECK-NEXT: tp.all_reduce
// CHECK-NEXT: linalg.generic
func.func @layers_varying(%x: tensor<4x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>},
                          %w: tensor<8x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
                          %xs: tensor<4x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>})
    -> (tensor<4x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) attributes {tp.spmd = @world} {
  %0 = call @layer_kept(%x, %xs, %w) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %v = call @vary(%0, %xs) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = call @layer_kept(%v, %xs, %w) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
func.func private @vary(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {tp.spmd = @world} {
  %s = arith.addf %a, %b : tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}
func.func private @layer_kept(%x: tensor<4x8xf32>, %xs: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> attributes {tp.spmd = @world} {
  %e = tensor.empty() : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%xs, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = tp.all_reduce sum %m over @world ["tp"] : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %rv: f32, %o: f32):
    %t = arith.addf %rv, %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// On a 2-D mesh, an addend split over "dp" only is the same on every member
// of a group over "tp"; one that was all-reduced over "tp" too.
tp.mesh @grid ["dp" = 2, "tp" = 4]
#id = affine_map<(i, j) -> (i, j)>

// CHECK-LABEL: func.func @other_axis
// CHECK: tp.axis_index @grid ["tp"]
// CHECK: scf.if
// CHECK: linalg.generic {{.*}} ins(%arg2, %[[R:.*]] : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: linalg.matmul
// CHECK-NEXT: tp.all_reduce sum %{{.*}} over @grid ["tp"]
// CHECK-NEXT: return
func.func @other_axis(%x: tensor<4x4xf32> {tp.sharding = #tp.sharding<@grid, [{"dp"}, {"tp"}]>},
                      %w: tensor<4x8xf32> {tp.sharding = #tp.sharding<@grid, [{"tp"}, {}]>},
                      %r: tensor<4x8xf32> {tp.sharding = #tp.sharding<@grid, [{"dp"}, {}]>},
                      %p: tensor<4x8xf32> {tp.sharding = #tp.sharding<@grid, [{}, {}], partial = ["tp"]>})
    -> (tensor<4x8xf32> {tp.sharding = #tp.sharding<@grid, [{"dp"}, {}]>}) attributes {tp.spmd = @grid} {
  %e = tensor.empty() : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %q = tp.all_reduce sum %p over @grid ["tp"] : tensor<4x8xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = tp.all_reduce sum %m over @grid ["tp"] : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %r, %q : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %rv: f32, %qv: f32, %o: f32):
    %0 = arith.addf %v, %rv : f32
    %1 = arith.addf %0, %qv : f32
    linalg.yield %1 : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// An addend equal on every member but defined after the all-reduce stays
// after it: the init would come before its definition.
// CHECK-LABEL: func.func @defined_after_reduce
// CHECK-NOT: scf.if
// CHECK: linalg.generic
// CHECK: arith.addf
tp.mesh @world ["tp" = 4]
#id = affine_map<(i, j) -> (i, j)>
func.func @defined_after_reduce(%x: tensor<4x4xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
             %w: tensor<4x8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
             %g: tensor<4x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}], partial = ["tp"]>})
    -> (tensor<4x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) attributes {tp.spmd = @world} {
  %e = tensor.empty() : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = tp.all_reduce sum %m over @world ["tp"] : tensor<4x8xf32>
  %q = tp.all_reduce sum %g over @world ["tp"] : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %q : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %qv: f32, %o: f32):
    %t = arith.addf %v, %qv : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>

// A bf16 GEMM's bias and residual: kept apart by default (the CPU's
// libraries would widen a nonzero C), folded with narrow (cuBLAS reads C in
// its own type).
// CHECK-LABEL: func.func @bf16
// CHECK: linalg.fill
// CHECK: linalg.matmul
// CHECK: linalg.generic
// CHECK: arith.addf
// NARROW-LABEL: func.func @bf16
// NARROW-NOT: linalg.fill
// NARROW: %[[INIT:.*]] = linalg.generic
// NARROW-SAME: ins(%arg2, %arg3 : tensor<8xbf16>, tensor<4x8xbf16>)
// NARROW: %[[M:.*]] = linalg.matmul ins(%arg0, %arg1 : tensor<4x16xbf16>, tensor<16x8xbf16>) outs(%[[INIT]] : tensor<4x8xbf16>)
// NARROW-NEXT: return %[[M]]
func.func @bf16(%x: tensor<4x16xbf16>, %w: tensor<16x8xbf16>, %b: tensor<8xbf16>,
                %r: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %e = tensor.empty() : tensor<4x8xbf16>
  %z = arith.constant 0.0 : bf16
  %f = linalg.fill ins(%z : bf16) outs(%e : tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %m = linalg.matmul ins(%x, %w : tensor<4x16xbf16>, tensor<16x8xbf16>) outs(%f : tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %y = linalg.generic {indexing_maps = [#id, #row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b, %r : tensor<4x8xbf16>, tensor<8xbf16>, tensor<4x8xbf16>) outs(%e : tensor<4x8xbf16>) {
  ^bb0(%v: bf16, %bv: bf16, %rv: bf16, %o: bf16):
    %s = arith.addf %v, %bv : bf16
    %t = arith.addf %rv, %s : bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}
