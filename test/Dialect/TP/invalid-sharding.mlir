// RUN: tp-opt %s --split-input-file --verify-diagnostics

// Tests that a sharding must start with its mesh symbol.

// expected-error @+1 {{expected the mesh as a symbol, e.g. @world}}
func.func @f(%x: tensor<8xf32> {tp.sharding = #tp.sharding<[{"tp"}]>}) {
  return
}

// -----

// Tests that a sharding naming a mesh that does not exist is rejected.

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{'func.func' op argument #0: unknown mesh @nowhere}}
func.func @f(%x: tensor<8xf32> {tp.sharding = #tp.sharding<@nowhere, [{"tp"}]>}) {
  return
}

// -----

// Tests that a sharding's symbol must be a tp.mesh.

func.func private @world()
// expected-error @+1 {{'func.func' op argument #0: @world is a 'func.func', not a tp.mesh}}
func.func @f(%x: tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]>}) {
  return
}

// -----

// Tests that an axis that the mesh does not have is rejected, naming the
// dimension and the mesh's axes.

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{'func.func' op argument #1: unknown axis "x" in dimension 1; mesh @world has axes ["tp"]}}
func.func @f(%a: tensor<8xf32>, %x: tensor<8x8xf32> {tp.sharding = #tp.sharding<@world, [{}, {"x"}]>}) {
  return
}

// -----

// Tests that an unknown partial axis is rejected.

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{'func.func' op result #0: unknown axis "dp" in the partial axes; mesh @world has axes ["tp"]}}
func.func @f(%x: tensor<8xf32>) -> (tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{}], partial = ["dp"]>}) {
  return %x : tensor<8xf32>
}

// -----

// Tests that an axis may not split one dimension twice.

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{mesh axis "tp" is used twice in dimension 0}}
func.func @f(%x: tensor<16xf32> {tp.sharding = #tp.sharding<@world, [{"tp", "tp"}]>}) {
  return
}

// -----

// Tests that an axis may not split two dimensions.

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{mesh axis "tp" splits both dimension 0 and dimension 1}}
func.func @f(%x: tensor<16x16xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}, {"tp"}]>}) {
  return
}

// -----

// Tests that a partial axis may not also split a dimension.

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{partial axis "tp" also splits dimension 1}}
func.func @f(%x: tensor<16x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}], partial = ["tp"]>}) {
  return
}

// -----

// Tests that a partial axis may not be listed twice.

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{partial axis "tp" is listed twice}}
func.func @f(%x: tensor<16xf32> {tp.sharding = #tp.sharding<@world, [{}], partial = ["tp", "tp"]>}) {
  return
}

// -----

// Tests that an axis name may not be empty.

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{mesh axis name must not be empty}}
func.func @f(%x: tensor<16xf32> {tp.sharding = #tp.sharding<@world, [{""}]>}) {
  return
}

// -----

// Tests that the sharding's rank must match the tensor's.

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{'func.func' op argument #0: sharding #tp.sharding<@world, [{}, {"tp"}]> has 2 dimensions but type 'tensor<16x16x16xf32>' has rank 3}}
func.func @f(%x: tensor<16x16x16xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}) {
  return
}

// -----

// Tests that a split dimension must be divisible by its axes' total size.

tp.mesh @grid ["dp" = 2, "tp" = 4]
// expected-error @+1 {{'func.func' op argument #0: dimension 1 of size 12 is not divisible by 8, the total size of axes ["dp", "tp"] of mesh @grid}}
func.func @f(%x: tensor<16x12xf32> {tp.sharding = #tp.sharding<@grid, [{}, {"dp", "tp"}]>}) {
  return
}

// -----

// Tests that a sharding on a non-tensor argument is rejected.

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{'func.func' op argument #0: a sharding describes a ranked tensor or memref, got 'i32'}}
func.func @f(%x: i32 {tp.sharding = #tp.sharding<@world, []>}) {
  return
}

// -----

// Tests that a sharding on an unranked tensor is rejected.

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{'func.func' op result #0: a sharding describes a ranked tensor or memref, got 'tensor<*xf32>'}}
func.func @f(%x: tensor<*xf32>) -> (tensor<*xf32> {tp.sharding = #tp.sharding<@world, [{}]>}) {
  return %x : tensor<*xf32>
}

// -----

// Tests that a sharding on an unranked memref is rejected.

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{'func.func' op argument #0: a sharding describes a ranked tensor or memref, got 'memref<*xf32>'}}
func.func @f(%x: memref<*xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]>}) {
  return
}

// -----

// Tests that a sharding takes no type.

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{a #tp.sharding has no type, got 'i32'}}
func.func @f(%x: tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]> : i32}) {
  return
}

// -----

// Tests that axis names must be quoted strings.

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{expected string}}
func.func @f(%x: tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{tp}]>}) {
  return
}

// -----

// Tests that only `partial` may follow the dimensions.

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{expected 'partial'}}
func.func @f(%x: tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{}], partials = ["tp"]>}) {
  return
}

// -----

// Tests that the dimension list must be bracketed.

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{expected '['}}
func.func @f(%x: tensor<8xf32> {tp.sharding = #tp.sharding<@world, {"tp"}>}) {
  return
}

// -----

// Tests that a dimension's axes must be in braces.

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{expected '{'}}
func.func @f(%x: tensor<8xf32> {tp.sharding = #tp.sharding<@world, ["tp"]>}) {
  return
}

// -----

// Tests that an unterminated sharding is rejected.

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{unbalanced '<' character in pretty dialect name}}
func.func @f(%x: tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}] }) {
  return
}

// -----

// Tests that a function in local form takes and returns values sharded over
// the mesh it runs on, not another one.

tp.mesh @world ["tp" = 2]
tp.mesh @other ["x" = 2]

// expected-error @+1 {{'func.func' op argument #0: is sharded over @other but the function runs on @world (tp.spmd)}}
func.func @f(%x: tensor<4xf32> {tp.sharding = #tp.sharding<@other, [{"x"}]>})
    attributes {tp.spmd = @world} {
  return
}
