// RUN: tp-opt %s --tp-map-linalg-to-gpu --split-input-file --verify-diagnostics | FileCheck %s

// Pointwise: one thread per element, 256 per block, the innermost loop fastest
// (consecutive threads, consecutive elements), the last block bounds-checked.

#id = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @pointwise
// CHECK-DAG: %[[BLOCKS:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[THREADS:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[BLOCKS]], {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[THREADS]],
// CHECK: %[[START:.*]] = arith.muli %[[BX]], %{{.*}} : index
// CHECK: %[[LINEAR:.*]] = arith.addi %[[START]], %[[TX]] : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[LINEAR]], %{{.*}} : index
// CHECK: scf.if %[[IN]] {
// CHECK: %[[J:.*]] = arith.remui %[[LINEAR]], %[[C1000:.*]] : index
// CHECK: %[[I:.*]] = arith.divui %[[LINEAR]], %[[C1000]] : index
// CHECK: memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<4x1000xf32>
// CHECK: math.exp
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK-NOT: linalg.generic
func.func @pointwise(%x: memref<4x1000xf32>, %y: memref<4x1000xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x1000xf32>) outs(%y : memref<4x1000xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
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
