// RUN: tp-opt %s --split-input-file --tp-fuse-attention | FileCheck %s
// RUN: tp-opt %s --split-input-file --tp-fuse-attention=matmul-precision=high | FileCheck %s --check-prefix=HIGH
// RUN: tp-opt %s --split-input-file --tp-fuse-attention=tensor-cores=false | FileCheck %s --check-prefix=NOTC
// RUN: not tp-opt %s --split-input-file --tp-fuse-attention=matmul-precision=fast 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: tp-fuse-attention: matmul precision 'fast' is not one of highest, high, medium

// The GPT-2 attention on buffers (S[b, h, i, j] from Q[b, i, h, d] and
// K[b, j, h, d], scaled and masked in place, the softmax from a NaN-started
// maxnumf, O[b, i, h, e] from P and V[b, j, h, e]) becomes one kernel: a block
// per 16 queries of each (batch, head) (2 heads x 2 tiles of 20 queries), 4
// warps; the queries, a tile of keys (rows padded to 17), a tile of values and
// the weights in workgroup memory; per tile 3 barriers, and one after the
// queries; per row a max and a sum over the warp (5 shuffles each, 4 rows).
// The scores and the rows are gone, with their frees.

// CHECK-LABEL: func.func @gpt
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c4, %{{.*}} = %c1, %{{.*}} = %c1) threads({{.*}}) in (%{{.*}} = %c128, %{{.*}} = %c1, %{{.*}} = %c1) workgroup(%[[QS:.*]] : memref<16x16xf32, #gpu.address_space<workgroup>>, %[[KS:.*]] : memref<32x17xf32, #gpu.address_space<workgroup>>, %[[VS:.*]] : memref<32x16xf32, #gpu.address_space<workgroup>>, %[[PS:.*]] : memref<16x32xf32, #gpu.address_space<workgroup>>)
// CHECK: memref.load %arg0[
// CHECK: memref.store %{{.*}}, %[[QS]]
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[KS]]
// CHECK: memref.store %{{.*}}, %[[VS]]
// CHECK: gpu.barrier
// CHECK: memref.load %arg3[
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: math.exp
// CHECK: math.exp
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: memref.store %{{.*}}, %[[PS]]
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: scf.yield
// CHECK: arith.divf
// CHECK: memref.store %{{.*}}, %arg4[
// CHECK: gpu.terminator
// CHECK-NOT: linalg.
// CHECK-NOT: memref.dealloc
// CHECK: return

func.func @gpt(%q: memref<1x20x2x16xf32>, %k: memref<1x20x2x16xf32>, %v: memref<1x20x2x16xf32>, %mask: memref<20x20xf32>, %o: memref<1x20x2x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %nan = arith.constant 0xFFC00000 : f32
  %scale = arith.constant 0.25 : f32
  %s = memref.alloc() {alignment = 64 : i64} : memref<1x2x20x20xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x2x20x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, i, h, d)>, affine_map<(b, h, i, j, d) -> (b, j, h, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<1x20x2x16xf32>, memref<1x20x2x16xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (i, j)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : memref<1x2x20x20xf32>, memref<20x20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %a = arith.mulf %x, %scale : f32
    %r = arith.addf %a, %y : f32
    linalg.yield %r : f32
  }
  %rows = memref.alloc() {alignment = 64 : i64} : memref<1x2x20xf32>
  linalg.fill ins(%nan : f32) outs(%rows : memref<1x2x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x20x20xf32>) outs(%rows : memref<1x2x20xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maxnumf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<1x2x20x20xf32>, memref<1x2x20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
      %d = arith.subf %x, %m : f32
      %r = math.exp %d : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%rows : memref<1x2x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x20x20xf32>) outs(%rows : memref<1x2x20xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<1x2x20x20xf32>, memref<1x2x20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%x: f32, %t: f32, %out: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%o : memref<1x20x2x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, i, h, e, j) -> (b, h, i, j)>, affine_map<(b, i, h, e, j) -> (b, j, h, e)>, affine_map<(b, i, h, e, j) -> (b, i, h, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%s, %v : memref<1x2x20x20xf32>, memref<1x20x2x16xf32>) outs(%o : memref<1x20x2x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %rows : memref<1x2x20xf32>
  memref.dealloc %s : memref<1x2x20x20xf32>
  return
}

