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

// -----

// Row fusion, a LayerNorm: the mean, the variance and the normalization over
// the rows of x (4 rows of 768) are one kernel with a block per row (256
// threads, each a strided share of the row). The fills of the two statistics
// are folded: each reduction starts from 0.0 in a register, and its result
// stays in a register for the ops after it (thread 0 also stores it). The free
// of the mean, between the ops, moves after the kernel.

#x = affine_map<(i, j) -> (i, j)>
#r = affine_map<(i, j) -> (i)>
#c = affine_map<(i, j) -> (j)>
// CHECK-LABEL: func.func @layernorm
// CHECK-SAME: (%[[X:.*]]: memref<4x768xf32>, %[[G:.*]]: memref<768xf32>, %[[Y:.*]]: memref<4x768xf32>)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[MEAN:.*]] = memref.alloc() : memref<4xf32>
// CHECK-DAG: %[[VAR:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[ROWS:.*]], {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[THREADS:.*]],
// CHECK: %[[PART:.*]] = scf.for %[[J:.*]] = %[[TX]] to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
// CHECK:   memref.load %[[X]]
// CHECK:   arith.addf
// CHECK: %[[SUM:.*]] = gpu.all_reduce add %[[PART]] uniform
// CHECK: %[[M:.*]] = arith.addf %[[SUM]], %[[ZERO]] : f32
// CHECK: scf.if
// CHECK:   memref.store %[[M]], %[[MEAN]]
// CHECK: %[[PART2:.*]] = scf.for %{{.*}} = %[[TX]] to
// CHECK-NOT: memref.load %[[MEAN]]
// CHECK:   arith.mulf %[[M]], %{{.*}} : f32
// CHECK: %[[SQ:.*]] = gpu.all_reduce add %[[PART2]] uniform
// CHECK: %[[V:.*]] = arith.addf %[[SQ]], %[[ZERO]] : f32
// CHECK: memref.store %[[V]], %[[VAR]]
// CHECK: scf.for %{{.*}} = %[[TX]] to
// CHECK-NOT: memref.load %[[MEAN]]
// CHECK-NOT: memref.load %[[VAR]]
// CHECK:   math.rsqrt
// CHECK:   memref.store %{{.*}}, %[[Y]]
// CHECK: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc %[[MEAN]]
// CHECK-NEXT: memref.dealloc %[[VAR]]
// CHECK-NOT: gpu.launch
// CHECK-NOT: linalg.
func.func @layernorm(%x: memref<4x768xf32>, %g: memref<768xf32>, %y: memref<4x768xf32>) {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 0.00130208337 : f32
  %eps = arith.constant 1.0e-5 : f32
  %mean = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%mean : memref<4xf32>)
  linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x768xf32>) outs(%mean : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  %var = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%var : memref<4xf32>)
  linalg.generic {indexing_maps = [#x, #r, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x, %mean : memref<4x768xf32>, memref<4xf32>) outs(%var : memref<4xf32>) {
  ^bb0(%a: f32, %m: f32, %acc: f32):
    %mu = arith.mulf %m, %inv : f32
    %d = arith.subf %a, %mu : f32
    %d2 = arith.mulf %d, %d : f32
    %s = arith.addf %d2, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x, #r, #r, #c, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean, %var, %g : memref<4x768xf32>, memref<4xf32>, memref<4xf32>, memref<768xf32>) outs(%y : memref<4x768xf32>) {
  ^bb0(%a: f32, %m: f32, %v: f32, %w: f32, %o: f32):
    %mu = arith.mulf %m, %inv : f32
    %var1 = arith.mulf %v, %inv : f32
    %ve = arith.addf %var1, %eps : f32
    %rs = math.rsqrt %ve : f32
    %d = arith.subf %a, %mu : f32
    %n = arith.mulf %d, %rs : f32
    %r = arith.mulf %n, %w : f32
    linalg.yield %r : f32
  }
  memref.dealloc %mean : memref<4xf32>
  memref.dealloc %var : memref<4xf32>
  return
}

