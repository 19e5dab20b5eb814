// RUN: tp-opt %s --tp-mark-host-reads --split-input-file --verify-diagnostics | FileCheck %s

// The host code reads @append_at's position (buffer #2: the rank context is
// not a buffer) through a load, and @f's table (buffer #0) through a view passed
// to a function that loads it; what only kernels read (%cache, %k) is not
// marked, nor is a function without host reads.

// CHECK: tp.manifest = "tprt-manifest 4\0Aabi 4\0Atarget cuda\0Afunc \22append_at\22 3 0\0Amesh - 0\0Aarg 0 f32 2 6 16 s=|\0Aarg 1 f32 2 1 16 s=|\0Aarg 2 i64 0 s=|\0Ahostread 2\0Aend\0Afunc \22f\22 1 0\0Amesh - 0\0Aarg 0 i64 1 4 s=|\0Ahostread 0\0Aend\0Afunc \22g\22 1 0\0Amesh - 0\0Aarg 0 f32 1 8 s=|\0Aend\0A"
module attributes {gpu.container_module, tp.manifest = "tprt-manifest 4\0Aabi 4\0Atarget cuda\0Afunc \22append_at\22 3 0\0Amesh - 0\0Aarg 0 f32 2 6 16 s=|\0Aarg 1 f32 2 1 16 s=|\0Aarg 2 i64 0 s=|\0Aend\0Afunc \22f\22 1 0\0Amesh - 0\0Aarg 0 i64 1 4 s=|\0Aend\0Afunc \22g\22 1 0\0Amesh - 0\0Aarg 0 f32 1 8 s=|\0Aend\0A"} {
  func.func @append_at(%ctx: !llvm.ptr, %cache: memref<6x16xf32>, %k: memref<1x16xf32>, %pos: memref<i64>) {
    %p = memref.load %pos[] : memref<i64>
    %i = arith.index_cast %p : i64 to index
    %view = memref.subview %cache[%i, 0] [1, 16] [1, 1] : memref<6x16xf32> to memref<1x16xf32, strided<[16, 1], offset: ?>>
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@copy blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%k : memref<1x16xf32>, %view : memref<1x16xf32, strided<[16, 1], offset: ?>>)
    return
  }
  func.func @f(%ctx: !llvm.ptr, %table: memref<4xi64>) {
    %first = memref.subview %table[0] [2] [1] : memref<4xi64> to memref<2xi64, strided<[1]>>
    call @first(%first) : (memref<2xi64, strided<[1]>>) -> ()
    return
  }
  func.func private @first(%t: memref<2xi64, strided<[1]>>) {
    %c0 = arith.constant 0 : index
    %v = memref.load %t[%c0] : memref<2xi64, strided<[1]>>
    return
  }
  func.func @g(%ctx: !llvm.ptr, %x: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<8xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @copy(%a: memref<1x16xf32>, %b: memref<1x16xf32, strided<[16, 1], offset: ?>>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0, %c0] : memref<1x16xf32>
      memref.store %v, %b[%c0, %c0] : memref<1x16xf32, strided<[16, 1], offset: ?>>
      gpu.return
    }
    gpu.func @scale(%a: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// An offset a kernel computes (into the result's buffer, #1 after the one
// argument) cannot be read by the host code: a GPU program's buffers past its
// arguments are device memory.
module attributes {gpu.container_module, tp.manifest = "tprt-manifest 4\0Aabi 4\0Atarget cuda\0Afunc \22h\22 1 1\0Amesh - 0\0Aarg 0 i64 1 2 s=|\0Aresult 0 i64 1 2 s=|\0Aend\0A"} {
  // expected-error @below {{tp-mark-host-reads: the host code reads a value a kernel computes (in buffer #1, a result's or the arena)}}
  func.func @h(%ctx: !llvm.ptr, %x: memref<2xi64>, %out: memref<2xi64>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<2xi64>, %out : memref<2xi64>)
    %c0 = arith.constant 0 : index
    %v = memref.load %out[%c0] : memref<2xi64>
    return
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<2xi64>, %b: memref<2xi64>) kernel {
      gpu.return
    }
  }
}
