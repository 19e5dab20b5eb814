// RUN: tp-opt %s --tp-print-sharding-rules --split-input-file --verify-diagnostics -o /dev/null

// Tests that linalg contractions get their rules from their indexing maps:
// batch and free dimensions parallel, the contracted one a reduction, and a
// transposed operand through `indexing_maps`.

func.func @contractions(%a: tensor<4x16x32xf32>, %b: tensor<4x32x8xf32>, %c: tensor<4x16x8xf32>,
                        %m: tensor<16x32xf32>, %n: tensor<8x32xf32>, %o: tensor<16x8xf32>) {
  // expected-remark @+1 {{sharding rule: ([i, j, l], [i, l, k], [i, j, k]) -> ([i, j, k]) {i=4, j=16, k=8, l=32 reduction}}}
  %0 = linalg.batch_matmul ins(%a, %b : tensor<4x16x32xf32>, tensor<4x32x8xf32>) outs(%c : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  // expected-remark @+1 {{sharding rule: ([i, k], [j, k], [i, j]) -> ([i, j]) {i=16, j=8, k=32 reduction}}}
  %1 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
         ins(%m, %n : tensor<16x32xf32>, tensor<8x32xf32>) outs(%o : tensor<16x8xf32>) -> tensor<16x8xf32>
  return
}

// -----

// Tests the rules of linalg's structural ops: transpose permutes factors,
// broadcast and reduce add or contract one, fill has a scalar operand.

func.func @structural(%m: tensor<16x32xf32>, %v: tensor<16xf32>, %s: f32) {
  // expected-remark @+1 {{sharding rule: () -> ([i, j]) {i=32, j=16}}}
  %e = tensor.empty() : tensor<32x16xf32>
  // expected-remark @+1 {{sharding rule: ([j, i], [i, j]) -> ([i, j]) {i=32, j=16}}}
  %0 = linalg.transpose ins(%m : tensor<16x32xf32>) outs(%e : tensor<32x16xf32>) permutation = [1, 0]
  // expected-remark @+1 {{sharding rule: ([i], [i, j]) -> ([i, j]) {i=16, j=32}}}
  %1 = linalg.broadcast ins(%v : tensor<16xf32>) outs(%m : tensor<16x32xf32>) dimensions = [1]
  // expected-remark @+1 {{sharding rule: ([i, j], [i]) -> ([i]) {i=16, j=32 reduction}}}
  %2 = linalg.reduce ins(%m : tensor<16x32xf32>) outs(%v : tensor<16xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %sum = arith.addf %in, %init : f32
      linalg.yield %sum : f32
    }
  // expected-remark @+1 {{sharding rule: ([], [i, j]) -> ([i, j]) {i=16, j=32}}}
  %3 = linalg.fill ins(%s : f32) outs(%m : tensor<16x32xf32>) -> tensor<16x32xf32>
  return
}

// -----

// Tests that elementwise ops (linalg named, linalg.map, arith, math) share one
// parallel factor per dimension, and that constants get one per dimension.

func.func @elementwise(%m: tensor<16x32xf32>) {
  // expected-remark @+1 {{sharding rule: ([i, j], [i, j], [i, j]) -> ([i, j]) {i=16, j=32}}}
  %0 = linalg.add ins(%m, %m : tensor<16x32xf32>, tensor<16x32xf32>) outs(%m : tensor<16x32xf32>) -> tensor<16x32xf32>
  // expected-remark @+1 {{sharding rule: ([i, j], [i, j]) -> ([i, j]) {i=16, j=32}}}
  %1 = linalg.map { math.tanh } ins(%m : tensor<16x32xf32>) outs(%m : tensor<16x32xf32>)
  // expected-remark @+1 {{sharding rule: ([i, j], [i, j]) -> ([i, j]) {i=16, j=32}}}
  %2 = arith.addf %m, %m : tensor<16x32xf32>
  // expected-remark @+1 {{sharding rule: ([i, j]) -> ([i, j]) {i=16, j=32}}}
  %3 = math.exp %m : tensor<16x32xf32>
  // expected-remark @+1 {{sharding rule: () -> ([i, j]) {i=16, j=32}}}
  %4 = arith.constant dense<1.0> : tensor<16x32xf32>
  // expected-remark @+1 {{sharding rule: () -> ([i, j]) {i=2, j=2}}}
  %5 = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  // expected-remark @+1 {{sharding rule: ([i, j], [i, j]) -> ([i, j]) {i=16, j=32}}}
  %6 = arith.cmpf olt, %m, %m : tensor<16x32xf32>
  return
}

// -----

// Tests that softmax's normalized dimension must stay whole.

func.func @softmax(%m: tensor<16x32xf32>) {
  // expected-remark @+1 {{sharding rule: ([i, j], [i, j]) -> ([i, j]) {i=16, j=32 need-replication}}}
  %0 = linalg.softmax dimension(1) ins(%m : tensor<16x32xf32>) outs(%m : tensor<16x32xf32>) -> tensor<16x32xf32>
  return
}

// -----

// Tests that reshapes keep one factor per expanded dimension: a collapsed
// dimension is the product of its group's factors (the head split).

func.func @reshapes(%q: tensor<16x2048xf32>, %a: tensor<4x16x32xf32>) {
  // expected-remark @+1 {{sharding rule: ([i, j*k]) -> ([i, j, k]) {i=16, j=16, k=128}}}
  %0 = tensor.expand_shape %q [[0], [1, 2]] output_shape [16, 16, 128] : tensor<16x2048xf32> into tensor<16x16x128xf32>
  // expected-remark @+1 {{sharding rule: ([i, j, k]) -> ([i*j, k]) {i=4, j=16, k=32}}}
  %1 = tensor.collapse_shape %a [[0, 1], [2]] : tensor<4x16x32xf32> into tensor<64x32xf32>
  return
}

// -----

// Tests that a dynamic size becomes a dynamic factor, and that a dynamic
// expand_shape's size operands take no factors.

func.func @dynamic(%q: tensor<?x?xf32>, %n: index, %m: index) {
  // expected-remark @+1 {{sharding rule: ([i, j*k], [], []) -> ([i, j, k]) {i=?, j=?, k=8}}}
  %0 = tensor.expand_shape %q [[0], [1, 2]] output_shape [%n, %m, 8] : tensor<?x?xf32> into tensor<?x?x8xf32>
  return
}

// -----

// Tests that a convolution's windowed dimensions (indexed by d0 + d1) leave
// their loops unsplittable.

func.func @conv(%in: tensor<1x18x4xf32>, %f: tensor<3x4x8xf32>, %out: tensor<1x16x8xf32>) {
  // expected-remark @+1 {{sharding rule: ([i, 1, m], [l, m, k], [i, j, k]) -> ([i, j, k]) {i=1, j=16 need-replication, k=8, l=3 need-replication, m=4 reduction}}}
  %0 = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>}
         ins(%in, %f : tensor<1x18x4xf32>, tensor<3x4x8xf32>) outs(%out : tensor<1x16x8xf32>) -> tensor<1x16x8xf32>
  return
}