// -----
// Grouped-query attention (S[h, g, i, j] from Q[i, h, g, d] and K[j, h, d]: 2
// key/value heads, 3 query heads each): the queries read two dimensions the
// keys do not; the last (i) is the query dimension, and the group (g) a batch
// dimension, with the head (h): a block per 16 queries of each of the 6 query
// heads (6 x 2 tiles), the block's group index left out of the keys' and
// values' coordinates.

// CHECK-LABEL: func.func @grouped
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c12, %{{.*}} = %c1, %{{.*}} = %c1) threads({{.*}}) in (%{{.*}} = %c128,
// CHECK: %[[TILE:.*]] = arith.remui %{{.*}}, %c2 : index
// CHECK: %[[BATCH:.*]] = arith.divui %{{.*}}, %c2{{.*}} : index
// CHECK: %[[G:.*]] = arith.remui %[[BATCH]], %c3{{.*}} : index
// CHECK: %[[REST:.*]] = arith.divui %[[BATCH]], %c3{{.*}} : index
// CHECK: %[[H:.*]] = arith.remui %[[REST]], %c2{{.*}} : index
// CHECK: memref.load %arg0[%{{.*}}, %[[H]], %[[G]], %{{.*}}] : memref<20x2x3x16xf32>
// CHECK: scf.for
// CHECK: memref.load %arg1[%{{.*}}, %[[H]], %{{.*}}] : memref<20x2x16xf32>
// CHECK: memref.load %arg2[%{{.*}}, %[[H]], %{{.*}}] : memref<20x2x16xf32>
// CHECK: memref.store %{{.*}}, %arg4[%{{.*}}, %[[H]], %[[G]], %{{.*}}] : memref<20x2x3x16xf32>
// CHECK-NOT: linalg.
// CHECK: return

func.func @grouped(%q: memref<20x2x3x16xf32>, %k: memref<20x2x16xf32>, %v: memref<20x2x16xf32>, %mask: memref<20x20xf32>, %o: memref<20x2x3x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.25 : f32
  %s = memref.alloc() {alignment = 64 : i64} : memref<2x3x20x20xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<2x3x20x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(h, g, i, j, d) -> (i, h, g, d)>, affine_map<(h, g, i, j, d) -> (j, h, d)>, affine_map<(h, g, i, j, d) -> (h, g, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<20x2x3x16xf32>, memref<20x2x16xf32>) outs(%s : memref<2x3x20x20xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(h, g, i, j) -> (h, g, i, j)>, affine_map<(h, g, i, j) -> (i, j)>, affine_map<(h, g, i, j) -> (h, g, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : memref<2x3x20x20xf32>, memref<20x20xf32>) outs(%s : memref<2x3x20x20xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %a = arith.mulf %x, %scale : f32
    %r = arith.addf %a, %y : f32
    linalg.yield %r : f32
  }
  %rows = memref.alloc() {alignment = 64 : i64} : memref<2x3x20xf32>
  linalg.fill ins(%ninf : f32) outs(%rows : memref<2x3x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(h, g, i, j) -> (h, g, i, j)>, affine_map<(h, g, i, j) -> (h, g, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<2x3x20x20xf32>) outs(%rows : memref<2x3x20xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(h, g, i, j) -> (h, g, i, j)>, affine_map<(h, g, i, j) -> (h, g, i)>, affine_map<(h, g, i, j) -> (h, g, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<2x3x20x20xf32>, memref<2x3x20xf32>) outs(%s : memref<2x3x20x20xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
      %d = arith.subf %x, %m : f32
      %r = math.exp %d : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%rows : memref<2x3x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(h, g, i, j) -> (h, g, i, j)>, affine_map<(h, g, i, j) -> (h, g, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<2x3x20x20xf32>) outs(%rows : memref<2x3x20xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(h, g, i, j) -> (h, g, i, j)>, affine_map<(h, g, i, j) -> (h, g, i)>, affine_map<(h, g, i, j) -> (h, g, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<2x3x20x20xf32>, memref<2x3x20xf32>) outs(%s : memref<2x3x20x20xf32>) {
  ^bb0(%x: f32, %t: f32, %out: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%o : memref<20x2x3x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, h, g, e, j) -> (h, g, i, j)>, affine_map<(i, h, g, e, j) -> (j, h, e)>, affine_map<(i, h, g, e, j) -> (i, h, g, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%s, %v : memref<2x3x20x20xf32>, memref<20x2x16xf32>) outs(%o : memref<20x2x3x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %rows : memref<2x3x20xf32>
  memref.dealloc %s : memref<2x3x20x20xf32>
  return
}

// -----
// A key mask ([j]: padding) is one more operand of the pointwise op, read at
// the score's key.

// CHECK-LABEL: func.func @key_mask
// CHECK: gpu.launch
// CHECK: memref.load %arg3[%{{.*}}] : memref<20xf32>
// CHECK-NOT: linalg.generic

func.func @key_mask(%q: memref<1x20x2x16xf32>, %k: memref<1x20x2x16xf32>, %v: memref<1x20x2x16xf32>, %mask: memref<20xf32>, %o: memref<1x20x2x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %nan = arith.constant 0xFFC00000 : f32
  %scale = arith.constant 0.25 : f32
  %s = memref.alloc() {alignment = 64 : i64} : memref<1x2x20x20xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x2x20x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, i, h, d)>, affine_map<(b, h, i, j, d) -> (b, j, h, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<1x20x2x16xf32>, memref<1x20x2x16xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (j)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : memref<1x2x20x20xf32>, memref<20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %a = arith.mulf %x, %scale : f32
    %r = arith.addf %a, %y : f32
    linalg.yield %r : f32
  }
  %rows = memref.alloc() {alignment = 64 : i64} : memref<1x2x20xf32>
  linalg.fill ins(%nan : f32) outs(%rows : memref<1x2x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x20x20xf32>) outs(%rows : memref<1x2x20xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maxnumf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<1x2x20x20xf32>, memref<1x2x20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
      %d = arith.subf %x, %m : f32
      %r = math.exp %d : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%rows : memref<1x2x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x20x20xf32>) outs(%rows : memref<1x2x20xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<1x2x20x20xf32>, memref<1x2x20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%x: f32, %t: f32, %out: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%o : memref<1x20x2x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, i, h, e, j) -> (b, h, i, j)>, affine_map<(b, i, h, e, j) -> (b, j, h, e)>, affine_map<(b, i, h, e, j) -> (b, i, h, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%s, %v : memref<1x2x20x20xf32>, memref<1x20x2x16xf32>) outs(%o : memref<1x20x2x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %rows : memref<1x2x20xf32>
  memref.dealloc %s : memref<1x2x20x20xf32>
  return
}

// -----
// Scores read by anything else stay: the unfused path.

// CHECK-LABEL: func.func @scores_kept
// CHECK-NOT: gpu.launch
// CHECK: memref.copy

func.func @scores_kept(%q: memref<1x20x2x16xf32>, %k: memref<1x20x2x16xf32>, %v: memref<1x20x2x16xf32>, %mask: memref<20x20xf32>, %o: memref<1x20x2x16xf32>, %keep: memref<1x2x20x20xf32>) {
  %zero = arith.constant 0.0 : f32
  %nan = arith.constant 0xFFC00000 : f32
  %scale = arith.constant 0.25 : f32
  %s = memref.alloc() {alignment = 64 : i64} : memref<1x2x20x20xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x2x20x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, i, h, d)>, affine_map<(b, h, i, j, d) -> (b, j, h, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<1x20x2x16xf32>, memref<1x20x2x16xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (i, j)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : memref<1x2x20x20xf32>, memref<20x20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %a = arith.mulf %x, %scale : f32
    %r = arith.addf %a, %y : f32
    linalg.yield %r : f32
  }
  %rows = memref.alloc() {alignment = 64 : i64} : memref<1x2x20xf32>
  linalg.fill ins(%nan : f32) outs(%rows : memref<1x2x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x20x20xf32>) outs(%rows : memref<1x2x20xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maxnumf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<1x2x20x20xf32>, memref<1x2x20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
      %d = arith.subf %x, %m : f32
      %r = math.exp %d : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%rows : memref<1x2x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x20x20xf32>) outs(%rows : memref<1x2x20xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<1x2x20x20xf32>, memref<1x2x20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%x: f32, %t: f32, %out: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  }
  memref.copy %s, %keep : memref<1x2x20x20xf32> to memref<1x2x20x20xf32>
  linalg.fill ins(%zero : f32) outs(%o : memref<1x20x2x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, i, h, e, j) -> (b, h, i, j)>, affine_map<(b, i, h, e, j) -> (b, j, h, e)>, affine_map<(b, i, h, e, j) -> (b, i, h, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%s, %v : memref<1x2x20x20xf32>, memref<1x20x2x16xf32>) outs(%o : memref<1x20x2x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %rows : memref<1x2x20xf32>
  memref.dealloc %s : memref<1x2x20x20xf32>
  return
}

// -----
// A softmax without the maximum's subtraction is another function: unfused.

// CHECK-LABEL: func.func @no_max
// CHECK-NOT: gpu.launch
// CHECK-COUNT-7: linalg.generic

func.func @no_max(%q: memref<1x20x2x16xf32>, %k: memref<1x20x2x16xf32>, %v: memref<1x20x2x16xf32>, %mask: memref<20x20xf32>, %o: memref<1x20x2x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %nan = arith.constant 0xFFC00000 : f32
  %scale = arith.constant 0.25 : f32
  %s = memref.alloc() {alignment = 64 : i64} : memref<1x2x20x20xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x2x20x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, i, h, d)>, affine_map<(b, h, i, j, d) -> (b, j, h, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<1x20x2x16xf32>, memref<1x20x2x16xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (i, j)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : memref<1x2x20x20xf32>, memref<20x20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %a = arith.mulf %x, %scale : f32
    %r = arith.addf %a, %y : f32
    linalg.yield %r : f32
  }
  %rows = memref.alloc() {alignment = 64 : i64} : memref<1x2x20xf32>
  linalg.fill ins(%nan : f32) outs(%rows : memref<1x2x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x20x20xf32>) outs(%rows : memref<1x2x20xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maxnumf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<1x2x20x20xf32>, memref<1x2x20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
      %r = math.exp %x : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%rows : memref<1x2x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x20x20xf32>) outs(%rows : memref<1x2x20xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<1x2x20x20xf32>, memref<1x2x20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%x: f32, %t: f32, %out: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%o : memref<1x20x2x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, i, h, e, j) -> (b, h, i, j)>, affine_map<(b, i, h, e, j) -> (b, j, h, e)>, affine_map<(b, i, h, e, j) -> (b, i, h, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%s, %v : memref<1x2x20x20xf32>, memref<1x20x2x16xf32>) outs(%o : memref<1x20x2x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %rows : memref<1x2x20xf32>
  memref.dealloc %s : memref<1x2x20x20xf32>
  return
}

// -----
// A head dimension over 128 does not fit the tiles: unfused.

// CHECK-LABEL: func.func @wide_head
// CHECK-NOT: gpu.launch
// CHECK-COUNT-7: linalg.generic

func.func @wide_head(%q: memref<1x20x2x160xf32>, %k: memref<1x20x2x160xf32>, %v: memref<1x20x2x160xf32>, %mask: memref<20x20xf32>, %o: memref<1x20x2x160xf32>) {
  %zero = arith.constant 0.0 : f32
  %nan = arith.constant 0xFFC00000 : f32
  %scale = arith.constant 0.25 : f32
  %s = memref.alloc() {alignment = 64 : i64} : memref<1x2x20x20xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x2x20x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, i, h, d)>, affine_map<(b, h, i, j, d) -> (b, j, h, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<1x20x2x160xf32>, memref<1x20x2x160xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (i, j)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : memref<1x2x20x20xf32>, memref<20x20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %a = arith.mulf %x, %scale : f32
    %r = arith.addf %a, %y : f32
    linalg.yield %r : f32
  }
  %rows = memref.alloc() {alignment = 64 : i64} : memref<1x2x20xf32>
  linalg.fill ins(%nan : f32) outs(%rows : memref<1x2x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x20x20xf32>) outs(%rows : memref<1x2x20xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maxnumf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<1x2x20x20xf32>, memref<1x2x20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
      %d = arith.subf %x, %m : f32
      %r = math.exp %d : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%rows : memref<1x2x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x20x20xf32>) outs(%rows : memref<1x2x20xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<1x2x20x20xf32>, memref<1x2x20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%x: f32, %t: f32, %out: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%o : memref<1x20x2x160xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, i, h, e, j) -> (b, h, i, j)>, affine_map<(b, i, h, e, j) -> (b, j, h, e)>, affine_map<(b, i, h, e, j) -> (b, i, h, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%s, %v : memref<1x2x20x20xf32>, memref<1x20x2x160xf32>) outs(%o : memref<1x20x2x160xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %rows : memref<1x2x20xf32>
  memref.dealloc %s : memref<1x2x20x20xf32>
  return
}

// -----

// 2 heads of 128 over 2048 tokens in bf16: the kernel's contractions run on
// tensor cores as the GEMMs' would, and it never writes the 16 MB of scores
// the unfused path reads four times: fused, into the mma.sync kernel. A block
// per 64 queries (32 per head) of 128 threads; the keys staged key-major and
// the values feature-major, each row padded by 8; per tile of 64 keys, 8 x 8
// mma.sync for the scores (8 key tiles of 8, head dimension in 8 steps of 16)
// and 16 x 4 for the weighted sum (16 feature tiles of 8, the keys in 4 steps
// of 16); the row statistics meet over the quads of lanes (shuffles by 1 and
// 2).

// Without tensor cores (before sm_80) the kernel's multiply-adds would run on
// the CUDA cores, slower than the GEMMs on tensor cores: unfused.

// CHECK-LABEL: func.func @long_bf16
// NOTC-LABEL: func.func @long_bf16
// NOTC-NOT: gpu.launch
// NOTC-LABEL: func.func @long_grouped_bf16
// NOTC-NOT: gpu.launch
// NOTC-LABEL: func.func @long_f32
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c64, {{.*}}) threads({{.*}}) in ({{.*}} = %c128, {{.*}}) workgroup({{.*}} : memref<64x136xbf16, #gpu.address_space<workgroup>>, {{.*}} : memref<128x72xbf16, #gpu.address_space<workgroup>>)
// The queries, keys and values are staged 16 bytes a thread (aligned: their
// head dimension is innermost, of unit stride).
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<1x2048x2x128xbf16>, vector<8xbf16>
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<64x136xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<1x2048x2x128xbf16>, vector<8xbf16>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<1x2048x2x128xbf16>, vector<8xbf16>
// CHECK: vector.extract %{{.*}}[7] : bf16 from vector<8xbf16>
// CHECK-COUNT-64: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: math.exp
// CHECK-COUNT-64: nvgpu.mma.sync
// CHECK-NOT: nvgpu.mma.sync
// CHECK: gpu.shuffle xor %{{.*}}, %c1_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c2_i32
// CHECK-NOT: linalg.generic

func.func @long_bf16(%q: memref<1x2048x2x128xbf16>, %k: memref<1x2048x2x128xbf16>, %v: memref<1x2048x2x128xbf16>, %mask: memref<2048x2048xbf16>, %o: memref<1x2048x2x128xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %nan = arith.constant 0xFFC0 : bf16
  %scale = arith.constant 0.25 : bf16
  %s = memref.alloc() {alignment = 64 : i64} : memref<1x2x2048x2048xbf16>
  linalg.fill ins(%zero : bf16) outs(%s : memref<1x2x2048x2048xbf16>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, i, h, d)>, affine_map<(b, h, i, j, d) -> (b, j, h, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<1x2048x2x128xbf16>, memref<1x2048x2x128xbf16>) outs(%s : memref<1x2x2048x2048xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %acc: bf16):
    %m = arith.mulf %a, %b : bf16
    %r = arith.addf %acc, %m : bf16
    linalg.yield %r : bf16
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (i, j)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : memref<1x2x2048x2048xbf16>, memref<2048x2048xbf16>) outs(%s : memref<1x2x2048x2048xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %out: bf16):
    %a = arith.mulf %x, %scale : bf16
    %r = arith.addf %a, %y : bf16
    linalg.yield %r : bf16
  }
  %rows = memref.alloc() {alignment = 64 : i64} : memref<1x2x2048xbf16>
  linalg.fill ins(%nan : bf16) outs(%rows : memref<1x2x2048xbf16>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x2048x2048xbf16>) outs(%rows : memref<1x2x2048xbf16>) {
  ^bb0(%x: bf16, %acc: bf16):
    %r = arith.maxnumf %x, %acc : bf16
    linalg.yield %r : bf16
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<1x2x2048x2048xbf16>, memref<1x2x2048xbf16>) outs(%s : memref<1x2x2048x2048xbf16>) {
  ^bb0(%x: bf16, %m: bf16, %out: bf16):
      %d = arith.subf %x, %m : bf16
      %r = math.exp %d : bf16
    linalg.yield %r : bf16
  }
  linalg.fill ins(%zero : bf16) outs(%rows : memref<1x2x2048xbf16>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x2048x2048xbf16>) outs(%rows : memref<1x2x2048xbf16>) {
  ^bb0(%x: bf16, %acc: bf16):
    %r = arith.addf %x, %acc : bf16
    linalg.yield %r : bf16
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<1x2x2048x2048xbf16>, memref<1x2x2048xbf16>) outs(%s : memref<1x2x2048x2048xbf16>) {
  ^bb0(%x: bf16, %t: bf16, %out: bf16):
    %r = arith.divf %x, %t : bf16
    linalg.yield %r : bf16
  }
  linalg.fill ins(%zero : bf16) outs(%o : memref<1x2048x2x128xbf16>)
  linalg.generic {indexing_maps = [affine_map<(b, i, h, e, j) -> (b, h, i, j)>, affine_map<(b, i, h, e, j) -> (b, j, h, e)>, affine_map<(b, i, h, e, j) -> (b, i, h, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%s, %v : memref<1x2x2048x2048xbf16>, memref<1x2048x2x128xbf16>) outs(%o : memref<1x2048x2x128xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %acc: bf16):
    %m = arith.mulf %a, %b : bf16
    %r = arith.addf %acc, %m : bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %rows : memref<1x2x2048xbf16>
  memref.dealloc %s : memref<1x2x2048x2048xbf16>
  return
}

// -----

// The same in grouped-query attention (2 query heads over 1 key/value head):
// fused as above, the group's query heads a batch dimension of the grid.

// CHECK-LABEL: func.func @long_grouped_bf16
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c64, {{.*}})
// CHECK-COUNT-128: nvgpu.mma.sync
// CHECK-NOT: linalg.generic

func.func @long_grouped_bf16(%q: memref<1x2048x1x2x128xbf16>, %k: memref<1x2048x1x128xbf16>, %v: memref<1x2048x1x128xbf16>, %mask: memref<2048x2048xbf16>, %o: memref<1x2048x1x2x128xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %nan = arith.constant 0xFFC0 : bf16
  %scale = arith.constant 0.25 : bf16
  %s = memref.alloc() {alignment = 64 : i64} : memref<1x1x2x2048x2048xbf16>
  linalg.fill ins(%zero : bf16) outs(%s : memref<1x1x2x2048x2048xbf16>)
  linalg.generic {indexing_maps = [affine_map<(b, h, g, i, j, d) -> (b, i, h, g, d)>, affine_map<(b, h, g, i, j, d) -> (b, j, h, d)>, affine_map<(b, h, g, i, j, d) -> (b, h, g, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<1x2048x1x2x128xbf16>, memref<1x2048x1x128xbf16>) outs(%s : memref<1x1x2x2048x2048xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %acc: bf16):
    %m = arith.mulf %a, %b : bf16
    %r = arith.addf %acc, %m : bf16
    linalg.yield %r : bf16
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, g, i, j) -> (b, h, g, i, j)>, affine_map<(b, h, g, i, j) -> (i, j)>, affine_map<(b, h, g, i, j) -> (b, h, g, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : memref<1x1x2x2048x2048xbf16>, memref<2048x2048xbf16>) outs(%s : memref<1x1x2x2048x2048xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %out: bf16):
    %a = arith.mulf %x, %scale : bf16
    %r = arith.addf %a, %y : bf16
    linalg.yield %r : bf16
  }
  %rows = memref.alloc() {alignment = 64 : i64} : memref<1x1x2x2048xbf16>
  linalg.fill ins(%nan : bf16) outs(%rows : memref<1x1x2x2048xbf16>)
  linalg.generic {indexing_maps = [affine_map<(b, h, g, i, j) -> (b, h, g, i, j)>, affine_map<(b, h, g, i, j) -> (b, h, g, i)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x1x2x2048x2048xbf16>) outs(%rows : memref<1x1x2x2048xbf16>) {
  ^bb0(%x: bf16, %acc: bf16):
    %r = arith.maxnumf %x, %acc : bf16
    linalg.yield %r : bf16
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, g, i, j) -> (b, h, g, i, j)>, affine_map<(b, h, g, i, j) -> (b, h, g, i)>, affine_map<(b, h, g, i, j) -> (b, h, g, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<1x1x2x2048x2048xbf16>, memref<1x1x2x2048xbf16>) outs(%s : memref<1x1x2x2048x2048xbf16>) {
  ^bb0(%x: bf16, %m: bf16, %out: bf16):
      %d = arith.subf %x, %m : bf16
      %r = math.exp %d : bf16
    linalg.yield %r : bf16
  }
  linalg.fill ins(%zero : bf16) outs(%rows : memref<1x1x2x2048xbf16>)
  linalg.generic {indexing_maps = [affine_map<(b, h, g, i, j) -> (b, h, g, i, j)>, affine_map<(b, h, g, i, j) -> (b, h, g, i)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x1x2x2048x2048xbf16>) outs(%rows : memref<1x1x2x2048xbf16>) {
  ^bb0(%x: bf16, %acc: bf16):
    %r = arith.addf %x, %acc : bf16
    linalg.yield %r : bf16
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, g, i, j) -> (b, h, g, i, j)>, affine_map<(b, h, g, i, j) -> (b, h, g, i)>, affine_map<(b, h, g, i, j) -> (b, h, g, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<1x1x2x2048x2048xbf16>, memref<1x1x2x2048xbf16>) outs(%s : memref<1x1x2x2048x2048xbf16>) {
  ^bb0(%x: bf16, %t: bf16, %out: bf16):
    %r = arith.divf %x, %t : bf16
    linalg.yield %r : bf16
  }
  linalg.fill ins(%zero : bf16) outs(%o : memref<1x2048x1x2x128xbf16>)
  linalg.generic {indexing_maps = [affine_map<(b, i, h, g, e, j) -> (b, h, g, i, j)>, affine_map<(b, i, h, g, e, j) -> (b, j, h, e)>, affine_map<(b, i, h, g, e, j) -> (b, i, h, g, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%s, %v : memref<1x1x2x2048x2048xbf16>, memref<1x2048x1x128xbf16>) outs(%o : memref<1x2048x1x2x128xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %acc: bf16):
    %m = arith.mulf %a, %b : bf16
    %r = arith.addf %acc, %m : bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %rows : memref<1x1x2x2048xbf16>
  memref.dealloc %s : memref<1x1x2x2048x2048xbf16>
  return
}
// -----

// The same in f32: the GEMMs run on the CUDA cores too at the default
// precision, and the kernel saves the scores' trips: fused. At TF32 (matmul
// precision high) the GEMMs are faster: unfused.

// CHECK-LABEL: func.func @long_f32
// CHECK: gpu.launch
// HIGH-LABEL: func.func @long_f32
// HIGH-NOT: gpu.launch

func.func @long_f32(%q: memref<1x2048x2x128xf32>, %k: memref<1x2048x2x128xf32>, %v: memref<1x2048x2x128xf32>, %mask: memref<2048x2048xf32>, %o: memref<1x2048x2x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %nan = arith.constant 0xFFC00000 : f32
  %scale = arith.constant 0.25 : f32
  %s = memref.alloc() {alignment = 64 : i64} : memref<1x2x2048x2048xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x2x2048x2048xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, i, h, d)>, affine_map<(b, h, i, j, d) -> (b, j, h, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<1x2048x2x128xf32>, memref<1x2048x2x128xf32>) outs(%s : memref<1x2x2048x2048xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (i, j)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : memref<1x2x2048x2048xf32>, memref<2048x2048xf32>) outs(%s : memref<1x2x2048x2048xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %a = arith.mulf %x, %scale : f32
    %r = arith.addf %a, %y : f32
    linalg.yield %r : f32
  }
  %rows = memref.alloc() {alignment = 64 : i64} : memref<1x2x2048xf32>
  linalg.fill ins(%nan : f32) outs(%rows : memref<1x2x2048xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x2048x2048xf32>) outs(%rows : memref<1x2x2048xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maxnumf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<1x2x2048x2048xf32>, memref<1x2x2048xf32>) outs(%s : memref<1x2x2048x2048xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
      %d = arith.subf %x, %m : f32
      %r = math.exp %d : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%rows : memref<1x2x2048xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x2048x2048xf32>) outs(%rows : memref<1x2x2048xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<1x2x2048x2048xf32>, memref<1x2x2048xf32>) outs(%s : memref<1x2x2048x2048xf32>) {
  ^bb0(%x: f32, %t: f32, %out: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%o : memref<1x2048x2x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, i, h, e, j) -> (b, h, i, j)>, affine_map<(b, i, h, e, j) -> (b, j, h, e)>, affine_map<(b, i, h, e, j) -> (b, i, h, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%s, %v : memref<1x2x2048x2048xf32>, memref<1x2048x2x128xf32>) outs(%o : memref<1x2048x2x128xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %rows : memref<1x2x2048xf32>
  memref.dealloc %s : memref<1x2x2048x2048xf32>
  return
}

// -----

// In a private function (a layer its callers pass views to) the output may
// share memory with the keys and values, which every block reads while others
// write their rows: unfused.

// CHECK-LABEL: func.func private @aliased
// CHECK-NOT: gpu.launch
// CHECK-COUNT-7: linalg.generic

func.func private @aliased(%q: memref<1x20x2x16xf32>, %k: memref<1x20x2x16xf32>, %v: memref<1x20x2x16xf32>, %mask: memref<20x20xf32>, %o: memref<1x20x2x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %nan = arith.constant 0xFFC00000 : f32
  %scale = arith.constant 0.25 : f32
  %s = memref.alloc() {alignment = 64 : i64} : memref<1x2x20x20xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x2x20x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, i, h, d)>, affine_map<(b, h, i, j, d) -> (b, j, h, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<1x20x2x16xf32>, memref<1x20x2x16xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (i, j)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : memref<1x2x20x20xf32>, memref<20x20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %a = arith.mulf %x, %scale : f32
    %r = arith.addf %a, %y : f32
    linalg.yield %r : f32
  }
  %rows = memref.alloc() {alignment = 64 : i64} : memref<1x2x20xf32>
  linalg.fill ins(%nan : f32) outs(%rows : memref<1x2x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x20x20xf32>) outs(%rows : memref<1x2x20xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maxnumf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<1x2x20x20xf32>, memref<1x2x20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
      %d = arith.subf %x, %m : f32
      %r = math.exp %d : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%rows : memref<1x2x20xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x20x20xf32>) outs(%rows : memref<1x2x20xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j) -> (b, h, i, j)>, affine_map<(b, h, i, j) -> (b, h, i)>, affine_map<(b, h, i, j) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %rows : memref<1x2x20x20xf32>, memref<1x2x20xf32>) outs(%s : memref<1x2x20x20xf32>) {
  ^bb0(%x: f32, %t: f32, %out: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%o : memref<1x20x2x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, i, h, e, j) -> (b, h, i, j)>, affine_map<(b, i, h, e, j) -> (b, j, h, e)>, affine_map<(b, i, h, e, j) -> (b, i, h, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%s, %v : memref<1x2x20x20xf32>, memref<1x20x2x16xf32>) outs(%o : memref<1x20x2x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %rows : memref<1x2x20xf32>
  memref.dealloc %s : memref<1x2x20x20xf32>
  return
}
