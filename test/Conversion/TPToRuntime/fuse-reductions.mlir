// RUN: tp-opt %s --split-input-file --tp-decompose-aggregates --tp-fuse-elementwise --tp-fuse-reductions --tp-unshare-fills | FileCheck %s

// A softmax over the last dimension with its scale and mask: the scores are
// read once, one tile of 16 rows (16 x 128 floats) at a time; every op of
// the chain is in the tile, computed once, on tile-sized tensors whose unit
// dimensions are dropped (16 x 128: two loops each, not four).

// CHECK-LABEL: func.func @softmax
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[B:.*]] = %c0 to %c2 step %c1 iter_args
// CHECK: scf.for %[[H:.*]] = %c0 to %c3 step %c1 iter_args
// CHECK: scf.for %[[I:.*]] = %c0 to %c128 step %c16 iter_args(%[[OUT:.*]] = %{{.*}})
// CHECK-DAG: %[[M:.*]] = tensor.extract_slice %arg1[%[[I]], 0] [16, 128]
// CHECK-DAG: %[[S:.*]] = tensor.extract_slice %arg0[%[[B]], %[[H]], %[[I]], 0] [1, 1, 16, 128] [1, 1, 1, 1] : tensor<2x3x128x128xf32> to tensor<16x128xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<16x128xf32>
// CHECK: linalg.generic {{.*}} ins(%[[S]], %[[M]] : tensor<16x128xf32>, tensor<16x128xf32>) outs(%[[E]] : tensor<16x128xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: %[[P:.*]] = linalg.generic
// CHECK: tensor.insert_slice %[[P]] into %[[OUT]][%[[B]], %[[H]], %[[I]], 0] [1, 1, 16, 128] [1, 1, 1, 1] : tensor<16x128xf32> into tensor<2x3x128x128xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @softmax(%s: tensor<2x3x128x128xf32>, %mask: tensor<128x128xf32>) -> tensor<2x3x128x128xf32> {
  %scale = arith.constant 0.125 : f32
  %e = tensor.empty() : tensor<2x3x128x128xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (i, j)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : tensor<2x3x128x128xf32>, tensor<128x128xf32>) outs(%e : tensor<2x3x128x128xf32>) {
    ^bb0(%v: f32, %mv: f32, %o: f32):
      %sv = arith.mulf %v, %scale : f32
      %r = arith.addf %sv, %mv : f32
      linalg.yield %r : f32
  } -> tensor<2x3x128x128xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x3x128x128xf32>) outs(%e : tensor<2x3x128x128xf32>) -> tensor<2x3x128x128xf32>
  return %p : tensor<2x3x128x128xf32>
}

// -----

// A layernorm of 768-wide rows: two rows per tile; the sums and the
// normalization all in it.

