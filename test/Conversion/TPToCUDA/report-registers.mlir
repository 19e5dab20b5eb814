// REQUIRES: cuda
// RUN: tp-opt %s --tp-report-registers=toolkit=%cuda_root -o /dev/null 2>&1 | FileCheck %s
// RUN: env PATH=/nonexistent tp-opt %s --tp-report-registers=toolkit=%t.nowhere -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOPTXAS

// ptxas -v on each GPU module's PTX, for its NVVM target's chip: a kernel's
// registers, spills, stack frame and shared memory, then the module's
// summary. A module without an NVVM target is named and skipped. The module
// itself is left as it is (-o /dev/null: it still prints).

// CHECK-DAG: tp-report: ptxas sm_90: scale: {{[1-9][0-9]*}} registers, 0 B spill stores, 0 B spill loads, 0 B stack frame, 0 B shared
// CHECK-DAG: tp-report: ptxas sm_90: stage: {{[1-9][0-9]*}} registers, 0 B spill stores, 0 B spill loads, 0 B stack frame, 512 B shared
// CHECK-DAG: tp-report: ptxas sm_90: 2 kernels, at most {{[0-9]+}} registers ({{scale|stage}}), no spills
// CHECK-DAG: tp-report: registers: GPU module @untargeted has no NVVM target (gpu-nvvm-attach-target): not compiled
// NOPTXAS: tp-report: registers: no ptxas in '{{.*}}nowhere/bin' or on PATH: registers and spills not reported

module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90">] {
    llvm.mlir.global internal @tile() {addr_space = 3 : i32} : !llvm.array<128 x f32>
    // p[tid] *= 2
    llvm.func @scale(%p: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %tid = nvvm.read.ptx.sreg.tid.x : i32
      %q = llvm.getelementptr %p[%tid] : (!llvm.ptr, i32) -> !llvm.ptr, f32
      %x = llvm.load %q : !llvm.ptr -> f32
      %two = llvm.mlir.constant(2.0 : f32) : f32
      %y = llvm.fmul %x, %two : f32
      llvm.store %y, %q : f32, !llvm.ptr
      llvm.return
    }
    // p[tid] = tile[127 - tid] after staging p in shared memory.
    llvm.func @stage(%p: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %tid = nvvm.read.ptx.sreg.tid.x : i32
      %q = llvm.getelementptr %p[%tid] : (!llvm.ptr, i32) -> !llvm.ptr, f32
      %x = llvm.load %q : !llvm.ptr -> f32
      %tile = llvm.mlir.addressof @tile : !llvm.ptr<3>
      %s = llvm.getelementptr %tile[%tid] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
      llvm.store %x, %s : f32, !llvm.ptr<3>
      nvvm.barrier0
      %last = llvm.mlir.constant(127 : i32) : i32
      %r = llvm.sub %last, %tid : i32
      %t = llvm.getelementptr %tile[%r] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
      %y = llvm.load %t : !llvm.ptr<3> -> f32
      llvm.store %y, %q : f32, !llvm.ptr
      llvm.return
    }
  }
  gpu.module @untargeted {
    llvm.func @idle() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}
