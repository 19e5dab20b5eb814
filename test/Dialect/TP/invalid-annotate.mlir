// RUN: tp-opt %s --split-input-file --verify-diagnostics

// Tests that tp.annotate checks its mesh exists.

func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'tp.annotate' op unknown mesh @world}}
  %0 = tp.annotate %x <@world, [{"tp"}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Tests that tp.annotate checks the sharding's rank against the type.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'tp.annotate' op sharding #tp.sharding<@world, [{}, {"tp"}]> has 2 dimensions but type 'tensor<8xf32>' has rank 1}}
  %0 = tp.annotate %x <@world, [{}, {"tp"}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Tests that tp.annotate checks divisibility of a split dimension.

tp.mesh @world ["tp" = 4]
tp.mesh @big ["tp" = 32]
func.func @g(%x: tensor<16x2048xf32>) -> tensor<16x2048xf32> {
  %0 = tp.annotate %x <@world, [{"tp"}, {}]> : tensor<16x2048xf32>
  // expected-error @+1 {{'tp.annotate' op dimension 0 of size 16 is not divisible by 32, the total size of axes ["tp"] of mesh @big}}
  %1 = tp.annotate %0 <@big, [{"tp"}, {}]> : tensor<16x2048xf32>
  return %1 : tensor<16x2048xf32>
}

// -----

// Tests that tp.reshard checks its axes against the mesh.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'tp.reshard' op unknown axis "dp" in dimension 0; mesh @world has axes ["tp"]}}
  %0 = tp.reshard %x <@world, [{"dp"}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Tests that tp.reshard keeps the type (generic form).

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{'tp.reshard' op failed to verify that all of {input, result} have same type}}
  %0 = "tp.reshard"(%x) <{sharding = #tp.sharding<@world, [{"tp"}]>}> : (tensor<8xf32>) -> tensor<8xf16>
  return
}

// -----

// Tests that tp.annotate needs a ranked tensor operand.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<*xf32>) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %0 = tp.annotate %x <@world, [{"tp"}]> : tensor<*xf32>
  return
}

// -----

// Tests that the prefixed form #tp.sharding<...> cannot follow the operand
// (MLIR reads `%x #tp` as a result number) and is reported as such.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{invalid SSA value result number}}
  %0 = tp.annotate %x #tp.sharding<@world, [{"tp"}]> : tensor<8xf32>
  return
}

// -----

// Tests that the sharding of tp.annotate takes no partial axis that also
// splits a dimension.

tp.mesh @world ["tp" = 4]
func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{partial axis "tp" also splits dimension 0}}
  %0 = tp.annotate %x <@world, [{"tp"}], partial = ["tp"]> : tensor<8xf32>
  return
}

// -----

// Tests that a pending sum needs elements the collectives can sum (fuzzed:
// a complex<f32> sum once reached reshard insertion and crashed it).

tp.mesh @world ["tp" = 2]
func.func @f(%x: tensor<4x8xcomplex<f32>>) -> tensor<4x8xcomplex<f32>> {
  // expected-error @+1 {{'tp.annotate' op sharding #tp.sharding<@world, [{}, {}], partial = ["tp"]> holds a pending sum, which needs integer or floating-point elements; got 'complex<f32>'}}
  %0 = tp.annotate %x <@world, [{}, {}], partial = ["tp"]> : tensor<4x8xcomplex<f32>>
  return %0 : tensor<4x8xcomplex<f32>>
}
