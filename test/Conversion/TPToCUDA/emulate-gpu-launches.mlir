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
// CHECK: %[[ROW:.*]] = arith.addi %[[BX]], %{{.*}} : index
// CHECK: %[[ACC:.*]] = memref.alloca() : memref<f32>
// CHECK: %[[FIRST:.*]] = memref.alloca() : memref<i1>
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
// CHECK: scf.for
// CHECK: scf.for
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

// Phases: a kernel runs in phases that end at its reductions and barriers,
// each phase a loop over the block's threads. A per-thread value a later phase
// uses (here %v, after the reduction and the barrier) is kept in a slot per
// thread of the block.

// CHECK-LABEL: func.func @phases
// CHECK: %[[SLOT:.*]] = memref.alloca(%{{.*}}) : memref<?xf32>
// CHECK: %[[ACC:.*]] = memref.alloca() : memref<f32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[TX:.*]] =
// CHECK: %[[LINEAR:.*]] = arith.addi %{{.*}}, %[[TX]] : index
// CHECK: %[[V:.*]] = memref.load %{{.*}}[%[[TX]]] : memref<32xf32>
// CHECK: memref.store %[[V]], %[[SLOT]][%[[LINEAR]]] : memref<?xf32>
// CHECK: memref.store %false
// CHECK: %[[SUM:.*]] = memref.load %[[ACC]][] : memref<f32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[TX2:.*]] =
// CHECK: %[[LINEAR2:.*]] = arith.addi %{{.*}}, %[[TX2]] : index
// CHECK: %[[V2:.*]] = memref.load %[[SLOT]][%[[LINEAR2]]] : memref<?xf32>
// CHECK: %[[D:.*]] = arith.subf %[[V2]], %[[SUM]] : f32
// CHECK: memref.store %[[D]], %{{.*}}[%[[TX2]]] : memref<32xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[TX3:.*]] =
// CHECK: %[[LINEAR3:.*]] = arith.addi %{{.*}}, %[[TX3]] : index
// CHECK: %[[V3:.*]] = memref.load %[[SLOT]][%[[LINEAR3]]] : memref<?xf32>
// CHECK: %[[NEXT:.*]] = arith.subi %{{.*}}, %[[TX3]] : index
// CHECK: %[[W:.*]] = memref.load %{{.*}}[%[[NEXT]]] : memref<32xf32>
// CHECK: arith.addf %[[V3]], %[[W]] : f32
// CHECK-NOT: gpu.
func.func @phases(%x: memref<32xf32>, %y: memref<32xf32>, %z: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c31 = arith.constant 31 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<32xf32>
    %sum = gpu.all_reduce add %v uniform {} : (f32) -> (f32)
    %d = arith.subf %v, %sum : f32
    memref.store %d, %y[%tx] : memref<32xf32>
    gpu.barrier
    %next = arith.subi %c31, %tx : index
    %w = memref.load %y[%next] : memref<32xf32>
    %e = arith.addf %v, %w : f32
    memref.store %e, %z[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

// A reduction inside a region of the body has no phase of its own.

func.func @nested(%x: memref<32xf32>, %flag: i1) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    scf.if %flag {
      %v = memref.load %x[%tx] : memref<32xf32>
      // expected-error @+1 {{cannot emulate on the CPU: a gpu.all_reduce must have a reduction kind and be at the top level of the launch body}}
      %sum = gpu.all_reduce add %v uniform {} : (f32) -> (f32)
      memref.store %sum, %x[%tx] : memref<32xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// Shuffles need threads that run together.

func.func @shuffle(%x: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c1_i32 = arith.constant 1 : i32
  %c32_i32 = arith.constant 32 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<32xf32>
    // expected-error @+1 {{cannot emulate 'gpu.shuffle' on the CPU (threads run one after another)}}
    %s, %ok = gpu.shuffle xor %v, %c1_i32, %c32_i32 : f32
    memref.store %s, %x[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}
