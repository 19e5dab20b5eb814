// RUN: tp-opt %s --tp-propagate | FileCheck %s --check-prefix=GREEDY
// RUN: tp-opt %s --tp-propagate=search | FileCheck %s --check-prefix=SEARCH
// RUN: tp-opt %s --tp-spmd=search | FileCheck %s --check-prefix=SPMD
// RUN: tp-run %s --random-inputs --verify --search | FileCheck %s --check-prefix=EXEC

// Tests the annotated path's search (--tp-propagate's `search`): an input
// gradient accumulated term by term, as a hand-written backward adds each
// projection's contribution to the residual's gradient (dx = ((dres + dh1
// w1^T) + dh2 w2^T) + dh3 w3^T, every w split by columns: each product is a
// pending sum over "tp"). The fixed point reduces each sum before its add (a
// replicated term cannot join a pending one): three all-reduces of the same
// bytes. The search, with a collective's latency in its cost, reduces once:
// the replicated residual gradient becomes one term of the sum (kept on one
// device, zero on the others: no communication), the adds carry the pending
// sum on, and the result is reduced where it is returned.

// GREEDY-COUNT-3: tp.reshard {{.*}} <@world, [{}, {}]>
// GREEDY-NOT: tp.reshard

// SEARCH-LABEL: func.func @input_gradient
// SEARCH: %[[DRES:.*]] = tp.reshard %arg0 <@world, [{}, {}], partial = ["tp"]>
// SEARCH: arith.addf %[[DRES]], %{{.*}} {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]}
// SEARCH: arith.addf {{.*}} {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]}
// SEARCH: %[[SUM:.*]] = arith.addf {{.*}} {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]}
// SEARCH-NEXT: %[[R:.*]] = tp.reshard %[[SUM]] <@world, [{}, {}]>
// SEARCH-NEXT: return %[[R]]

// SPMD-COUNT-1: tp.all_reduce
// SPMD-NOT: tp.all_reduce

// EXEC: verify result #0: {{.*}}: PASS

tp.mesh @world ["tp" = 4]

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

func.func @input_gradient(%dres: tensor<16x64xf32>,
    %dh1: tensor<16x256xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
    %dh2: tensor<16x256xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
    %dh3: tensor<16x256xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
    %w1: tensor<64x256xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
    %w2: tensor<64x256xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
    %w3: tensor<64x256xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>})
    -> (tensor<16x64xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %g1 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dh1, %w1 : tensor<16x256xf32>, tensor<64x256xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %g2 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dh2, %w2 : tensor<16x256xf32>, tensor<64x256xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %g3 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dh3, %w3 : tensor<16x256xf32>, tensor<64x256xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  %a1 = arith.addf %dres, %g1 : tensor<16x64xf32>
  %a2 = arith.addf %a1, %g2 : tensor<16x64xf32>
  %a3 = arith.addf %a2, %g3 : tensor<16x64xf32>
  return %a3 : tensor<16x64xf32>
}
