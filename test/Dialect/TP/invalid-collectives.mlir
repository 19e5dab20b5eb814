// RUN: tp-opt %s --split-input-file --verify-diagnostics

// Tests that a collective needs at least one axis.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16xf32>) {
  // expected-error @+1 {{'tp.all_reduce' op needs at least one mesh axis}}
  %0 = tp.all_reduce sum %x over @world [] : tensor<16xf32>
  return
}

// -----

// Tests that a collective may not list an axis twice.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16xf32>) {
  // expected-error @+1 {{'tp.all_reduce' op mesh axis "tp" is listed twice}}
  %0 = tp.all_reduce sum %x over @world ["tp", "tp"] : tensor<16xf32>
  return
}

// -----

// Tests that a collective's axis name may not be empty.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16xf32>) {
  // expected-error @+1 {{'tp.all_reduce' op mesh axis name must not be empty}}
  %0 = tp.all_reduce sum %x over @world [""] : tensor<16xf32>
  return
}

// -----

// Tests that a collective's axes must be axes of its mesh.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16xf32>) {
  // expected-error @+1 {{'tp.all_reduce' op unknown axis "dp"; mesh @world has axes ["tp"]}}
  %0 = tp.all_reduce sum %x over @world ["dp"] : tensor<16xf32>
  return
}

// -----

// Tests that a collective's mesh must exist.

func.func @f(%x: tensor<16xf32>) {
  // expected-error @+1 {{'tp.all_reduce' op unknown mesh @world}}
  %0 = tp.all_reduce sum %x over @world ["tp"] : tensor<16xf32>
  return
}

// -----

// Tests that a collective's mesh must be a tp.mesh.

func.func private @world()
func.func @f(%x: tensor<16xf32>) {
  // expected-error @+1 {{'tp.all_reduce' op @world is a 'func.func', not a tp.mesh}}
  %0 = tp.all_reduce sum %x over @world ["tp"] : tensor<16xf32>
  return
}

// -----

// Tests that only sum, max and min are reductions.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16xf32>) {
  // expected-error @+1 {{unknown reduction 'add'; expected one of sum, max, min}}
  %0 = tp.all_reduce add %x over @world ["tp"] : tensor<16xf32>
  return
}

// -----

// Tests that all_reduce keeps its shape (generic form).

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16xf32>) {
  // expected-error @+1 {{'tp.all_reduce' op result dimension 0 has size 4 but the operand's has 16; only the collective's dimensions may change}}
  %0 = "tp.all_reduce"(%x) <{kind = #tp.reduction<sum>, mesh = @world, axes = ["tp"]}> : (tensor<16xf32>) -> tensor<4xf32>
  return
}

// -----

// Tests that all_gather multiplies its dimension by the group size.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16x128xf32>) {
  // expected-error @+1 {{'tp.all_gather' op result dimension 1 has size 256 but expected 512 (operand size 128 x group size 4 of axes ["tp"])}}
  %0 = tp.all_gather %x over @world ["tp"] dim 1 : tensor<16x128xf32> -> tensor<16x256xf32>
  return
}

// -----

// Tests that all_gather multiplies by the product of all its axes.

tp.mesh @grid ["dp" = 2, "tp" = 4]
func.func @f(%x: tensor<16x128xf32>) {
  // expected-error @+1 {{'tp.all_gather' op result dimension 0 has size 64 but expected 128 (operand size 16 x group size 8 of axes ["dp", "tp"])}}
  %0 = tp.all_gather %x over @grid ["dp", "tp"] dim 0 : tensor<16x128xf32> -> tensor<64x128xf32>
  return
}

// -----

// Tests that all_gather's dim must be a dimension of the operand.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16x128xf32>) {
  // expected-error @+1 {{'tp.all_gather' op dim 2 is out of range for an operand of rank 2}}
  %0 = tp.all_gather %x over @world ["tp"] dim 2 : tensor<16x128xf32> -> tensor<16x128xf32>
  return
}

// -----

// Tests that a negative dim is rejected.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16x128xf32>) {
  // expected-error @+1 {{'tp.all_gather' op dim -1 is out of range for an operand of rank 2}}
  %0 = tp.all_gather %x over @world ["tp"] dim -1 : tensor<16x128xf32> -> tensor<16x128xf32>
  return
}

// -----

// Tests that only the gathered dimension may change.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16x128xf32>) {
  // expected-error @+1 {{'tp.all_gather' op result dimension 0 has size 8 but the operand's has 16; only the collective's dimensions may change}}
  %0 = tp.all_gather %x over @world ["tp"] dim 1 : tensor<16x128xf32> -> tensor<8x512xf32>
  return
}