// -----

// Row fusion, a softmax with its scale before it: one buffer holds the row's
// maximum, then (filled again) its sum; each fill starts its reduction in a
// register. 128 threads for rows of 128.

#x4 = affine_map<(b, h, i, j) -> (b, h, i, j)>
#r4 = affine_map<(b, h, i, j) -> (b, h, i)>
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[S:.*]]: memref<2x3x128x128xf32>, %[[P:.*]]: memref<2x3x128x128xf32>, %[[T:.*]]: memref<2x3x128xf32>)
// CHECK-DAG: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[C768:.*]] = arith.constant 768 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C768]], {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[C128]],
// CHECK: scf.for
// CHECK:   arith.mulf
// CHECK:   memref.store %{{.*}}, %[[P]]
// CHECK: gpu.all_reduce maxnumf
// CHECK: %[[MAX:.*]] = arith.maxnumf %{{.*}}, %[[NEG]] : f32
// CHECK: scf.for
// CHECK:   arith.subf %{{.*}}, %[[MAX]] : f32
// CHECK:   math.exp
// CHECK: gpu.all_reduce add
// CHECK: %[[SUM:.*]] = arith.addf %{{.*}}, %[[ZERO]] : f32
// CHECK: scf.for
// CHECK:   arith.divf %{{.*}}, %[[SUM]] : f32
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
func.func @softmax(%s: memref<2x3x128x128xf32>, %p: memref<2x3x128x128xf32>, %t: memref<2x3x128xf32>) {
  %scale = arith.constant 0.125 : f32
  %neg = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#x4, #x4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : memref<2x3x128x128xf32>) outs(%p : memref<2x3x128x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %scale : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%neg : f32) outs(%t : memref<2x3x128xf32>)
  linalg.generic {indexing_maps = [#x4, #r4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p : memref<2x3x128x128xf32>) outs(%t : memref<2x3x128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maxnumf %a, %acc : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#x4, #r4, #x4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %t : memref<2x3x128x128xf32>, memref<2x3x128xf32>) outs(%p : memref<2x3x128x128xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  }
  linalg.fill ins(%zero : f32) outs(%t : memref<2x3x128xf32>)
  linalg.generic {indexing_maps = [#x4, #r4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p : memref<2x3x128x128xf32>) outs(%t : memref<2x3x128xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.addf %a, %acc : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#x4, #r4, #x4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %t : memref<2x3x128x128xf32>, memref<2x3x128xf32>) outs(%p : memref<2x3x128x128xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.divf %a, %m : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// What a row kernel cannot hold, the ops before and after it are kernels of
// their own: a row sum whose next op reads its result transposed (another row's
// block would write it), and the op after it, which writes a view of the
// arena-like buffer %m overlapping the one the reduction reads.

#x2 = affine_map<(i, j) -> (i, j)>
#t2 = affine_map<(i, j) -> (j, i)>
#r2 = affine_map<(i, j) -> (i)>
#c2 = affine_map<(i, j) -> (j)>
// CHECK-LABEL: func.func @unfused
// CHECK: gpu.launch
// CHECK: gpu.all_reduce add
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK-NOT: gpu.all_reduce
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: gpu.all_reduce add
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK-NOT: gpu.all_reduce
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
func.func @unfused(%x: memref<64x64xf32>, %s: memref<64xf32>, %y: memref<64x64xf32>, %m: memref<32768xi8>) {
  linalg.generic {indexing_maps = [#x2, #r2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x64xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#x2, #c2, #x2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<64x64xf32>, memref<64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  }
  %c0 = arith.constant 0 : index
  %c8192 = arith.constant 8192 : index
  %a = memref.view %m[%c0][] : memref<32768xi8> to memref<64x64xf32>
  %b = memref.view %m[%c8192][] : memref<32768xi8> to memref<64x64xf32>
  linalg.generic {indexing_maps = [#x2, #r2], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<64x64xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#x2, #r2, #x2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<64x64xf32>, memref<64xf32>) outs(%b : memref<64x64xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = arith.mulf %v, %w : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// An op whose body reads a buffer it captures (a rotation reading its input
// at other coordinates, as tp-fuse-concatenations leaves it) joins no row
// kernel: the RMSNorm-like sum and scale of %x are one, the rotation of their
// result a kernel of its own (its load of %y in another row's elements would
// race with the blocks that write them).

#x2 = affine_map<(i, j) -> (i, j)>
#r2 = affine_map<(i, j) -> (i)>
// CHECK-LABEL: func.func @captured
// CHECK: gpu.launch
// CHECK: gpu.all_reduce add
// CHECK: memref.store %{{.*}}, %arg2
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK-NOT: gpu.all_reduce
// CHECK: memref.load %arg2
// CHECK: gpu.terminator
// The rotation's cost counts the buffer it loads (%y) beside the one it
// writes: 2 x 16 kB.
// CHECK-NEXT: } {tp.cost = {bytes = 32768 : i64
// CHECK-NOT: gpu.launch
func.func @captured(%x: memref<64x64xf32>, %s: memref<64xf32>, %y: memref<64x64xf32>, %z: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [#x2, #r2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x64xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#x2, #r2, #x2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<64x64xf32>, memref<64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#x2], iterator_types = ["parallel", "parallel"]}
      outs(%z : memref<64x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %k = arith.addi %j, %c32 : index
    %w = arith.remui %k, %c64 : index
    %v = memref.load %y[%i, %w] : memref<64x64xf32>
    linalg.yield %v : f32
  }
  return
}

// -----

// Views of one buffer whose bytes are disjoint do fuse. In a private function
// (a layer), two arguments may be views of one buffer its caller passes: the
// sum of %x stays apart from the op that writes %y; that op, the sum of %y and
// the op writing the allocation %t (no argument's memory) are one kernel.

#x2 = affine_map<(i, j) -> (i, j)>
#r2 = affine_map<(i, j) -> (i)>
// CHECK-LABEL: func.func @disjoint
// CHECK: gpu.launch
// CHECK: gpu.all_reduce add
// CHECK-NOT: gpu.launch
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK-LABEL: func.func private @layer
// CHECK: gpu.launch
// CHECK: gpu.all_reduce add
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %arg1
// CHECK: gpu.all_reduce add
// CHECK: memref.store %{{.*}}, %alloc_1
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
func.func @disjoint(%x: memref<64x64xf32>, %s: memref<64xf32>, %m: memref<32768xi8>) {
  %c0 = arith.constant 0 : index
  %c16384 = arith.constant 16384 : index
  %a = memref.view %m[%c0][] : memref<32768xi8> to memref<64x64xf32>
  %b = memref.view %m[%c16384][] : memref<32768xi8> to memref<64x64xf32>
  linalg.generic {indexing_maps = [#x2, #r2], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<64x64xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#x2, #r2, #x2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<64x64xf32>, memref<64xf32>) outs(%b : memref<64x64xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = arith.mulf %v, %w : f32
    linalg.yield %r : f32
  }
  return
}
func.func private @layer(%x: memref<64x64xf32>, %y: memref<64x64xf32>) {
  %s = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [#x2, #r2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x64xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#x2, #r2, #x2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<64x64xf32>, memref<64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = arith.mulf %v, %w : f32
    linalg.yield %r : f32
  }
  %t = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#x2, #r2], iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<64x64xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#x2, #r2, #x2], iterator_types = ["parallel", "parallel"]}
      ins(%y, %s : memref<64x64xf32>, memref<64xf32>) outs(%t : memref<64x64xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = arith.mulf %v, %w : f32
    linalg.yield %r : f32
  }
  memref.dealloc %s : memref<64xf32>
  memref.dealloc %t : memref<64x64xf32>
  return
}
