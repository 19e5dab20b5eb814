// RUN: tp-opt %s --tp-optimize-collectives --split-input-file | FileCheck %s

// Tests that an all_reduce whose only use is an all_slice over the same axes
// becomes one reduce_scatter on the sliced dimension.

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: func.func @reduce_scatter
// CHECK-SAME: (%[[X:.*]]: tensor<16x512xf32>)
// CHECK-NEXT: %[[R:.*]] = tp.reduce_scatter sum %[[X]] over @world ["tp"] dim 0 : tensor<16x512xf32> -> tensor<4x512xf32>
// CHECK-NEXT: return %[[R]]
func.func @reduce_scatter(%x: tensor<16x512xf32>) -> tensor<4x512xf32> attributes {tp.spmd = @world} {
  %a = tp.all_reduce sum %x over @world ["tp"] : tensor<16x512xf32>
  %b = tp.all_slice %a over @world ["tp"] dim 0 : tensor<16x512xf32> -> tensor<4x512xf32>
  return %b : tensor<4x512xf32>
}

// -----

// Tests that an all_reduce with other uses is kept (the fold would not save
// communication), and that a slice over other axes is left alone.

tp.mesh @grid ["dp" = 2, "tp" = 2]

// CHECK-LABEL: func.func @kept
// CHECK: tp.all_reduce
// CHECK: tp.all_slice
// CHECK: tp.all_reduce
// CHECK: tp.all_slice
func.func @kept(%x: tensor<16x512xf32>) -> (tensor<16x512xf32>, tensor<8x512xf32>, tensor<8x512xf32>) attributes {tp.spmd = @grid} {
  %a = tp.all_reduce sum %x over @grid ["tp"] : tensor<16x512xf32>
  %b = tp.all_slice %a over @grid ["tp"] dim 0 : tensor<16x512xf32> -> tensor<8x512xf32>
  %c = tp.all_reduce max %x over @grid ["dp"] : tensor<16x512xf32>
  %d = tp.all_slice %c over @grid ["tp"] dim 0 : tensor<16x512xf32> -> tensor<8x512xf32>
  return %a, %b, %d : tensor<16x512xf32>, tensor<8x512xf32>, tensor<8x512xf32>
}

// -----

// Tests that a gather undone by a slice, and a slice undone by a gather, on
// the same axes and dimension, disappear.

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: func.func @inverses
// CHECK-SAME: (%[[X:.*]]: tensor<4x512xf32>, %[[Y:.*]]: tensor<16x512xf32>)
// CHECK-NOT: tp.all
// CHECK: return %[[X]], %[[Y]]
func.func @inverses(%x: tensor<4x512xf32>, %y: tensor<16x512xf32>) -> (tensor<4x512xf32>, tensor<16x512xf32>) attributes {tp.spmd = @world} {
  %g = tp.all_gather %x over @world ["tp"] dim 0 : tensor<4x512xf32> -> tensor<16x512xf32>
  %s = tp.all_slice %g over @world ["tp"] dim 0 : tensor<16x512xf32> -> tensor<4x512xf32>
  %t = tp.all_slice %y over @world ["tp"] dim 0 : tensor<16x512xf32> -> tensor<4x512xf32>
  %u = tp.all_gather %t over @world ["tp"] dim 0 : tensor<4x512xf32> -> tensor<16x512xf32>
  return %s, %u : tensor<4x512xf32>, tensor<16x512xf32>
}

// -----

// Tests that a gather and a slice on different dimensions are not inverses.

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: func.func @not_inverses
// CHECK: tp.all_gather
// CHECK: tp.all_slice
func.func @not_inverses(%x: tensor<4x512xf32>) -> tensor<16x128xf32> attributes {tp.spmd = @world} {
  %g = tp.all_gather %x over @world ["tp"] dim 0 : tensor<4x512xf32> -> tensor<16x512xf32>
  %s = tp.all_slice %g over @world ["tp"] dim 1 : tensor<16x512xf32> -> tensor<16x128xf32>
  return %s : tensor<16x128xf32>
}

// -----

// Tests that duplicate collectives of one value merge and unused ones go.

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: func.func @duplicates
// CHECK-COUNT-1: tp.all_reduce
// CHECK-NOT: tp.all_gather
// CHECK: return %[[R:.*]], %[[R]]
func.func @duplicates(%x: tensor<16x512xf32>) -> (tensor<16x512xf32>, tensor<16x512xf32>) attributes {tp.spmd = @world} {
  %a = tp.all_reduce sum %x over @world ["tp"] : tensor<16x512xf32>
  %unused = tp.all_gather %x over @world ["tp"] dim 1 : tensor<16x512xf32> -> tensor<16x2048xf32>
  %b = tp.all_reduce sum %x over @world ["tp"] : tensor<16x512xf32>
  return %a, %b : tensor<16x512xf32>, tensor<16x512xf32>
}

// -----

// Tests that collectives over a group of one device (axes of size 1) are
// their operands, and that a group with another axis of size 2 is kept.

tp.mesh @one ["dp" = 2, "tp" = 1]

// CHECK-LABEL: func.func @group_of_one
// CHECK-SAME: (%[[X:.*]]: tensor<16x512xf32>)
// CHECK-NOT: tp.all_gather
// CHECK-NOT: tp.reduce_scatter
// CHECK-NOT: tp.all_to_all
// CHECK-NOT: tp.all_slice
// CHECK: %[[K:.*]] = tp.all_reduce sum %[[X]] over @one ["dp", "tp"]
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[K]]
func.func @group_of_one(%x: tensor<16x512xf32>) -> (tensor<16x512xf32>, tensor<16x512xf32>, tensor<16x512xf32>, tensor<16x512xf32>, tensor<16x512xf32>, tensor<16x512xf32>) attributes {tp.spmd = @one} {
  %a = tp.all_reduce sum %x over @one ["tp"] : tensor<16x512xf32>
  %b = tp.all_gather %x over @one ["tp"] dim 1 : tensor<16x512xf32> -> tensor<16x512xf32>
  %c = tp.reduce_scatter sum %x over @one ["tp"] dim 0 : tensor<16x512xf32> -> tensor<16x512xf32>
  %d = tp.all_to_all %x over @one ["tp"] split 0 concat 1 : tensor<16x512xf32> -> tensor<16x512xf32>
  %e = tp.all_slice %x over @one ["tp"] dim 0 : tensor<16x512xf32> -> tensor<16x512xf32>
  %k = tp.all_reduce sum %x over @one ["dp", "tp"] : tensor<16x512xf32>
  return %a, %b, %c, %d, %e, %k : tensor<16x512xf32>, tensor<16x512xf32>, tensor<16x512xf32>, tensor<16x512xf32>, tensor<16x512xf32>, tensor<16x512xf32>
}
