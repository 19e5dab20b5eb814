// RUN: tp-opt %s --tp-outline-parallel-loops --split-input-file | FileCheck %s
// RUN: tp-opt %s --tp-outline-parallel-loops="min-bytes=1000000000" --split-input-file | FileCheck %s --check-prefix=BIG

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A row-tiled sum (tp-fuse-reductions' tiles): the nest's 4 x 64 tiles are
// one range of 256, the innermost loop fastest, and its scratch is each
// iteration's own, on the stack. Its allocation outside goes.

// CHECK-LABEL: func.func @nest(
// CHECK-SAME:      %[[X:.*]]: memref<4x128x768xf32>, %[[Y:.*]]: memref<4x128xf32>)
// CHECK-NOT:     memref.alloc
// CHECK:         %[[N:.*]] = arith.constant 256 : index
// CHECK:         call @nest_parallel_0(%{{.*}}, %[[N]], %[[X]], %[[Y]])
// CHECK-NOT:     memref.dealloc
// CHECK:         return
// CHECK:       func.func private @nest_parallel_0(%[[A:.*]]: index, %[[B:.*]]: index, %[[X2:.*]]: memref<4x128x768xf32>, %[[Y2:.*]]: memref<4x128xf32>) attributes {tp.parallel_body}
// CHECK:         %[[ACC:.*]] = memref.alloca() {alignment = 64 : i64} : memref<2xf32>
// CHECK:         scf.for %[[L:.*]] = %[[A]] to %[[B]]
// CHECK:           %[[R:.*]] = arith.remui %[[L]], %[[C64:.*]] : index
// CHECK:           %[[I:.*]] = arith.divui %[[L]], %[[C64]] : index
// CHECK:           %[[J:.*]] = arith.muli %[[R]], %{{.*}} : index
// CHECK:           memref.subview %[[X2]][%[[I]], %[[J]], 0] [1, 2, 768]
// CHECK:           linalg.fill {{.*}} outs(%[[ACC]]
// CHECK:           linalg.generic {{.*}} outs(%[[ACC]]
// CHECK:           %[[OUT:.*]] = memref.subview %[[Y2]][%[[I]], %[[J]]] [1, 2]
// CHECK:           memref.copy %[[ACC]], %[[OUT]]
// CHECK:         }
// CHECK-NEXT:    return

// BIG-LABEL: func.func @nest(
// BIG:         scf.for
// BIG-NOT:     call
// BIG:       return
func.func @nest(%x: memref<4x128x768xf32>, %y: memref<4x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() {alignment = 64 : i64} : memref<2xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c128 step %c2 {
      %rows = memref.subview %x[%i, %j, 0] [1, 2, 768] [1, 1, 1] : memref<4x128x768xf32> to memref<2x768xf32, strided<[768, 1], offset: ?>>
      linalg.fill ins(%zero : f32) outs(%acc : memref<2xf32>)
      linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%rows : memref<2x768xf32, strided<[768, 1], offset: ?>>) outs(%acc : memref<2xf32>) {
      ^bb0(%in: f32, %out: f32):
        %s = arith.addf %in, %out : f32
        linalg.yield %s : f32
      }
      %out = memref.subview %y[%i, %j] [1, 2] [1, 1] : memref<4x128xf32> to memref<2xf32, strided<[1], offset: ?>>
      memref.copy %acc, %out : memref<2xf32> to memref<2xf32, strided<[1], offset: ?>>
    } {tp.parallel}
  } {tp.parallel}
  memref.dealloc %acc : memref<2xf32>
  return
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// Scratch of more than 64 KiB is allocated on the heap, once a share. A
// view of a buffer the nest reads is made again inside: its layout is not
// the identity, which a function argument needs.

