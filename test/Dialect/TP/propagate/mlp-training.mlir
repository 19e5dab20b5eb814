// RUN: tp-opt %s --tp-propagate | FileCheck %s
// RUN: tp-opt %s --tp-propagate | grep -c tp.reshard | FileCheck %s --check-prefix=COUNT
// COUNT: {{^2$}}

// Tests an MLP training step (forward, hand-written backward) from one
// annotation: the gradients follow their weights (dW1 split by columns like
// W1, dW2 by rows like W2), every backward contraction over the hidden
// dimension leaves a partial sum, and only two reshards remain: the
// forward output and the input gradient.

tp.mesh @world ["tp" = 4]

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#km = affine_map<(m, n, k) -> (k, m)>
#nk = affine_map<(m, n, k) -> (n, k)>

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W2:[^:]*]]: tensor<2048x512xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>}
// CHECK-SAME: -> (tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>},
// CHECK-SAME: tensor<512x2048xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
// CHECK-SAME: tensor<2048x512xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {}]>},
// CHECK-SAME: tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>})
func.func @train_step(%x: tensor<16x512xf32>,
                      %w1: tensor<512x2048xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>},
                      %w2: tensor<2048x512xf32>,
                      %dy: tensor<16x512xf32>)
    -> (tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>},
        tensor<512x2048xf32>, tensor<2048x512xf32>,
        tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  // Forward.
  %eh = tensor.empty() : tensor<16x2048xf32>
  %zh = linalg.fill ins(%zero : f32) outs(%eh : tensor<16x2048xf32>) -> tensor<16x2048xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x512xf32>, tensor<512x2048xf32>) outs(%zh : tensor<16x2048xf32>) -> tensor<16x2048xf32>
  %a = math.tanh %h : tensor<16x2048xf32>
  %ey = tensor.empty() : tensor<16x512xf32>
  %zy = linalg.fill ins(%zero : f32) outs(%ey : tensor<16x512xf32>) -> tensor<16x512xf32>
  // CHECK: %[[Y:.*]] = linalg.matmul {tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]}
  // CHECK-NEXT: %[[RY:.*]] = tp.reshard %[[Y]] <@world, [{}, {}]>
  %y = linalg.matmul ins(%a, %w2 : tensor<16x2048xf32>, tensor<2048x512xf32>) outs(%zy : tensor<16x512xf32>) -> tensor<16x512xf32>
  // Backward. dW2 = a^T dy
  %ew2 = tensor.empty() : tensor<2048x512xf32>
  %zw2 = linalg.fill ins(%zero : f32) outs(%ew2 : tensor<2048x512xf32>) -> tensor<2048x512xf32>
  // CHECK: linalg.matmul {{.*}}tp.shardings = [#tp.sharding<@world, [{"tp"}, {}]>]
  %dw2 = linalg.matmul indexing_maps = [#km, #kn, #mn]
           ins(%a, %dy : tensor<16x2048xf32>, tensor<16x512xf32>) outs(%zw2 : tensor<2048x512xf32>) -> tensor<2048x512xf32>
  // da = dy W2^T
  // CHECK: linalg.matmul {{.*}}tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]
  %da = linalg.matmul indexing_maps = [#mk, #nk, #mn]
          ins(%dy, %w2 : tensor<16x512xf32>, tensor<2048x512xf32>) outs(%zh : tensor<16x2048xf32>) -> tensor<16x2048xf32>
  // dh = da * (1 - a^2)
  %a2 = arith.mulf %a, %a : tensor<16x2048xf32>
  %ones = linalg.fill ins(%one : f32) outs(%eh : tensor<16x2048xf32>) -> tensor<16x2048xf32>
  %d = arith.subf %ones, %a2 : tensor<16x2048xf32>
  %dh = arith.mulf %da, %d : tensor<16x2048xf32>
  // dW1 = x^T dh
  %ew1 = tensor.empty() : tensor<512x2048xf32>
  %zw1 = linalg.fill ins(%zero : f32) outs(%ew1 : tensor<512x2048xf32>) -> tensor<512x2048xf32>
  // CHECK: linalg.matmul {{.*}}tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]
  %dw1 = linalg.matmul indexing_maps = [#km, #kn, #mn]
           ins(%x, %dh : tensor<16x512xf32>, tensor<16x2048xf32>) outs(%zw1 : tensor<512x2048xf32>) -> tensor<512x2048xf32>
  // dx = dh W1^T
  // CHECK: %[[DX:.*]] = linalg.matmul {{.*}}tp.shardings = [#tp.sharding<@world, [{}, {}], partial = ["tp"]>]
  %dx = linalg.matmul indexing_maps = [#mk, #nk, #mn]
          ins(%dh, %w1 : tensor<16x2048xf32>, tensor<512x2048xf32>) outs(%zy : tensor<16x512xf32>) -> tensor<16x512xf32>
  // CHECK-NEXT: %[[RDX:.*]] = tp.reshard %[[DX]] <@world, [{}, {}]>
  // CHECK-NOT: tp.reshard
  // CHECK: return %[[RY]], %{{.*}}, %{{.*}}, %[[RDX]]
  return %y, %dw1, %dw2, %dx : tensor<16x512xf32>, tensor<512x2048xf32>, tensor<2048x512xf32>, tensor<16x512xf32>
}
