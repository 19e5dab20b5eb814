// RUN: tp-opt %s --tp-widen-reductions | FileCheck %s
// RUN: tp-opt %s --tp-widen-reductions=extrema | FileCheck %s --check-prefix=EXTREMA

// Tests that a bf16 sum of squares accumulates in f32 from a widened fill,
// and that the normalization reading it reads the f32 sum and rounds it in
// its body; that a sum returned as it is gets a rounded copy; and that max
// reductions, contractions and f32 sums are left as they are.

#se = affine_map<(s, e) -> (s, e)>
#s = affine_map<(s, e) -> (s)>

// CHECK-LABEL: func.func @rms
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8xf32>) -> tensor<8xf32>
// CHECK: %[[SS:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8x4096xbf16>) outs(%[[Z]] : tensor<8xf32>)
// CHECK: ^bb0(%[[V:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK:   %[[SQ:.*]] = arith.mulf %[[V]], %[[V]] : bf16
// CHECK:   %[[W:.*]] = arith.extf %[[SQ]] : bf16 to f32
// CHECK:   %[[R:.*]] = arith.addf %[[W]], %[[ACC]] : f32
// CHECK:   linalg.yield %[[R]] : f32
// CHECK: } -> tensor<8xf32>
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[SS]] : tensor<8x4096xbf16>, tensor<8xf32>) outs(%{{.*}} : tensor<8x4096xbf16>)
// CHECK: ^bb0(%{{.*}}: bf16, %[[Q:.*]]: f32, %{{.*}}: bf16):
// CHECK:   %[[QN:.*]] = arith.truncf %[[Q]] : f32 to bf16
// CHECK:   arith.mulf %[[QN]], %{{.*}} : bf16
func.func @rms(%x: tensor<8x4096xbf16>) -> tensor<8x4096xbf16> {
  %zero = arith.constant 0.0 : bf16
  %inv = arith.constant 2.4414063e-04 : bf16
  %es = tensor.empty() : tensor<8xbf16>
  %zs = linalg.fill ins(%zero : bf16) outs(%es : tensor<8xbf16>) -> tensor<8xbf16>
  %ss = linalg.generic {indexing_maps = [#se, #s], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x4096xbf16>) outs(%zs : tensor<8xbf16>) {
  ^bb0(%v: bf16, %acc: bf16):
    %v2 = arith.mulf %v, %v : bf16
    %r = arith.addf %v2, %acc : bf16
    linalg.yield %r : bf16
  } -> tensor<8xbf16>
  %e = tensor.empty() : tensor<8x4096xbf16>
  %n = linalg.generic {indexing_maps = [#se, #s, #se], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ss : tensor<8x4096xbf16>, tensor<8xbf16>) outs(%e : tensor<8x4096xbf16>) {
  ^bb0(%v: bf16, %q: bf16, %o: bf16):
    %m = arith.mulf %q, %inv : bf16
    %rs = math.rsqrt %m : bf16
    %y = arith.mulf %v, %rs : bf16
    linalg.yield %y : bf16
  } -> tensor<8x4096xbf16>
  return %n : tensor<8x4096xbf16>
}

// A sum returned (a use that is no generic's input) is read through a rounded
// copy; its f16 accumulator starts from the caller's values, widened.
// CHECK-LABEL: func.func @returned
// CHECK: %[[INIT:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<8xf16>) outs(%{{.*}} : tensor<8xf32>)
// CHECK:   arith.extf %{{.*}} : f16 to f32
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8x64xf16>) outs(%[[INIT]] : tensor<8xf32>)
// CHECK: %[[ROUNDED:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<8xf32>) outs(%{{.*}} : tensor<8xf16>)
// CHECK:   arith.truncf %{{.*}} : f32 to f16
// CHECK: return %[[ROUNDED]] : tensor<8xf16>
func.func @returned(%x: tensor<8x64xf16>, %init: tensor<8xf16>) -> tensor<8xf16> {
  %s = linalg.generic {indexing_maps = [#se, #s], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xf16>) outs(%init : tensor<8xf16>) {
  ^bb0(%v: f16, %acc: f16):
    %r = arith.addf %acc, %v : f16
    linalg.yield %r : f16
  } -> tensor<8xf16>
  return %s : tensor<8xf16>
}

// CHECK-LABEL: func.func @kept
// CHECK-NOT: arith.extf
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @kept(%x: tensor<8x64xbf16>, %y: tensor<64x8xbf16>, %m: tensor<8xbf16>, %f: tensor<8x64xf32>, %fs: tensor<8xf32>, %c: tensor<8x8xbf16>) -> (tensor<8xbf16>, tensor<8x8xbf16>, tensor<8xf32>) {
  %max = linalg.generic {indexing_maps = [#se, #s], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xbf16>) outs(%m : tensor<8xbf16>) {
  ^bb0(%v: bf16, %acc: bf16):
    %r = arith.maxnumf %v, %acc : bf16
    linalg.yield %r : bf16
  } -> tensor<8xbf16>
  %mm = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : tensor<8x64xbf16>, tensor<64x8xbf16>) outs(%c : tensor<8x8xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %acc: bf16):
    %p = arith.mulf %a, %b : bf16
    %r = arith.addf %acc, %p : bf16
    linalg.yield %r : bf16
  } -> tensor<8x8xbf16>
  %sum = linalg.generic {indexing_maps = [#se, #s], iterator_types = ["parallel", "reduction"]}
      ins(%f : tensor<8x64xf32>) outs(%fs : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %max, %mm, %sum : tensor<8xbf16>, tensor<8x8xbf16>, tensor<8xf32>
}

// A sum of dynamically many rows (a decode step's tokens so far) stays as it
// is: its widened tensors would need their sizes.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: arith.extf
// CHECK: return
func.func @dynamic(%x: tensor<?x64xbf16>, %init: tensor<?xbf16>) -> tensor<?xbf16> {
  %s = linalg.generic {indexing_maps = [#se, #s], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x64xbf16>) outs(%init : tensor<?xbf16>) {
  ^bb0(%v: bf16, %acc: bf16):
    %r = arith.addf %v, %acc : bf16
    linalg.yield %r : bf16
  } -> tensor<?xbf16>
  return %s : tensor<?xbf16>
}

// A layernorm's variance, a sum of terms made from two inputs (the
// activations and their row mean): it accumulates in f32 too, each input
// read as before, the term widened.
// CHECK-LABEL: func.func @variance
// CHECK-SAME: (%[[X:.*]]: tensor<8x64xbf16>, %[[M:.*]]: tensor<8xbf16>)
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8xf32>)
// CHECK: %[[VAR:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[M]] : tensor<8x64xbf16>, tensor<8xbf16>) outs(%[[ZERO]] : tensor<8xf32>)
// CHECK: ^bb0(%[[V:.*]]: bf16, %[[MEAN:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK:   %[[D:.*]] = arith.subf %[[V]], %[[MEAN]] : bf16
// CHECK:   %[[SQ:.*]] = arith.mulf %[[D]], %[[D]] : bf16
// CHECK:   %[[W:.*]] = arith.extf %[[SQ]] : bf16 to f32
// CHECK:   %[[R:.*]] = arith.addf %[[W]], %[[ACC]] : f32
// CHECK:   linalg.yield %[[R]] : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @variance(%x: tensor<8x64xbf16>, %m: tensor<8xbf16>) -> tensor<8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<8xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<8xbf16>) -> tensor<8xbf16>
  %var = linalg.generic {indexing_maps = [#se, #s, #s], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<8x64xbf16>, tensor<8xbf16>) outs(%z : tensor<8xbf16>) {
  ^bb0(%v: bf16, %mean: bf16, %acc: bf16):
    %d = arith.subf %v, %mean : bf16
    %sq = arith.mulf %d, %d : bf16
    %r = arith.addf %sq, %acc : bf16
    linalg.yield %r : bf16
  } -> tensor<8xbf16>
  return %var : tensor<8xbf16>
}

// With `extrema` (the CPU lowering's), a bf16 row maximum accumulates in f32
// from a widened -inf, and the subtraction reading it rounds it back, which
// is exact: the maximum of widened values is one of them. Without, it stays.

// CHECK-LABEL: func.func @softmax_max
// CHECK-NOT:     arith.extf
// CHECK:         arith.maxnumf %{{.*}}, %{{.*}} : bf16
// CHECK-NOT:     arith.extf
// CHECK:         return

// EXTREMA-LABEL: func.func @softmax_max
// EXTREMA:         %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// EXTREMA:         %[[INIT:.*]] = linalg.fill ins(%[[NEG]] : f32) outs(%{{.*}} : tensor<8xf32>)
// EXTREMA:         %[[MAX:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8x64xbf16>) outs(%[[INIT]] : tensor<8xf32>)
// EXTREMA:         ^bb0(%[[V:.*]]: bf16, %[[ACC:.*]]: f32):
// EXTREMA:           %[[W:.*]] = arith.extf %[[V]] : bf16 to f32
// EXTREMA:           arith.maxnumf %[[W]], %[[ACC]] : f32
// EXTREMA:         linalg.generic {{.*}} ins(%{{.*}}, %[[MAX]] : tensor<8x64xbf16>, tensor<8xf32>)
// EXTREMA:         ^bb0(%{{.*}}: bf16, %[[M:.*]]: f32, %{{.*}}: bf16):
// EXTREMA:           arith.truncf %[[M]] : f32 to bf16
func.func @softmax_max(%x: tensor<8x64xbf16>) -> tensor<8x64xbf16> {
  %ninf = arith.constant 0xFF80 : bf16
  %e = tensor.empty() : tensor<8xbf16>
  %init = linalg.fill ins(%ninf : bf16) outs(%e : tensor<8xbf16>) -> tensor<8xbf16>
  %max = linalg.generic {indexing_maps = [#se, #s], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xbf16>) outs(%init : tensor<8xbf16>) {
  ^bb0(%v: bf16, %acc: bf16):
    %r = arith.maxnumf %v, %acc : bf16
    linalg.yield %r : bf16
  } -> tensor<8xbf16>
  %e2 = tensor.empty() : tensor<8x64xbf16>
  %d = linalg.generic {indexing_maps = [#se, #s, #se], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<8x64xbf16>, tensor<8xbf16>) outs(%e2 : tensor<8x64xbf16>) {
  ^bb0(%v: bf16, %m: bf16, %o: bf16):
    %r = arith.subf %v, %m : bf16
    linalg.yield %r : bf16
  } -> tensor<8x64xbf16>
  return %d : tensor<8x64xbf16>
}