// CHECK-LABEL: func.func @heap_scratch(
// CHECK-SAME:      %[[X:.*]]: memref<64x4x8192xf32>
// CHECK:         call @heap_scratch_parallel_0(%{{.*}}, %{{.*}}, %[[X]], %{{.*}})
// CHECK:       func.func private @heap_scratch_parallel_0(
// CHECK:         %[[T:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x8192xf32>
// CHECK:         %[[V:.*]] = memref.subview %{{.*}}[0, 0, 0] [32, 4, 8192]
// CHECK:         scf.for
// CHECK:           memref.subview %[[V]][%{{.*}}, 0, 0]
// CHECK:           linalg.generic {{.*}} outs(%[[T]]
// CHECK:         memref.dealloc %[[T]]
// CHECK-NEXT:    return
func.func @heap_scratch(%x: memref<64x4x8192xf32>, %y: memref<32x4x8192xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %half = memref.subview %x[0, 0, 0] [32, 4, 8192] [1, 1, 1] : memref<64x4x8192xf32> to memref<32x4x8192xf32, strided<[32768, 8192, 1]>>
  %t = memref.alloc() {alignment = 64 : i64} : memref<4x8192xf32>
  scf.for %i = %c0 to %c32 step %c1 {
    %in = memref.subview %half[%i, 0, 0] [1, 4, 8192] [1, 1, 1] : memref<32x4x8192xf32, strided<[32768, 8192, 1]>> to memref<4x8192xf32, strided<[8192, 1], offset: ?>>
    linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%in : memref<4x8192xf32, strided<[8192, 1], offset: ?>>) outs(%t : memref<4x8192xf32>) {
    ^bb0(%a: f32, %o: f32):
      %e = math.exp %a : f32
      linalg.yield %e : f32
    }
    %out = memref.subview %y[%i, 0, 0] [1, 4, 8192] [1, 1, 1] : memref<32x4x8192xf32> to memref<4x8192xf32, strided<[8192, 1], offset: ?>>
    memref.copy %t, %out : memref<4x8192xf32> to memref<4x8192xf32, strided<[8192, 1], offset: ?>>
  } {tp.parallel}
  memref.dealloc %t : memref<4x8192xf32>
  return
}

// -----

// Loops without tp.parallel, or whose iterations call anything, stay.

