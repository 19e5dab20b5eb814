// RUN: tp-opt %s --split-input-file --verify-diagnostics

// Tests that tp.sharding is refused on an op: intermediate values are
// constrained with tp.annotate.

tp.mesh @world ["tp" = 4]
func.func @f() {
  // expected-error @+1 {{'tensor.empty' op 'tp.sharding' is only valid on function arguments and results; use tp.annotate to constrain an intermediate value}}
  %e = tensor.empty() {tp.sharding = #tp.sharding<@world, [{"tp"}]>} : tensor<8xf32>
  return
}

// -----

// Tests that tp.sharding on a function argument must be a #tp.sharding.

// expected-error @+1 {{'func.func' op argument #0: 'tp.sharding' must be a #tp.sharding, got 3 : i64}}
func.func @f(%x: tensor<8xf32> {tp.sharding = 3}) {
  return
}

// -----

// Tests that unknown tp attributes on arguments are rejected.

// expected-error @+1 {{'func.func' op argument #0: unknown tp attribute 'tp.shard'; expected 'tp.sharding', 'tp.origin', 'tp.name' or (on an argument) 'tp.donate'}}
func.func @f(%x: tensor<8xf32> {tp.shard = 3}) {
  return
}

// -----

// Tests that tp.name on a function argument must be a string.

// expected-error @+1 {{'func.func' op argument #0: 'tp.name' must be a string, got 3 : i64}}
func.func @f(%x: tensor<8xf32> {tp.name = 3}) {
  return
}

// -----

// Tests that unknown tp attributes on ops are rejected.

func.func @f() {
  // expected-error @+1 {{'tensor.empty' op unknown tp attribute 'tp.foo'; expected one of 'tp.shardings', 'tp.spmd', 'tp.origins'}}
  %e = tensor.empty() {tp.foo = 1} : tensor<8xf32>
  return
}

// -----

// Tests that tp.shardings needs one entry per result.

tp.mesh @world ["tp" = 4]
func.func @f() {
  // expected-error @+1 {{'tensor.empty' op 'tp.shardings' has 2 entries but the op has 1 results; expected one sharding per result}}
  %e = tensor.empty() {tp.shardings = [#tp.sharding<@world, [{"tp"}]>, #tp.sharding<@world, [{"tp"}]>]} : tensor<8xf32>
  return
}

// -----

// Tests that tp.shardings must be an array.

tp.mesh @world ["tp" = 4]
func.func @f() {
  // expected-error @+1 {{'tensor.empty' op 'tp.shardings' must be an array of #tp.sharding, got #tp.sharding<@world, [{"tp"}]>}}
  %e = tensor.empty() {tp.shardings = #tp.sharding<@world, [{"tp"}]>} : tensor<8xf32>
  return
}

// -----

// Tests that every tp.shardings entry must be a #tp.sharding.

func.func @f() {
  // expected-error @+1 {{'tensor.empty' op 'tp.shardings' entry #0: expected a #tp.sharding, got "tp"}}
  %e = tensor.empty() {tp.shardings = ["tp"]} : tensor<8xf32>
  return
}

// -----

// Tests that a tp.shardings entry is checked against its result type.

tp.mesh @world ["tp" = 4]
func.func @f() {
  // expected-error @+1 {{'tensor.empty' op 'tp.shardings' entry #0: dimension 0 of size 6 is not divisible by 4, the total size of axes ["tp"] of mesh @world}}
  %e = tensor.empty() {tp.shardings = [#tp.sharding<@world, [{"tp"}]>]} : tensor<6xf32>
  return
}

// -----

// Tests that a non-tensor result takes a rank-0 sharding.

tp.mesh @world ["tp" = 4]
func.func @f() {
  // expected-error @+1 {{'arith.constant' op 'tp.shardings' entry #0: result of non-tensor type 'index' must have a rank-0, non-partial sharding, got #tp.sharding<@world, [{"tp"}]>}}
  %c = arith.constant {tp.shardings = [#tp.sharding<@world, [{"tp"}]>]} 0 : index
  return
}

// -----

// Tests that tp.spmd belongs on functions only.

tp.mesh @world ["tp" = 4]
func.func @f() {
  // expected-error @+1 {{'tensor.empty' op 'tp.spmd' is only valid on functions}}
  %e = tensor.empty() {tp.spmd = @world} : tensor<8xf32>
  return
}

// -----

// Tests that tp.spmd must be a symbol reference.

// expected-error @+1 {{'func.func' op 'tp.spmd' must be a flat symbol reference to a tp.mesh, got "world"}}
func.func @f() attributes {tp.spmd = "world"} {
  return
}

// -----

// Tests that tp.spmd must name an existing mesh.

// expected-error @+1 {{'func.func' op 'tp.spmd' names unknown mesh @world}}
func.func @f() attributes {tp.spmd = @world} {
  return
}

// -----

// Tests that tp.spmd must name a tp.mesh.

// expected-error @+1 {{'func.func' op 'tp.spmd' names @g, which is a 'func.func', not a tp.mesh}}
func.func @f() attributes {tp.spmd = @g} {
  return
}
func.func private @g()

// -----

// Tests that tp.sharding is refused on a function itself.

tp.mesh @world ["tp" = 4]
// expected-error @+1 {{'func.func' op 'tp.sharding' is only valid on function arguments and results}}
func.func @f() attributes {tp.sharding = #tp.sharding<@world, []>} {
  return
}

// -----

// Tests that tp.origins needs one string per result.

func.func @f() {
  // expected-error @+1 {{'tensor.empty' op 'tp.origins' must be an array of one string per result, got ["a", "b"]}}
  %e = tensor.empty() {tp.origins = ["a", "b"]} : tensor<8xf32>
  return
}

// -----

// Tests that tp.origin on an argument must be a string.

// expected-error @+1 {{'func.func' op argument #0: 'tp.origin' must be a string, got 1 : i64}}
func.func @f(%x: tensor<8xf32> {tp.origin = 1}) {
  return
}

// -----

// Tests that a bufferized destination-style op (no results) has one sharding
// per buffer it writes, checked against that buffer.

tp.mesh @world ["tp" = 4]
func.func @f(%x: memref<16x8xf32>, %y: memref<16x8xf32>) {
  // expected-error @+1 {{'linalg.copy' op 'tp.shardings' has 2 entries but the op has 1 output buffers; expected one sharding per output buffer}}
  linalg.copy {tp.shardings = [#tp.sharding<@world, [{}, {}]>, #tp.sharding<@world, [{}, {}]>]} ins(%x : memref<16x8xf32>) outs(%y : memref<16x8xf32>)
  return
}

// -----

tp.mesh @world ["tp" = 4]
func.func @f(%x: memref<16x6xf32>, %y: memref<16x6xf32>) {
  // expected-error @+1 {{'linalg.copy' op 'tp.shardings' entry #0: dimension 1 of size 6 is not divisible by 4}}
  linalg.copy {tp.shardings = [#tp.sharding<@world, [{}, {"tp"}]>]} ins(%x : memref<16x6xf32>) outs(%y : memref<16x6xf32>)
  return
}

// -----

// Tests tp.donate: an argument given to a result of its type and sharding.

tp.mesh @world ["tp" = 4]

// expected-error @+1 {{'func.func' op argument #0: 'tp.donate' must be an integer (a result's index) on a function argument, got "x"}}
func.func @f(%x: tensor<8xf32> {tp.donate = "x"}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// -----

// expected-error @+1 {{'func.func' op argument #0: donated to result #1, but the function has 1 result(s)}}
func.func @f(%x: tensor<8xf32> {tp.donate = 1 : i64}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// -----

// expected-error @+1 {{'func.func' op argument #0: donated to result #0 of type 'tensor<4xf32>', but the argument is 'tensor<8xf32>'; a donated buffer must have the result's type}}
func.func @f(%x: tensor<8xf32> {tp.donate = 0 : i64}) -> tensor<4xf32> {
  %y = tensor.extract_slice %x[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

tp.mesh @world ["tp" = 4]

// expected-error @+1 {{'func.func' op argument #0: donated to result #0 sharded #tp.sharding<@world, [{}]>, but the argument is sharded #tp.sharding<@world, [{"tp"}]>; a donated buffer must have the result's sharding}}
func.func @f(%x: tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{"tp"}]>, tp.donate = 0 : i64})
    -> (tensor<8xf32> {tp.sharding = #tp.sharding<@world, [{}]>}) {
  return %x : tensor<8xf32>
}

// -----

// expected-error @+1 {{'func.func' op argument #0: donated to result #0, as argument #1 is: a result takes one donated buffer}}
func.func @f(%x: tensor<8xf32> {tp.donate = 0 : i64}, %y: tensor<8xf32> {tp.donate = 0 : i64}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #0: unknown tp attribute 'tp.donate'}}
func.func @f(%x: tensor<8xf32>) -> (tensor<8xf32> {tp.donate = 0 : i64}) {
  return %x : tensor<8xf32>
}

// -----

// Tests that tp.parallel marks loops only, and is a unit attribute.

func.func @f() {
  // expected-error @+1 {{'tensor.empty' op 'tp.parallel' must be a unit attribute on a loop, got unit}}
  %e = tensor.empty() {tp.parallel} : tensor<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c1 step %c1 {
  } {tp.parallel}
  return
}

// -----

func.func @f(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'scf.for' op 'tp.parallel' must be a unit attribute on a loop, got 1 : i64}}
  scf.for %i = %c0 to %n step %c1 {
  } {tp.parallel = 1}
  return
}

// -----

// Tests that tp.parallel_body marks a function of a range and no results.

// expected-error @+1 {{'func.func' op 'tp.parallel_body' must be a unit attribute on a function of at least two arguments (the range it runs) and no results, got unit}}
func.func private @body(%lo: index) attributes {tp.parallel_body}
