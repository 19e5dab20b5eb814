// RUN: tp-opt %s --tp-plan-arena | FileCheck %s

// An entry point's own buffers become views of one arena, its last argument:
// %a and %b are never alive together and share offset 0; %c lives with %b and
// takes the bytes after it (64-byte aligned). A buffer made in a loop, one of
// dynamic size and one that is never freed keep their allocations. The
// manifest gets the arena's size.

// CHECK: tp.manifest = "tprt-manifest 4\0Aabi 4\0Atarget cpu\0Afunc \22f\22 1 0\0Amesh - 0\0Aarg 0 f32 1 8 s=|\0Aarena 128\0Aend\0A"
// CHECK-LABEL: func.func @f(
// CHECK-SAME: %[[X:.*]]: memref<8xf32>, %[[ARENA:.*]]: memref<128xi8>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[A:.*]] = memref.view %[[ARENA]][%[[C0]]][] : memref<128xi8> to memref<8xf32>
// CHECK: memref.copy %[[X]], %[[A]]
// CHECK: %[[C0B:.*]] = arith.constant 0 : index
// CHECK: %[[B:.*]] = memref.view %[[ARENA]][%[[C0B]]][] : memref<128xi8> to memref<16xf32>
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[C:.*]] = memref.view %[[ARENA]][%[[C64]]][] : memref<128xi8> to memref<4xf32>
// CHECK-NOT: memref.dealloc %[[A]]
// CHECK: scf.for
// CHECK: memref.alloc() : memref<2xf32>
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: memref.alloc() : memref<3xf32>
// CHECK: return
module attributes {tp.manifest = "tprt-manifest 4\0Aabi 4\0Atarget cpu\0Afunc \22f\22 1 0\0Amesh - 0\0Aarg 0 f32 1 8 s=|\0Aend\0A"} {
  func.func @f(%x: memref<8xf32>) {
    %a = memref.alloc() : memref<8xf32>
    memref.copy %x, %a : memref<8xf32> to memref<8xf32>
    memref.dealloc %a : memref<8xf32>
    %b = memref.alloc() : memref<16xf32>
    %c = memref.alloc() : memref<4xf32>
    memref.dealloc %c : memref<4xf32>
    memref.dealloc %b : memref<16xf32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    scf.for %i = %c0 to %c2 step %c1 {
      %t = memref.alloc() : memref<2xf32>
      memref.dealloc %t : memref<2xf32>
    }
    %d = memref.alloc(%c2) : memref<?xf32>
    memref.dealloc %d : memref<?xf32>
    %kept = memref.alloc() : memref<3xf32>
    return
  }
}
