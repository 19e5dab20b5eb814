// RUN: tp-opt %s --tp-map-linalg-to-gpu --split-input-file --verify-diagnostics | FileCheck %s

// Pointwise whose innermost loop (1001) is not a multiple of 4: one thread per
// element, 256 per block, the innermost loop fastest (consecutive threads,
// consecutive elements), the last block bounds-checked.

#id = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @pointwise
// CHECK-DAG: %[[BLOCKS:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[BLOCKS]], {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[THREADS]],
// CHECK: %[[START:.*]] = arith.muli %[[BX]], %{{.*}} : index
// CHECK: %[[LINEAR:.*]] = arith.addi %[[START]], %[[TX]] : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[LINEAR]], %{{.*}} : index
// CHECK: scf.if %[[IN]] {
// CHECK: %[[J:.*]] = arith.remui %[[LINEAR]], %[[C1001:.*]] : index
// CHECK: %[[I:.*]] = arith.divui %[[LINEAR]], %[[C1001]] : index
// CHECK: memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<4x1001xf32>
// CHECK: math.exp
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK-NOT: linalg.generic
func.func @pointwise(%x: memref<4x1001xf32>, %y: memref<4x1001xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x1001xf32>) outs(%y : memref<4x1001xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// Pointwise with an innermost loop of a multiple of 4: each thread runs 4
// consecutive elements with 16-byte vector loads and stores; an operand that
// does not use the innermost loop is loaded once and broadcast, constants
// become splats, linalg.index counts up across the lanes.

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
// CHECK-LABEL: func.func @vectorized
// CHECK-DAG: %[[BLOCKS:.*]] = arith.constant 4 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[BLOCKS]], {{.*}}) threads({{.*}}) in ({{.*}} = %{{.*}},
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[LINEAR:.*]], %[[C1000:.*]] : index
// CHECK: scf.if %[[IN]] {
// CHECK: %[[G:.*]] = arith.remui %[[LINEAR]], %[[C250:.*]] : index
// CHECK: %[[I:.*]] = arith.divui %[[LINEAR]], %[[C250]] : index
// CHECK: %[[J:.*]] = arith.muli %[[G]], %{{.*}} : index
// CHECK: %[[X:.*]] = vector.load %{{.*}}[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<4x1000xf32>, vector<4xf32>
// CHECK: %[[B:.*]] = vector.load %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<1000xf32>, vector<4xf32>
// CHECK: %[[S:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<4xf32>
// CHECK: %[[SV:.*]] = vector.broadcast %[[S]] : f32 to vector<4xf32>
// CHECK: %[[HALF:.*]] = arith.constant dense<5.000000e-01> : vector<4xf32>
// CHECK: %[[E:.*]] = arith.addf %[[X]], %[[B]] : vector<4xf32>
// CHECK: %[[F:.*]] = arith.mulf %[[E]], %[[SV]] : vector<4xf32>
// CHECK: %[[T:.*]] = math.tanh %[[F]] : vector<4xf32>
// CHECK: %[[JV:.*]] = vector.broadcast %[[J]] : index to vector<4xindex>
// CHECK: %[[LANES:.*]] = arith.constant dense<[0, 1, 2, 3]> : vector<4xindex>
// CHECK: %[[JL:.*]] = arith.addi %[[JV]], %[[LANES]] : vector<4xindex>
// CHECK: arith.index_cast %[[JL]] : vector<4xindex> to vector<4xi32>
// CHECK: %[[R:.*]] = arith.addf
// CHECK: vector.store %[[R]], %{{.*}}[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<4x1000xf32>, vector<4xf32>
// CHECK-NOT: memref.store
// CHECK: gpu.terminator
func.func @vectorized(%x: memref<4x1000xf32>, %b: memref<1000xf32>, %s: memref<4xf32>, %y: memref<4x1000xf32>) {
  linalg.generic {indexing_maps = [#id, #col, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b, %s : memref<4x1000xf32>, memref<1000xf32>, memref<4xf32>) outs(%y : memref<4x1000xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32, %o: f32):
    %half = arith.constant 0.5 : f32
    %e = arith.addf %a, %c : f32
    %f = arith.mulf %e, %d : f32
    %g = math.tanh %f : f32
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %h = arith.mulf %g, %half : f32
    %k = arith.addf %h, %jf : f32
    linalg.yield %k : f32
  }
  return
}

// -----

// A transpose reads the innermost loop in an outer dimension of its input: no
// vector load can do that, so it stays one element a thread; so does a view
// whose offset is not a multiple of 4 elements (no 16-byte alignment).

#t = affine_map<(i, j) -> (j, i)>
#id = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @not_vectorized
// CHECK-NOT: vector.
// CHECK: memref.load %{{.*}} : memref<8x4xf32>
// CHECK: memref.store
// CHECK-NOT: vector.
// CHECK: memref.load %{{.*}} : memref<4x8xf32, strided<[8, 1], offset: 2>>
// CHECK: memref.store
// CHECK-NOT: vector.
func.func @not_vectorized(%x: memref<8x4xf32>, %y: memref<4x8xf32>, %v: memref<4x8xf32, strided<[8, 1], offset: 2>>) {
  linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x4xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v : memref<4x8xf32, strided<[8, 1], offset: 2>>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// A row reduction with a recognised combiner: one block per row, each thread
// folds a strided share, gpu.all_reduce combines the partials, thread 0 folds
// the total into the output.

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
// CHECK-LABEL: func.func @row_sum_of_squares
// CHECK-DAG: %[[ROWS:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[ROWS]], {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[THREADS]],
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[PARTIAL:.*]] = scf.for %[[K:.*]] = %[[TX]] to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CHECK: %[[V:.*]] = memref.load %{{.*}} : memref<4x1000xf32>
// CHECK: %[[SQ:.*]] = arith.mulf %[[V]], %[[V]] : f32
// CHECK: %[[NEXT:.*]] = arith.addf %[[SQ]], %[[ACC]] : f32
// CHECK: scf.yield %[[NEXT]]
// CHECK: %[[TOTAL:.*]] = gpu.all_reduce add %[[PARTIAL]] uniform
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TX]], %{{.*}} : index
// CHECK: scf.if %[[FIRST]] {
// CHECK: %[[OLD:.*]] = memref.load %{{.*}} : memref<4xf32>
// CHECK: %[[NEW:.*]] = arith.addf %[[TOTAL]], %[[OLD]] : f32
// CHECK: memref.store %[[NEW]], %{{.*}} : memref<4xf32>
func.func @row_sum_of_squares(%x: memref<4x1000xf32>, %s: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x1000xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %sq, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A max over fewer than 32 elements per row starts from -inf when it is a block
// reduction; here it is short, so each thread runs its row's loop.

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
// CHECK-LABEL: func.func @short_row_max
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK: memref.load %{{.*}} : memref<4x8xf32>
// CHECK: memref.load %{{.*}} : memref<4xf32>
// CHECK: arith.maxnumf
// CHECK: memref.store %{{.*}} : memref<4xf32>
// CHECK-NOT: gpu.all_reduce
func.func @short_row_max(%m: memref<4x8xf32>, %t: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%m : memref<4x8xf32>) outs(%t : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maxnumf %acc, %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A long max: -inf is the identity of each thread's share.

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
// CHECK-LABEL: func.func @long_row_max
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: gpu.all_reduce maxnumf
func.func @long_row_max(%m: memref<4x64xf32>, %t: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%m : memref<4x64xf32>) outs(%t : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maxnumf %acc, %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Dynamic loop ranges cannot be mapped.

#id = affine_map<(i) -> (i)>
func.func @dynamic(%x: memref<?xf32>, %y: memref<?xf32>) {
  // expected-error @+1 {{cannot map 'linalg.generic' to GPU kernels: its loop ranges (?) are not static}}
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}