#te = affine_map<(t, e) -> (t, e)>
#t = affine_map<(t, e) -> (t)>
#e = affine_map<(t, e) -> (e)>
// CHECK-LABEL: func.func @layernorm
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[T:.*]] = %c0 to %c64 step %c2 iter_args
// CHECK: tensor.extract_slice %arg0[%[[T]], 0] [2, 768]
// CHECK: linalg.fill {{.*}} -> tensor<2xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: tensor.insert_slice
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @layernorm(%x: tensor<64x768xf32>, %g: tensor<768xf32>) -> tensor<64x768xf32> {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 0.0013020833 : f32
  %e1 = tensor.empty() : tensor<64xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#te, #t], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x768xf32>) outs(%z1 : tensor<64xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
  } -> tensor<64xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %sq = linalg.generic {indexing_maps = [#te, #t, #t], iterator_types = ["parallel", "reduction"]} ins(%x, %sum : tensor<64x768xf32>, tensor<64xf32>) outs(%z2 : tensor<64xf32>) {
    ^bb0(%v: f32, %s: f32, %acc: f32):
      %mean = arith.mulf %s, %inv : f32
      %c = arith.subf %v, %mean : f32
      %c2 = arith.mulf %c, %c : f32
      %r = arith.addf %c2, %acc : f32
      linalg.yield %r : f32
  } -> tensor<64xf32>
  %e2 = tensor.empty() : tensor<64x768xf32>
  %n = linalg.generic {indexing_maps = [#te, #t, #t, #e, #te], iterator_types = ["parallel", "parallel"]} ins(%x, %sum, %sq, %g : tensor<64x768xf32>, tensor<64xf32>, tensor<64xf32>, tensor<768xf32>) outs(%e2 : tensor<64x768xf32>) {
    ^bb0(%v: f32, %s: f32, %q: f32, %gv: f32, %o: f32):
      %mean = arith.mulf %s, %inv : f32
      %var = arith.mulf %q, %inv : f32
      %rs = math.rsqrt %var : f32
      %c = arith.subf %v, %mean : f32
      %nv = arith.mulf %c, %rs : f32
      %r = arith.mulf %nv, %gv : f32
      linalg.yield %r : f32
  } -> tensor<64x768xf32>
  return %n : tensor<64x768xf32>
}

// -----

// Left whole: a sum whose result is also returned (a use outside the
// chain: fusing it would compute it twice), and a contraction (a GEMM for
// tp-convert-gemm-to-blas) feeding a row-wise scale and softmax.

#te2 = affine_map<(t, e) -> (t, e)>
#t2 = affine_map<(t, e) -> (t)>
// (The normalization alone is no chain: nothing is tiled.)
// CHECK-LABEL: func.func @shared_sum
// CHECK-NOT: scf.for
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: %[[N:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: return %[[N]], %[[SUM]]
func.func @shared_sum(%x: tensor<64x768xf32>) -> (tensor<64x768xf32>, tensor<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#te2, #t2], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x768xf32>) outs(%z1 : tensor<64xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
  } -> tensor<64xf32>
  %e2 = tensor.empty() : tensor<64x768xf32>
  %n = linalg.generic {indexing_maps = [#te2, #t2, #te2], iterator_types = ["parallel", "parallel"]} ins(%x, %sum : tensor<64x768xf32>, tensor<64xf32>) outs(%e2 : tensor<64x768xf32>) {
    ^bb0(%v: f32, %s: f32, %o: f32):
      %c = arith.subf %v, %s : f32
      linalg.yield %c : f32
  } -> tensor<64x768xf32>
  return %n, %sum : tensor<64x768xf32>, tensor<64xf32>
}

// -----

// CHECK-LABEL: func.func @scores
// CHECK: %[[QK:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%arg0, %arg1 : tensor<3x64x16xf32>, tensor<3x64x16xf32>)
// CHECK: scf.for
// CHECK: tensor.extract_slice %[[QK]]
func.func @scores(%q: tensor<3x64x16xf32>, %k: tensor<3x64x16xf32>) -> tensor<3x64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.25 : f32
  %e = tensor.empty() : tensor<3x64x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x64x64xf32>) -> tensor<3x64x64xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(h, i, j, d) -> (h, i, d)>, affine_map<(h, i, j, d) -> (h, j, d)>, affine_map<(h, i, j, d) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<3x64x16xf32>, tensor<3x64x16xf32>) outs(%z : tensor<3x64x64xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<3x64x64xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<3x64x64xf32>) outs(%e : tensor<3x64x64xf32>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.mulf %v, %scale : f32
      linalg.yield %r : f32
  } -> tensor<3x64x64xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<3x64x64xf32>) outs(%e : tensor<3x64x64xf32>) -> tensor<3x64x64xf32>
  return %p : tensor<3x64x64xf32>
}

// -----

// Dynamic shapes stay as they are.

// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: scf.for
func.func @dynamic(%s: tensor<?x128xf32>) -> tensor<?x128xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %s, %c0 : tensor<?x128xf32>
  %e = tensor.empty(%n) : tensor<?x128xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<?x128xf32>) outs(%e : tensor<?x128xf32>) -> tensor<?x128xf32>
  return %p : tensor<?x128xf32>
}

