// RUN: tp-opt %s --tp-propagate | FileCheck %s
// RUN: tp-opt %s --tp-propagate | grep -c tp.reshard | FileCheck %s --check-prefix=COUNT
// COUNT: {{^2$}}

// Tests a Llama block: RMSNorm, grouped-query attention (4 query heads over 2
// key/value heads) with rotary embeddings (rotate-half via slices and a
// concat on the head dimension), and a SwiGLU MLP. With the Q, K, V, gate and
// up weights split by columns, the key/value heads (and their query groups)
// stay split through rotary, scores, softmax and context, the output and
// down projections are split by rows, and the two partial sums are the only
// reshards.

tp.mesh @world ["tp" = 2]

#se = affine_map<(s, e) -> (s, e)>
#s = affine_map<(s, e) -> (s)>
#e = affine_map<(s, e) -> (e)>
#q4 = affine_map<(s, h, g, d) -> (s, h, g, d)>
#sd4 = affine_map<(s, h, g, d) -> (s, d)>
#k3 = affine_map<(s, h, d) -> (s, h, d)>
#sd3 = affine_map<(s, h, d) -> (s, d)>
#sq = affine_map<(h, g, i, j, d) -> (i, h, g, d)>
#sk = affine_map<(h, g, i, j, d) -> (j, h, d)>
#ss = affine_map<(h, g, i, j, d) -> (h, g, i, j)>
#mall = affine_map<(h, g, i, j) -> (h, g, i, j)>
#mij = affine_map<(h, g, i, j) -> (i, j)>
#cp = affine_map<(i, h, g, d, j) -> (h, g, i, j)>
#cv = affine_map<(i, h, g, d, j) -> (j, h, d)>
#cc = affine_map<(i, h, g, d, j) -> (i, h, g, d)>