// -----

// Tests that the rank may not change.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16x128xf32>) {
  // expected-error @+1 {{'tp.all_gather' op result type 'tensor<16x128x4xf32>' has rank 3 but operand type 'tensor<16x128xf32>' has rank 2}}
  %0 = tp.all_gather %x over @world ["tp"] dim 1 : tensor<16x128xf32> -> tensor<16x128x4xf32>
  return
}

// -----

// Tests that the element type may not change.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16x128xf32>) {
  // expected-error @+1 {{'tp.all_gather' op result element type 'bf16' differs from operand element type 'f32'}}
  %0 = tp.all_gather %x over @world ["tp"] dim 1 : tensor<16x128xf32> -> tensor<16x512xbf16>
  return
}

// -----

// Tests that a dynamic gathered dimension stays dynamic.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<?x128xf32>) {
  // expected-error @+1 {{'tp.all_gather' op dimension 0 must be dynamic in both operand and result or static in both, got 'tensor<?x128xf32>' -> 'tensor<64x128xf32>'}}
  %0 = tp.all_gather %x over @world ["tp"] dim 0 : tensor<?x128xf32> -> tensor<64x128xf32>
  return
}

// -----

// Tests that reduce_scatter needs its dimension divisible by the group size.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<10x128xf32>) {
  // expected-error @+1 {{'tp.reduce_scatter' op operand dimension 0 of size 10 is not divisible by the group size 4 of axes ["tp"]}}
  %0 = tp.reduce_scatter sum %x over @world ["tp"] dim 0 : tensor<10x128xf32> -> tensor<2x128xf32>
  return
}

// -----

// Tests that reduce_scatter divides its dimension by the group size.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16x128xf32>) {
  // expected-error @+1 {{'tp.reduce_scatter' op result dimension 0 has size 8 but expected 4 (operand size 16 / group size 4 of axes ["tp"])}}
  %0 = tp.reduce_scatter sum %x over @world ["tp"] dim 0 : tensor<16x128xf32> -> tensor<8x128xf32>
  return
}

// -----

// Tests that reduce_scatter's dim must be in range.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16x128xf32>) {
  // expected-error @+1 {{'tp.reduce_scatter' op dim 5 is out of range for an operand of rank 2}}
  %0 = tp.reduce_scatter sum %x over @world ["tp"] dim 5 : tensor<16x128xf32> -> tensor<4x128xf32>
  return
}

// -----

// Tests that all_to_all needs distinct split and concat dimensions.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16x128xf32>) {
  // expected-error @+1 {{'tp.all_to_all' op split and concat dimensions must differ, both are 1}}
  %0 = tp.all_to_all %x over @world ["tp"] split 1 concat 1 : tensor<16x128xf32> -> tensor<16x128xf32>
  return
}

// -----

// Tests that all_to_all's split dimension must be in range.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16x128xf32>) {
  // expected-error @+1 {{'tp.all_to_all' op split dimension 3 is out of range for an operand of rank 2}}
  %0 = tp.all_to_all %x over @world ["tp"] split 3 concat 0 : tensor<16x128xf32> -> tensor<16x128xf32>
  return
}

// -----

// Tests that all_to_all's concat dimension must be in range.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16x128xf32>) {
  // expected-error @+1 {{'tp.all_to_all' op concat dimension 2 is out of range for an operand of rank 2}}
  %0 = tp.all_to_all %x over @world ["tp"] split 0 concat 2 : tensor<16x128xf32> -> tensor<16x128xf32>
  return
}

// -----

// Tests that all_to_all's split dimension must divide by the group size.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16x6xf32>) {
  // expected-error @+1 {{'tp.all_to_all' op operand dimension 1 of size 6 is not divisible by the group size 4 of axes ["tp"]}}
  %0 = tp.all_to_all %x over @world ["tp"] split 1 concat 0 : tensor<16x6xf32> -> tensor<64x1xf32>
  return
}

// -----

// Tests that all_to_all grows its concat dimension by the group size.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<4x512xf32>) {
  // expected-error @+1 {{'tp.all_to_all' op result dimension 0 has size 4 but expected 16 (operand size 4 x group size 4 of axes ["tp"])}}
  %0 = tp.all_to_all %x over @world ["tp"] split 1 concat 0 : tensor<4x512xf32> -> tensor<4x128xf32>
  return
}

// -----