// -----

// The CSE after fusion merges equal empty tensors and equal zero fills: the
// two GEMMs' accumulators become one value, on the empty tensor the
// layernorm also writes. tp-unshare-fills, after it, gives each fill its own
// empty tensor again, and each GEMM its own fill (fresh buffers whose zeroing
// the GEMM lowering drops, instead of one buffer zeroed and copied).

#te3 = affine_map<(t, e) -> (t, e)>
#t3 = affine_map<(t, e) -> (t)>
// CHECK-LABEL: func.func @unshared_fills
// CHECK: %[[N:.*]] = scf.for
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<64x768xf32>
// CHECK: %[[Z1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<64x768xf32>)
// CHECK: %[[P:.*]] = linalg.matmul ins(%[[N]], %arg1 : {{.*}}) outs(%[[Z1]] : tensor<64x768xf32>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<64x768xf32>
// CHECK: %[[Z2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<64x768xf32>)
// CHECK: linalg.matmul ins(%[[P]], %arg2 : {{.*}}) outs(%[[Z2]] : tensor<64x768xf32>)
func.func @unshared_fills(%x: tensor<64x768xf32>, %w1: tensor<768x768xf32>, %w2: tensor<768x768xf32>) -> tensor<64x768xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#te3, #t3], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x768xf32>) outs(%z1 : tensor<64xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
  } -> tensor<64xf32>
  %e2 = tensor.empty() : tensor<64x768xf32>
  %n = linalg.generic {indexing_maps = [#te3, #t3, #te3], iterator_types = ["parallel", "parallel"]} ins(%x, %sum : tensor<64x768xf32>, tensor<64xf32>) outs(%e2 : tensor<64x768xf32>) {
    ^bb0(%v: f32, %s: f32, %o: f32):
      %c = arith.subf %v, %s : f32
      linalg.yield %c : f32
  } -> tensor<64x768xf32>
  %e3 = tensor.empty() : tensor<64x768xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<64x768xf32>) -> tensor<64x768xf32>
  %p = linalg.matmul ins(%n, %w1 : tensor<64x768xf32>, tensor<768x768xf32>) outs(%z3 : tensor<64x768xf32>) -> tensor<64x768xf32>
  %e4 = tensor.empty() : tensor<64x768xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<64x768xf32>) -> tensor<64x768xf32>
  %q = linalg.matmul ins(%p, %w2 : tensor<64x768xf32>, tensor<768x768xf32>) outs(%z4 : tensor<64x768xf32>) -> tensor<64x768xf32>
  return %q : tensor<64x768xf32>
}

// -----

// A row of no elements (fuzzed): nothing to compute, no tiles (upstream's
// tiling divides by a loop's extent); the chain stays as it is.
// CHECK-LABEL: func.func @empty_rows
// CHECK-NOT: scf.for
// CHECK: return
#te4 = affine_map<(t, e) -> (t, e)>
#t4 = affine_map<(t, e) -> (t)>
func.func @empty_rows(%x: tensor<8x0xf32>) -> tensor<8x0xf32> {
  %ninf = arith.constant -3.0e38 : f32
  %e = tensor.empty() : tensor<8xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#te4, #t4], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x0xf32>) outs(%m0 : tensor<8xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %r = arith.maximumf %v, %acc : f32
      linalg.yield %r : f32
  } -> tensor<8xf32>
  %eo = tensor.empty() : tensor<8x0xf32>
  %y = linalg.generic {indexing_maps = [#te4, #t4, #te4], iterator_types = ["parallel", "parallel"]} ins(%x, %m : tensor<8x0xf32>, tensor<8xf32>) outs(%eo : tensor<8x0xf32>) {
    ^bb0(%v: f32, %b: f32, %o: f32):
      %d = arith.subf %v, %b : f32
      %ex = math.exp %d : f32
      linalg.yield %ex : f32
  } -> tensor<8x0xf32>
  return %y : tensor<8x0xf32>
}