// -----

// Tests that slices, concats and pads share the dimensions they take whole
// and leave the others unsplittable; a rank-reducing slice drops its unit
// dimension.

func.func @slices(%t: tensor<16x4x48xf32>, %d: tensor<16x4x16xf32>, %u: tensor<16x1x16xf32>, %pv: f32) {
  // expected-remark @+1 {{sharding rule: ([i, j, k]) -> ([i, j, l]) {i=16, j=4, k=48 need-replication, l=16 need-replication}}}
  %0 = tensor.extract_slice %t[0, 0, 16] [16, 4, 16] [1, 1, 1] : tensor<16x4x48xf32> to tensor<16x4x16xf32>
  // expected-remark @+1 {{sharding rule: ([i, j, k]) -> ([i, k]) {i=16, j=4 need-replication, k=16}}}
  %1 = tensor.extract_slice %d[0, 2, 0] [16, 1, 16] [1, 1, 1] : tensor<16x4x16xf32> to tensor<16x16xf32>
  // expected-remark @+1 {{sharding rule: ([i, k, l], [i, j, l]) -> ([i, j, l]) {i=16, j=4 need-replication, k=1 need-replication, l=16}}}
  %2 = tensor.insert_slice %u into %d[0, 1, 0] [16, 1, 16] [1, 1, 1] : tensor<16x1x16xf32> into tensor<16x4x16xf32>
  // expected-remark @+1 {{sharding rule: ([i, j, k], [i, j, l]) -> ([i, j, m]) {i=16, j=4, k=16 need-replication, l=16 need-replication, m=32 need-replication}}}
  %3 = tensor.concat dim(2) %d, %d : (tensor<16x4x16xf32>, tensor<16x4x16xf32>) -> tensor<16x4x32xf32>
  // expected-remark @+1 {{sharding rule: ([i, j, k]) -> ([i, j, l]) {i=16, j=4, k=16 need-replication, l=18 need-replication}}}
  %4 = tensor.pad %d low[0, 0, 1] high[0, 0, 1] {
    ^bb0(%a: index, %b: index, %c: index):
      tensor.yield %pv : f32
  } : tensor<16x4x16xf32> to tensor<16x4x18xf32>
  return
}

// -----

// Tests that ops without a rule are reported.

func.func @norule(%t: tensor<16xf32>, %shape: tensor<2xi64>) {
  // expected-remark @+1 {{no sharding rule}}
  %0 = tensor.reshape %t(%shape) : (tensor<16xf32>, tensor<2xi64>) -> tensor<4x4xf32>
  return
}

// -----

// A contraction over complex numbers keeps its contracted factor whole:
// splitting it would leave a pending sum the collectives cannot reduce.

func.func @complex_contraction(%a: tensor<16x32xcomplex<f32>>, %b: tensor<32x8xcomplex<f32>>, %c: tensor<16x8xcomplex<f32>>) {
  // expected-remark @+1 {{sharding rule: ([i, k], [k, j], [i, j]) -> ([i, j]) {i=16, j=8, k=32 need-replication}}}
  %0 = linalg.matmul ins(%a, %b : tensor<16x32xcomplex<f32>>, tensor<32x8xcomplex<f32>>) outs(%c : tensor<16x8xcomplex<f32>>) -> tensor<16x8xcomplex<f32>>
  return
}

// -----

// A reshape whose reassociation wraps past 32 bits (accepted by MLIR 22's
// verifier) gets no rule: propagation replicates it instead of reading past
// its dimensions.

func.func @wrapping_reassociation(%x: tensor<8x4xf32>) {
  // expected-remark @+1 {{no sharding rule}}
  %c = tensor.collapse_shape %x [[0, 4294967297]] : tensor<8x4xf32> into tensor<32xf32>
  return
}