// CHECK-LABEL: func.func @llama
// CHECK-SAME: %arg7: tensor<64x64xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}
// CHECK-SAME: %arg11: tensor<128x64xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}
func.func @llama(%x: tensor<8x64xf32>, %cos: tensor<8x16xf32>, %sin: tensor<8x16xf32>, %mask: tensor<8x8xf32>,
                 %wq: tensor<64x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                 %wk: tensor<64x32xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                 %wv: tensor<64x32xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                 %wo: tensor<64x64xf32>,
                 %wg: tensor<64x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                 %wu: tensor<64x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                 %g1: tensor<64xf32>,
                 %wd: tensor<128x64xf32>,
                 %g2: tensor<64xf32>)
    -> (tensor<8x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %inv = arith.constant 0.015625 : f32
  %eps = arith.constant 1.0e-06 : f32
  %scale = arith.constant 0.25 : f32
  // RMSNorm 1.
  %es = tensor.empty() : tensor<8xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<8xf32>) -> tensor<8xf32>
  %ss1 = linalg.generic {indexing_maps = [#se, #s], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%zs : tensor<8xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %v2 = arith.mulf %v, %v : f32
      %r = arith.addf %v2, %acc : f32
      linalg.yield %r : f32
  } -> tensor<8xf32>
  %ee = tensor.empty() : tensor<8x64xf32>
  %n1 = linalg.generic {indexing_maps = [#se, #s, #e, #se], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ss1, %g1 : tensor<8x64xf32>, tensor<8xf32>, tensor<64xf32>) outs(%ee : tensor<8x64xf32>) {
    ^bb0(%v: f32, %q: f32, %g: f32, %o: f32):
      %m = arith.mulf %q, %inv : f32
      %me = arith.addf %m, %eps : f32
      %rs = math.rsqrt %me : f32
      %n = arith.mulf %v, %rs : f32
      %r = arith.mulf %n, %g : f32
      linalg.yield %r : f32
  } -> tensor<8x64xf32>
  // Projections.
  %z64 = linalg.fill ins(%zero : f32) outs(%ee : tensor<8x64xf32>) -> tensor<8x64xf32>
  %q = linalg.matmul ins(%n1, %wq : tensor<8x64xf32>, tensor<64x64xf32>) outs(%z64 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %e32 = tensor.empty() : tensor<8x32xf32>
  %z32 = linalg.fill ins(%zero : f32) outs(%e32 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %k = linalg.matmul ins(%n1, %wk : tensor<8x64xf32>, tensor<64x32xf32>) outs(%z32 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %v = linalg.matmul ins(%n1, %wv : tensor<8x64xf32>, tensor<64x32xf32>) outs(%z32 : tensor<8x32xf32>) -> tensor<8x32xf32>
  // CHECK: tensor.expand_shape {{.*}} {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}, {}, {}]>]} : tensor<8x64xf32> into tensor<8x2x2x16xf32>
  %q4 = tensor.expand_shape %q [[0], [1, 2, 3]] output_shape [8, 2, 2, 16] : tensor<8x64xf32> into tensor<8x2x2x16xf32>
  %k3 = tensor.expand_shape %k [[0], [1, 2]] output_shape [8, 2, 16] : tensor<8x32xf32> into tensor<8x2x16xf32>
  %v3 = tensor.expand_shape %v [[0], [1, 2]] output_shape [8, 2, 16] : tensor<8x32xf32> into tensor<8x2x16xf32>
  // Rotary on q: q * cos + rotate_half(q) * sin, rotate_half = concat(-q[.., 8:], q[.., :8]).
  %qlo = tensor.extract_slice %q4[0, 0, 0, 0] [8, 2, 2, 8] [1, 1, 1, 1] : tensor<8x2x2x16xf32> to tensor<8x2x2x8xf32>
  %qhi = tensor.extract_slice %q4[0, 0, 0, 8] [8, 2, 2, 8] [1, 1, 1, 1] : tensor<8x2x2x16xf32> to tensor<8x2x2x8xf32>
  %qhn = arith.negf %qhi : tensor<8x2x2x8xf32>
  %qrh = tensor.concat dim(3) %qhn, %qlo : (tensor<8x2x2x8xf32>, tensor<8x2x2x8xf32>) -> tensor<8x2x2x16xf32>
  %eq4 = tensor.empty() : tensor<8x2x2x16xf32>
  // CHECK: %[[QR:.*]] = linalg.generic {{.*}} {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}, {}, {}]>]}
  %qr = linalg.generic {indexing_maps = [#q4, #q4, #sd4, #sd4, #q4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%q4, %qrh, %cos, %sin : tensor<8x2x2x16xf32>, tensor<8x2x2x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) outs(%eq4 : tensor<8x2x2x16xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32, %d: f32, %o: f32):
      %ac = arith.mulf %a, %c : f32
      %bd = arith.mulf %b, %d : f32
      %r = arith.addf %ac, %bd : f32
      linalg.yield %r : f32
  } -> tensor<8x2x2x16xf32>
  // Rotary on k.
  %klo = tensor.extract_slice %k3[0, 0, 0] [8, 2, 8] [1, 1, 1] : tensor<8x2x16xf32> to tensor<8x2x8xf32>
  %khi = tensor.extract_slice %k3[0, 0, 8] [8, 2, 8] [1, 1, 1] : tensor<8x2x16xf32> to tensor<8x2x8xf32>
  %khn = arith.negf %khi : tensor<8x2x8xf32>
  %krh = tensor.concat dim(2) %khn, %klo : (tensor<8x2x8xf32>, tensor<8x2x8xf32>) -> tensor<8x2x16xf32>
  %ek3 = tensor.empty() : tensor<8x2x16xf32>
  %kr = linalg.generic {indexing_maps = [#k3, #k3, #sd3, #sd3, #k3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k3, %krh, %cos, %sin : tensor<8x2x16xf32>, tensor<8x2x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) outs(%ek3 : tensor<8x2x16xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32, %d: f32, %o: f32):
      %ac = arith.mulf %a, %c : f32
      %bd = arith.mulf %b, %d : f32
      %r = arith.addf %ac, %bd : f32
      linalg.yield %r : f32
  } -> tensor<8x2x16xf32>
  // Scores per (kv head, group): q[i, h, g, d] * k[j, h, d].
  %esc = tensor.empty() : tensor<2x2x8x8xf32>
  %zsc = linalg.fill ins(%zero : f32) outs(%esc : tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %sc = linalg.generic {indexing_maps = [#sq, #sk, #ss], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%qr, %kr : tensor<8x2x2x16xf32>, tensor<8x2x16xf32>) outs(%zsc : tensor<2x2x8x8xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<2x2x8x8xf32>
  %scm = linalg.generic {indexing_maps = [#mall, #mij, #mall], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%sc, %mask : tensor<2x2x8x8xf32>, tensor<8x8xf32>) outs(%esc : tensor<2x2x8x8xf32>) {
    ^bb0(%a: f32, %m: f32, %o: f32):
      %as = arith.mulf %a, %scale : f32
      %r = arith.addf %as, %m : f32
      linalg.yield %r : f32
  } -> tensor<2x2x8x8xf32>
  // CHECK: linalg.softmax {tp.shardings = [#tp.sharding<@world, [{"tp"}, {}, {}, {}]>]} dimension(3)
  %p = linalg.softmax dimension(3) ins(%scm : tensor<2x2x8x8xf32>) outs(%esc : tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %zc = linalg.fill ins(%zero : f32) outs(%eq4 : tensor<8x2x2x16xf32>) -> tensor<8x2x2x16xf32>
  %ctx = linalg.generic {indexing_maps = [#cp, #cv, #cc], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v3 : tensor<2x2x8x8xf32>, tensor<8x2x16xf32>) outs(%zc : tensor<8x2x2x16xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<8x2x2x16xf32>
  %ctx2 = tensor.collapse_shape %ctx [[0], [1, 2, 3]] : tensor<8x2x2x16xf32> into tensor<8x64xf32>
  // CHECK: %[[O:.*]] = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]}
  %o = linalg.matmul ins(%ctx2, %wo : tensor<8x64xf32>, tensor<64x64xf32>) outs(%z64 : tensor<8x64xf32>) -> tensor<8x64xf32>
  // CHECK-NEXT: tp.reshard %[[O]] <@world, [{}, {}]>
  %r1 = arith.addf %x, %o : tensor<8x64xf32>
  // RMSNorm 2.
  %ss2 = linalg.generic {indexing_maps = [#se, #s], iterator_types = ["parallel", "reduction"]}
      ins(%r1 : tensor<8x64xf32>) outs(%zs : tensor<8xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %a2 = arith.mulf %a, %a : f32
      %r = arith.addf %a2, %acc : f32
      linalg.yield %r : f32
  } -> tensor<8xf32>
  %n2 = linalg.generic {indexing_maps = [#se, #s, #e, #se], iterator_types = ["parallel", "parallel"]}
      ins(%r1, %ss2, %g2 : tensor<8x64xf32>, tensor<8xf32>, tensor<64xf32>) outs(%ee : tensor<8x64xf32>) {
    ^bb0(%a: f32, %q2: f32, %g: f32, %o2: f32):
      %m = arith.mulf %q2, %inv : f32
      %me = arith.addf %m, %eps : f32
      %rs = math.rsqrt %me : f32
      %n = arith.mulf %a, %rs : f32
      %r = arith.mulf %n, %g : f32
      linalg.yield %r : f32
  } -> tensor<8x64xf32>
  // SwiGLU: silu(n2 wg) * (n2 wu), then down.
  %eh = tensor.empty() : tensor<8x128xf32>
  %zh = linalg.fill ins(%zero : f32) outs(%eh : tensor<8x128xf32>) -> tensor<8x128xf32>
  %gt = linalg.matmul ins(%n2, %wg : tensor<8x64xf32>, tensor<64x128xf32>) outs(%zh : tensor<8x128xf32>) -> tensor<8x128xf32>
  %up = linalg.matmul ins(%n2, %wu : tensor<8x64xf32>, tensor<64x128xf32>) outs(%zh : tensor<8x128xf32>) -> tensor<8x128xf32>
  // CHECK: linalg.generic {{.*}} {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]}
  %hsw = linalg.generic {indexing_maps = [#se, #se, #se], iterator_types = ["parallel", "parallel"]}
      ins(%gt, %up : tensor<8x128xf32>, tensor<8x128xf32>) outs(%eh : tensor<8x128xf32>) {
    ^bb0(%a: f32, %b: f32, %o3: f32):
      %na = arith.negf %a : f32
      %ex = math.exp %na : f32
      %den = arith.addf %ex, %one : f32
      %sg = arith.divf %a, %den : f32
      %r = arith.mulf %sg, %b : f32
      linalg.yield %r : f32
  } -> tensor<8x128xf32>
  // CHECK: %[[D:.*]] = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]}
  %down = linalg.matmul ins(%hsw, %wd : tensor<8x128xf32>, tensor<128x64xf32>) outs(%z64 : tensor<8x64xf32>) -> tensor<8x64xf32>
  // CHECK-NEXT: tp.reshard %[[D]] <@world, [{}, {}]>
  %out = arith.addf %r1, %down : tensor<8x64xf32>
  return %out : tensor<8x64xf32>
}