// Tests that all_to_all leaves the other dimensions alone.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<4x512x3xf32>) {
  // expected-error @+1 {{'tp.all_to_all' op result dimension 2 has size 6 but the operand's has 3; only the collective's dimensions may change}}
  %0 = tp.all_to_all %x over @world ["tp"] split 1 concat 0 : tensor<4x512x3xf32> -> tensor<16x128x6xf32>
  return
}

// -----

// Tests that all_slice needs its dimension divisible by the group size.

tp.mesh @grid ["dp" = 2, "tp" = 4]
func.func @f(%x: tensor<16x12xf32>) {
  // expected-error @+1 {{'tp.all_slice' op operand dimension 1 of size 12 is not divisible by the group size 8 of axes ["tp", "dp"]}}
  %0 = tp.all_slice %x over @grid ["tp", "dp"] dim 1 : tensor<16x12xf32> -> tensor<16x1xf32>
  return
}

// -----

// Tests that all_slice divides its dimension by the group size.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16x512xf32>) {
  // expected-error @+1 {{'tp.all_slice' op result dimension 1 has size 512 but expected 128 (operand size 512 / group size 4 of axes ["tp"])}}
  %0 = tp.all_slice %x over @world ["tp"] dim 1 : tensor<16x512xf32> -> tensor<16x512xf32>
  return
}

// -----

// Tests that axis_index needs at least one axis.

tp.mesh @world ["tp" = 4]
func.func @f() {
  // expected-error @+1 {{'tp.axis_index' op needs at least one mesh axis}}
  %0 = tp.axis_index @world [] : index
  return
}

// -----

// Tests that axis_index's axes must be axes of its mesh.

tp.mesh @world ["tp" = 4]
func.func @f() {
  // expected-error @+1 {{'tp.axis_index' op unknown axis "x"; mesh @world has axes ["tp"]}}
  %0 = tp.axis_index @world ["x"] : index
  return
}

// -----

// Tests that axis_index yields an index.

tp.mesh @world ["tp" = 4]
func.func @f() {
  // expected-error @+1 {{'tp.axis_index' op result #0 must be index, but got 'i32'}}
  %0 = "tp.axis_index"() <{mesh = @world, axes = ["tp"]}> : () -> i32
  return
}

// -----

// Tests that a memref operand means the buffer form: an `into` buffer.

tp.mesh @world ["tp" = 4]
func.func @f(%x: memref<16xf32>) {
  // expected-error @+1 {{'tp.all_reduce' op with a memref operand writes an `into` memref and has no result}}
  "tp.all_reduce"(%x) <{kind = #tp.reduction<sum>, mesh = @world, axes = ["tp"]}> : (memref<16xf32>) -> ()
  return
}

// -----

// Tests that a tensor operand has no `into` buffer.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<16xf32>, %o: memref<16xf32>) {
  // expected-error @+1 {{'tp.all_reduce' op with a tensor operand has a tensor result and no `into` buffer}}
  "tp.all_reduce"(%x, %o) <{kind = #tp.reduction<sum>, mesh = @world, axes = ["tp"]}> : (tensor<16xf32>, memref<16xf32>) -> ()
  return
}

// -----

// Tests that the buffer form has no result.

tp.mesh @world ["tp" = 4]
func.func @f(%x: memref<16xf32>, %o: memref<16xf32>) {
  // expected-error @+1 {{'tp.all_gather' op on memrefs has no result}}
  %0 = "tp.all_gather"(%x, %o) <{mesh = @world, axes = ["tp"], dim = 0 : i64}> : (memref<16xf32>, memref<16xf32>) -> tensor<64xf32>
  return
}

// -----

// Tests that the buffer form checks the `into` buffer's shape.

tp.mesh @world ["tp" = 4]
func.func @f(%x: memref<16x8xf32>, %o: memref<16x8xf32>) {
  // expected-error @+1 {{'tp.all_gather' op result dimension 1 has size 8 but expected 32 (operand size 8 x group size 4 of axes ["tp"])}}
  tp.all_gather %x over @world ["tp"] dim 1 into %o : memref<16x8xf32> -> memref<16x8xf32>
  return
}

// -----

// Tests that the buffer form's `into` is a memref.

tp.mesh @world ["tp" = 4]
func.func @f(%x: memref<16xf32>, %o: tensor<16xf32>) {
  // expected-error @+1 {{'tp.all_reduce' op operand #1 must be memref of any type values, but got 'tensor<16xf32>'}}
  "tp.all_reduce"(%x, %o) <{kind = #tp.reduction<sum>, mesh = @world, axes = ["tp"]}> : (memref<16xf32>, tensor<16xf32>) -> ()
  return
}
