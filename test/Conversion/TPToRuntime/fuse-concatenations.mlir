// RUN: tp-opt %s --tp-fuse-concatenations | FileCheck %s
// RUN: tp-opt %s --tp-fuse-concatenations --tp-fuse-elementwise | FileCheck %s --check-prefix=FUSED

// Tests that rotate-half's slices, negation and concatenation become one
// generic that reads the sliced tensor in place at the shifted coordinates
// (the negation's body in the first half's branch), which
// tp-fuse-elementwise then fuses into the rotation; and what stays a
// concatenation.

#id3 = affine_map<(s, h, d) -> (s, h, d)>
#sd = affine_map<(s, h, d) -> (s, d)>
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// CHECK-LABEL: func.func @rotate_half
// CHECK-NOT: tensor.concat
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[RH:.*]] = linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} outs(%{{.*}} : tensor<4x2x16xf32>)
// CHECK: %[[S:.*]] = linalg.index 0 : index
// CHECK: %[[H:.*]] = linalg.index 1 : index
// CHECK: %[[D:.*]] = linalg.index 2 : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[D]], %c8 : index
// CHECK: scf.if %[[IN]] -> (f32) {
// CHECK:   %[[HI:.*]] = arith.addi %[[D]], %c8{{.*}} : index
// CHECK:   %[[X:.*]] = tensor.extract %arg0[%[[S]], %[[H]], %[[HI]]] : tensor<4x2x16xf32>
// CHECK:   %[[N:.*]] = arith.negf %[[X]] : f32
// CHECK:   scf.yield %[[N]] : f32
// CHECK: } else {
// CHECK:   %[[LO:.*]] = arith.subi %[[D]], %c8{{.*}} : index
// CHECK:   %[[Y:.*]] = tensor.extract %arg0[%[[S]], %[[H]], %[[LO]]] : tensor<4x2x16xf32>
// CHECK:   scf.yield %[[Y]] : f32
// CHECK: }
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[RH]], %arg1, %arg2 :
// FUSED-LABEL: func.func @rotate_half
// FUSED: %[[R:.*]] = linalg.generic
// FUSED-SAME: ins(%arg0, %arg1, %arg2 : tensor<4x2x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>)
// FUSED: tensor.extract %arg0
// FUSED: arith.negf
// FUSED: tensor.extract %arg0
// FUSED: return %[[R]]
func.func @rotate_half(%x: tensor<4x2x16xf32>, %cos: tensor<4x16xf32>, %sin: tensor<4x16xf32>) -> tensor<4x2x16xf32> {
  %lo = tensor.extract_slice %x[0, 0, 0] [4, 2, 8] [1, 1, 1] : tensor<4x2x16xf32> to tensor<4x2x8xf32>
  %hi = tensor.extract_slice %x[0, 0, 8] [4, 2, 8] [1, 1, 1] : tensor<4x2x16xf32> to tensor<4x2x8xf32>
  %eh = tensor.empty() : tensor<4x2x8xf32>
  %neg = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%hi : tensor<4x2x8xf32>) outs(%eh : tensor<4x2x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<4x2x8xf32>
  %rh = tensor.concat dim(2) %neg, %lo : (tensor<4x2x8xf32>, tensor<4x2x8xf32>) -> tensor<4x2x16xf32>
  %e = tensor.empty() : tensor<4x2x16xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3, #sd, #sd, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %rh, %cos, %sin : tensor<4x2x16xf32>, tensor<4x2x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>)
      outs(%e : tensor<4x2x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %s: f32, %o: f32):
    %ac = arith.mulf %a, %c : f32
    %bs = arith.mulf %b, %s : f32
    %y = arith.addf %ac, %bs : f32
    linalg.yield %y : f32
  } -> tensor<4x2x16xf32>
  return %r : tensor<4x2x16xf32>
}

// Three operands along the first dimension: a tensor read as it is, a slice
// at offsets in both dimensions, and a pointwise op used elsewhere too (read
// as it is, not recomputed).
// CHECK-LABEL: func.func @three
// CHECK-NOT: tensor.concat
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<10x4xf32>)
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: arith.cmpi ult, %[[I]], %c2
// CHECK: tensor.extract %arg0[%[[I]], %[[J]]] : tensor<2x4xf32>
// CHECK: arith.cmpi ult, %[[I]], %c5
// CHECK: %[[I1:.*]] = arith.subi %[[I]], %c2
// CHECK: %[[I2:.*]] = arith.addi %[[I1]], %c1
// CHECK: %[[J2:.*]] = arith.addi %[[J]], %c4
// CHECK: tensor.extract %arg1[%[[I2]], %[[J2]]] : tensor<6x8xf32>
// CHECK: %[[I3:.*]] = arith.subi %[[I]], %c5
// CHECK: tensor.extract %[[E:.*]][%[[I3]], %[[J]]] : tensor<5x4xf32>
// CHECK: return
func.func @three(%a: tensor<2x4xf32>, %b: tensor<6x8xf32>, %c: tensor<5x4xf32>) -> (tensor<10x4xf32>, tensor<5x4xf32>) {
  %s = tensor.extract_slice %b[1, 4] [3, 4] [1, 1] : tensor<6x8xf32> to tensor<3x4xf32>
  %ec = tensor.empty() : tensor<5x4xf32>
  %exp = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<5x4xf32>) outs(%ec : tensor<5x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %x = math.exp %v : f32
    linalg.yield %x : f32
  } -> tensor<5x4xf32>
  %cat = tensor.concat dim(0) %a, %s, %exp : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<10x4xf32>
  %e = tensor.empty() : tensor<10x4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%cat : tensor<10x4xf32>) outs(%e : tensor<10x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<10x4xf32>
  return %r, %exp : tensor<10x4xf32>, tensor<5x4xf32>
}

// A concatenation whose use is no pointwise op (a reduction; a result) stays
// one: it would not fuse.
// CHECK-LABEL: func.func @kept
// CHECK: tensor.concat dim(1)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: tensor.concat dim(0)
func.func @kept(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4xf32>, tensor<8x4xf32>) {
  %cat = tensor.concat dim(1) %a, %b : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%cat : tensor<4x8xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %rows = tensor.concat dim(0) %a, %b : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  return %sum, %rows : tensor<4xf32>, tensor<8x4xf32>
}
