// RUN: tp-opt %s --tp-emulate-gpu-launches --split-input-file --verify-diagnostics | FileCheck %s

// Blocks, then threads, as loops; ids and sizes become the loop indices and the
// launch operands.

// CHECK-LABEL: func.func @flat
// CHECK-SAME: (%[[OUT:.*]]: memref<8xindex>)
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: scf.for %{{.*}} = %[[C0]] to %[[C1]] step
// CHECK: scf.for %{{.*}} = %[[C0]] to %[[C1]] step
// CHECK: scf.for %[[BX:.*]] = %[[C0]] to %[[C2]] step
// CHECK: scf.for %{{.*}} = %[[C0]] to %[[C1]] step
// CHECK: scf.for %{{.*}} = %[[C0]] to %[[C1]] step
// CHECK: scf.for %[[TX:.*]] = %[[C0]] to %[[C4]] step
// CHECK: %[[START:.*]] = arith.muli %[[BX]], %[[C4]] : index
// CHECK: %[[I:.*]] = arith.addi %[[START]], %[[TX]] : index
// CHECK: memref.store %[[I]], %[[OUT]][%[[I]]] : memref<8xindex>
// CHECK-NOT: gpu.
func.func @flat(%out: memref<8xindex>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %start = arith.muli %bx, %sx : index
    %i = arith.addi %start, %tx : index
    memref.store %i, %out[%i] : memref<8xindex>
    gpu.terminator
  }
  return
}

// -----

// A block reduction: every thread's operand folded into one accumulator, then
// the ops after it run per thread with the total; block-uniform ops before it
// (the row index) run once per block.

// CHECK-LABEL: func.func @reduce
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[BX:.*]] =
// CHECK: %[[ACC:.*]] = memref.alloca() : memref<f32>
// CHECK: %[[FIRST:.*]] = memref.alloca() : memref<i1>
// CHECK: %[[ROW:.*]] = arith.addi %[[BX]], %{{.*}} : index
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[TX:.*]] =
// CHECK: %[[V:.*]] = memref.load %{{.*}}[%[[ROW]], %[[TX]]] : memref<2x32xf32>
// CHECK: %[[ISFIRST:.*]] = memref.load %[[FIRST]][] : memref<i1>
// CHECK: %[[FOLD:.*]] = scf.if %[[ISFIRST]] -> (f32) {
// CHECK: scf.yield %[[V]] : f32
// CHECK: } else {
// CHECK: %[[OLD:.*]] = memref.load %[[ACC]][] : memref<f32>
// CHECK: %[[SUM:.*]] = arith.addf %[[OLD]], %[[V]] : f32
// CHECK: scf.yield %[[SUM]] : f32
// CHECK: memref.store %[[FOLD]], %[[ACC]][] : memref<f32>
// CHECK: %[[TOTAL:.*]] = memref.load %[[ACC]][] : memref<f32>
// CHECK: scf.for %[[TX2:.*]] =
// CHECK: memref.store %[[TOTAL]], %{{.*}}[%[[ROW]]] : memref<2xf32>
func.func @reduce(%x: memref<2x32xf32>, %y: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %row = arith.addi %bx, %c0 : index
    %v = memref.load %x[%row, %tx] : memref<2x32xf32>
    %sum = gpu.all_reduce add %v uniform {} : (f32) -> (f32)
    memref.store %sum, %y[%row] : memref<2xf32>
    gpu.terminator
  }
  return
}

// -----

// After the reduction, a per-thread value from before it does not exist.

func.func @crossing(%x: memref<32xf32>, %y: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<32xf32>
    %sum = gpu.all_reduce add %v uniform {} : (f32) -> (f32)
    // expected-error @+1 {{cannot emulate on the CPU: it uses a per-thread value computed before the gpu.all_reduce}}
    %d = arith.subf %v, %sum : f32
    memref.store %d, %y[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

// Barriers need threads that run together.

func.func @barrier() {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{cannot emulate 'gpu.barrier' on the CPU (threads run one after another)}}
    gpu.barrier
    gpu.terminator
  }
  return
}
