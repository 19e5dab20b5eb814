// RUN: tp-opt %s --tp-merge-kernel-modules --split-input-file --verify-diagnostics | FileCheck %s

// Every kernel moves into one gpu.module, named after the module it came from;
// the launches follow it. A helper each module had under the same name is
// renamed in the second, and its kernel calls the new name.

module attributes {gpu.container_module} {
  // CHECK-LABEL: func.func @f(
  // CHECK: gpu.launch_func @tp_kernels::@f_kernel blocks
  // CHECK: gpu.launch_func @tp_kernels::@f_kernel_0 blocks
  // CHECK: gpu.launch_func @tp_kernels::@f_kernel blocks
  func.func @f(%a: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<8xf32>)
    gpu.launch_func @f_kernel_0::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<8xf32>)
    gpu.launch_func @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%a : memref<8xf32>)
    return
  }
  // CHECK-NOT: gpu.module @f_kernel
  // CHECK: gpu.module @tp_kernels {
  // CHECK: gpu.func @f_kernel(%{{.*}}: memref<8xf32>) kernel
  // CHECK: func.call @helper()
  // CHECK: func.func private @helper()
  // CHECK: gpu.func @f_kernel_0(%{{.*}}: memref<8xf32>) kernel
  // CHECK: func.call @helper_0()
  // CHECK: func.func private @helper_0()
  // CHECK-NOT: gpu.module
  gpu.module @f_kernel {
    gpu.func @f_kernel(%arg0: memref<8xf32>) kernel {
      func.call @helper() : () -> ()
      gpu.return
    }
    func.func private @helper() {
      return
    }
  }
  gpu.module @f_kernel_0 {
    gpu.func @f_kernel(%arg0: memref<8xf32>) kernel {
      func.call @helper() : () -> ()
      gpu.return
    }
    func.func private @helper() {
      return
    }
  }
}

// -----

// One kernel module is already one image: left as it is.
module attributes {gpu.container_module} {
  // CHECK-LABEL: func.func @g(
  // CHECK: gpu.launch_func @g_kernel::@g_kernel
  // CHECK: gpu.module @g_kernel
  func.func @g(%a: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @g_kernel::@g_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<8xf32>)
    return
  }
  gpu.module @g_kernel {
    gpu.func @g_kernel(%arg0: memref<8xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// After a target is attached the merge would lose it: an error.
module attributes {gpu.container_module} {
  // expected-error @below {{gpu.module @h_kernel already has targets or an offloading handler}}
  gpu.module @h_kernel [#nvvm.target] {
    gpu.func @h_kernel() kernel {
      gpu.return
    }
  }
  gpu.module @h_kernel_0 {
    gpu.func @h_kernel() kernel {
      gpu.return
    }
  }
}