// CHECK-LABEL: func.func @not_parallel(
// CHECK-NOT:     call @
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             func.call @tprt_rt_gemm
func.func private @tprt_rt_gemm(memref<512x768xf32>)
func.func @not_parallel(%x: memref<512x768xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c512 step %c1 {
    %row = memref.subview %x[%i, 0] [1, 768] [1, 1] : memref<512x768xf32> to memref<768xf32, strided<[1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%row : memref<768xf32, strided<[1], offset: ?>>)
  }
  scf.for %i = %c0 to %c512 step %c1 {
    %row = memref.subview %x[%i, 0] [1, 768] [1, 1] : memref<512x768xf32> to memref<768xf32, strided<[1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%row : memref<768xf32, strided<[1], offset: ?>>)
    func.call @tprt_rt_gemm(%x) : (memref<512x768xf32>) -> ()
  } {tp.parallel}
  return
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#last = affine_map<(d0, d1, d2) -> (d2)>

// An elementwise op is split along its parallel loop with the most
// iterations that is not the innermost: here the second. The bias, which
// does not move along it, is read whole; the constant it uses is made again.

// CHECK-LABEL: func.func @bias_gelu(
// CHECK-SAME:      %[[X:.*]]: memref<2x256x3072xf32>, %[[B:.*]]: memref<3072xf32>, %[[Y:.*]]: memref<2x256x3072xf32>)
// CHECK:         %[[N:.*]] = arith.constant 256 : index
// CHECK:         call @bias_gelu_parallel_0(%{{.*}}, %[[N]], %[[X]], %[[B]], %[[Y]])
// CHECK-NOT:     linalg.generic
// CHECK:       func.func private @bias_gelu_parallel_0(%[[A:.*]]: index, %[[E:.*]]: index, %[[X2:.*]]: memref<2x256x3072xf32>, %[[B2:.*]]: memref<3072xf32>, %[[Y2:.*]]: memref<2x256x3072xf32>) attributes {tp.parallel_body}
// CHECK:         %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:         %[[SIZE:.*]] = arith.subi %[[E]], %[[A]] : index
// CHECK:         %[[XS:.*]] = memref.subview %[[X2]][0, %[[A]], 0] [2, %[[SIZE]], 3072] [1, 1, 1]
// CHECK:         %[[YS:.*]] = memref.subview %[[Y2]][0, %[[A]], 0] [2, %[[SIZE]], 3072] [1, 1, 1]
// CHECK:         linalg.generic {{.*}} ins(%[[XS]], %[[B2]] : {{.*}}) outs(%[[YS]] :
// CHECK:           arith.mulf %{{.*}}, %[[HALF]]
// CHECK:         return
func.func @bias_gelu(%x: memref<2x256x3072xf32>, %b: memref<3072xf32>, %y: memref<2x256x3072xf32>) {
  %half = arith.constant 0.5 : f32
  linalg.generic {indexing_maps = [#id3, #last, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %b : memref<2x256x3072xf32>, memref<3072xf32>) outs(%y : memref<2x256x3072xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %s = arith.addf %v, %c : f32
    %h = arith.mulf %s, %half : f32
    linalg.yield %h : f32
  }
  return
}

// -----

// A one-dimensional op is split along its only loop; a fill keeps its
// scalar.

// CHECK-LABEL: func.func @flat(
// CHECK:         call @flat_parallel_0(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (index, index, f32, memref<262144xf32>)
// CHECK:       func.func private @flat_parallel_0(%[[A:.*]]: index, %[[E:.*]]: index, %[[V:.*]]: f32, %[[Y:.*]]: memref<262144xf32>)
// CHECK:         %[[YS:.*]] = memref.subview %[[Y]][%[[A]]] [%{{.*}}] [1]
// CHECK:         linalg.fill ins(%[[V]] : f32) outs(%[[YS]] :
func.func @flat(%v: f32, %y: memref<262144xf32>) {
  linalg.fill ins(%v : f32) outs(%y : memref<262144xf32>)
  return
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>

// Stay: an op below min-bytes; an op reading its indices (its parts would
// see other ones); a reduction over every loop; an operand whose layout is
// not the identity and is no view the function can make again.

// CHECK-LABEL: func.func @stay(
// CHECK-NOT:     @stay_parallel
func.func @stay(%small: memref<8x8xf32>, %x: memref<512x768xf32>, %s: memref<f32>,
                %strided: memref<512x768xf32, strided<[1024, 1]>>) {
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%small : memref<8x8xf32>) outs(%small : memref<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%x : memref<512x768xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %n = arith.index_cast %i : index to i32
    %f = arith.sitofp %n : i32 to f32
    linalg.yield %f : f32
  }
  linalg.generic {indexing_maps = [#id2, #none], iterator_types = ["reduction", "reduction"]} ins(%x : memref<512x768xf32>) outs(%s : memref<f32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%strided : memref<512x768xf32, strided<[1024, 1]>>) outs(%x : memref<512x768xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d2)>

// An output that does not move along a parallel loop (each of its rows
// writes the same elements, the last one wins) is not split along it, though
// it has the most iterations: the first loop is.

// CHECK-LABEL: func.func @overwrite(
// CHECK:         call @overwrite_parallel_0(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (index, index, memref<4x512x768xf32>, memref<4x768xf32>)
// CHECK:       func.func private @overwrite_parallel_0(%[[A:.*]]: index, %[[B:.*]]: index, %[[X:.*]]: memref<4x512x768xf32>, %[[Y:.*]]: memref<4x768xf32>)
// CHECK:         memref.subview %[[X]][%[[A]], 0, 0] [%{{.*}}, 512, 768]
// CHECK:         memref.subview %[[Y]][%[[A]], 0] [%{{.*}}, 768]
func.func @overwrite(%x: memref<4x512x768xf32>, %y: memref<4x768xf32>) {
  linalg.generic {indexing_maps = [#id3, #out], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : memref<4x512x768xf32>) outs(%y : memref<4x768xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
