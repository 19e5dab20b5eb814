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

// A reduction inside a region of the body other than a loop has no phase of
// its own.

func.func @nested(%x: memref<32xf32>, %flag: i1) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    scf.if %flag {
      %v = memref.load %x[%tx] : memref<32xf32>
      // expected-error @+1 {{cannot emulate on the CPU: 'gpu.all_reduce' must be at the top level of the launch body or of loops there (scf.for), not inside 'scf.if'}}
      %sum = gpu.all_reduce add %v uniform {} : (f32) -> (f32)
      memref.store %sum, %x[%tx] : memref<32xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// A shuffle ends a phase: each thread's operand is kept in a slot, and the
// next loop over the threads reads its partner's (lane ^ offset, within the
// warp of 32 and the width; else its own, and %ok is false).

// CHECK-LABEL: func.func @shuffle
// CHECK: %[[SLOT:.*]] = memref.alloca(%{{.*}}) : memref<?xf32>
// CHECK: scf.for %[[TX:.*]] = %{{.*}} to %c32 step
// CHECK: %[[LINEAR:.*]] = arith.addi %{{.*}}, %[[TX]] : index
// CHECK: %[[V:.*]] = memref.load %{{.*}}[%[[TX]]] : memref<32xf32>
// CHECK: memref.store %[[V]], %[[SLOT]][%[[LINEAR]]] : memref<?xf32>
// CHECK: scf.for %[[TX2:.*]] = %{{.*}} to %c32 step
// CHECK: %[[LINEAR2:.*]] = arith.addi %{{.*}}, %[[TX2]] : index
// CHECK: %[[LANE:.*]] = arith.remui %[[LINEAR2]], %{{.*}} : index
// CHECK: %[[WARP:.*]] = arith.subi %[[LINEAR2]], %[[LANE]] : index
// CHECK: %[[PARTNER:.*]] = arith.xori %[[LANE]], %{{.*}} : index
// CHECK: %[[SOURCE:.*]] = arith.addi %[[WARP]], %[[PARTNER]] : index
// CHECK: %[[PICK:.*]] = arith.select %{{.*}}, %[[SOURCE]], %[[LINEAR2]] : index
// CHECK: %[[IN:.*]] = arith.select %{{.*}}, %[[PICK]], %[[LINEAR2]] : index
// CHECK: %[[S:.*]] = memref.load %[[SLOT]][%[[IN]]] : memref<?xf32>
// CHECK: memref.store %[[S]], %{{.*}}[%[[TX2]]] : memref<32xf32>
// CHECK-NOT: gpu.
func.func @shuffle(%x: memref<32xf32>, %y: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c1_i32 = arith.constant 1 : i32
  %c32_i32 = arith.constant 32 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<32xf32>
    %s, %ok = gpu.shuffle xor %v, %c1_i32, %c32_i32 : f32
    memref.store %s, %y[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

// A loop whose body has a barrier runs once per block; each iteration runs the
// body's phases, each a loop over the threads. Workgroup memory is a buffer per
// block. A value the loop carries is per thread: its slot is set from the
// initial value before the loop and from the yielded one after each
// iteration, and it is the loop's result after it.

// CHECK-LABEL: func.func @tiles
// CHECK: scf.for %[[BX:.*]] =
// CHECK: %[[SHARED:.*]] = memref.alloca() : memref<32xf32>
// CHECK: %[[CARRIED:.*]] = memref.alloca(%{{.*}}) : memref<?xf32>
// CHECK: scf.for %[[TX0:.*]] = %{{.*}} to %c32 step
// CHECK: memref.store %{{.*}}, %[[CARRIED]][%{{.*}}] : memref<?xf32>
// CHECK: scf.for %[[TILE:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: scf.for %[[TX1:.*]] = %{{.*}} to %c32 step
// CHECK: %[[G:.*]] = arith.addi %[[TILE]], %[[TX1]] : index
// CHECK: %[[E:.*]] = memref.load %{{.*}}[%[[G]]] : memref<128xf32>
// CHECK: memref.store %[[E]], %[[SHARED]][%[[TX1]]] : memref<32xf32>
// CHECK: scf.for %[[TX2:.*]] = %{{.*}} to %c32 step
// CHECK: %[[ACC:.*]] = memref.load %[[CARRIED]][%{{.*}}] : memref<?xf32>
// CHECK: %[[NEXT:.*]] = arith.subi %{{.*}}, %[[TX2]] : index
// CHECK: %[[W:.*]] = memref.load %[[SHARED]][%[[NEXT]]] : memref<32xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[ACC]], %[[W]] : f32
// CHECK: memref.store %[[SUM]], %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK: scf.for %[[TX3:.*]] = %{{.*}} to %c32 step
// CHECK: memref.store %{{.*}}, %[[CARRIED]][%{{.*}}] : memref<?xf32>
// CHECK: scf.for %[[TX4:.*]] = %{{.*}} to %c32 step
// CHECK: memref.load %[[CARRIED]][%{{.*}}] : memref<?xf32>
// CHECK: %[[R:.*]] = memref.load %[[CARRIED]][%{{.*}}] : memref<?xf32>
// CHECK: memref.store %[[R]], %{{.*}}[%[[TX4]]] : memref<32xf32>
// CHECK-NOT: gpu.
func.func @tiles(%x: memref<128xf32>, %y: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c31 = arith.constant 31 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             workgroup(%shared : memref<32xf32, #gpu.address_space<workgroup>>) {
    %sum = scf.for %tile = %c0 to %c128 step %c32 iter_args(%acc = %zero) -> (f32) {
      %g = arith.addi %tile, %tx : index
      %e = memref.load %x[%g] : memref<128xf32>
      memref.store %e, %shared[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %next = arith.subi %c31, %tx : index
      %w = memref.load %shared[%next] : memref<32xf32, #gpu.address_space<workgroup>>
      %s = arith.addf %acc, %w : f32
      gpu.barrier
      scf.yield %s : f32
    }
    memref.store %sum, %y[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

// Threads that meet in a loop must all run it the same number of times.

func.func @uneven(%x: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{cannot emulate on the CPU: a loop whose threads meet must have the same bounds in every thread of the block}}
    scf.for %i = %c0 to %tx step %c1 {
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// -----

// An mma.sync is a warp's: one loop over the threads writes each lane's A, B
// and C fragments (widened to f32) into its warp's matrices at the PTX ISA's
// coordinates (A's register 3, element 1: row g + 8, column 2t + 9), a second
// computes each lane's D fragment, C + A * B over k = 0..15, and keeps it in a
// slot the later phases read.

// CHECK-LABEL: func.func @mma
// CHECK-DAG: %[[A:.*]] = memref.alloca(%{{.*}}) : memref<?x16x16xf32>
// CHECK-DAG: %[[B:.*]] = memref.alloca(%{{.*}}) : memref<?x16x8xf32>
// CHECK-DAG: %[[C:.*]] = memref.alloca(%{{.*}}) : memref<?x16x8xf32>
// CHECK-DAG: %[[D:.*]] = memref.alloca(%{{.*}}) : memref<?xvector<2x2xf32>>
// CHECK: scf.for %[[TX:.*]] = %{{.*}} to %c64 step
// CHECK: %[[FA:.*]] = vector.load %{{.*}} : memref<16x16xbf16>, vector<4x2xbf16>
// CHECK: %[[A31:.*]] = vector.extract %[[FA]][3, 1] : bf16 from vector<4x2xbf16>
// CHECK: %[[W31:.*]] = arith.extf %[[A31]] : bf16 to f32
// CHECK: memref.store %[[W31]], %[[A]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<?x16x16xf32>
// CHECK: scf.for %[[TX2:.*]] = %{{.*}} to %c64 step
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %c16 step %{{.*}} iter_args
// CHECK: memref.load %[[A]][%{{.*}}, %{{.*}}, %[[K]]] : memref<?x16x16xf32>
// CHECK: memref.load %[[B]][%{{.*}}, %[[K]], %{{.*}}] : memref<?x16x8xf32>
// CHECK: memref.store %{{.*}}, %[[D]][%{{.*}}] : memref<?xvector<2x2xf32>>
// CHECK: scf.for %[[TX3:.*]] = %{{.*}} to %c64 step
// CHECK: %[[R:.*]] = memref.load %[[D]][%{{.*}}] : memref<?xvector<2x2xf32>>
// CHECK: vector.store %[[R]], %{{.*}} : memref<64x2x2xf32>, vector<2x2xf32>
// CHECK-NOT: nvgpu.
func.func @mma(%a: memref<16x16xbf16>, %b: memref<16x8xbf16>,
               %d: memref<64x2x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %fa = vector.load %a[%c0, %c0] : memref<16x16xbf16>, vector<4x2xbf16>
    %fb = vector.load %b[%c0, %c0] : memref<16x8xbf16>, vector<2x2xbf16>
    %fc = arith.constant dense<1.0> : vector<2x2xf32>
    %r = nvgpu.mma.sync (%fa, %fb, %fc) {mmaShape = [16, 8, 16]}
        : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
    vector.store %r, %d[%tx, %c0, %c0] : memref<64x2x2xf32>, vector<2x2xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @mma_tf32(%a: memref<16x8xf32>, %b: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %fa = vector.load %a[%c0, %c0] : memref<16x8xf32>, vector<4x1xf32>
    %fb = vector.load %b[%c0, %c0] : memref<8x8xf32>, vector<2x1xf32>
    %fc = arith.constant dense<0.0> : vector<2x2xf32>
    // expected-error @below {{cannot emulate this nvgpu.mma.sync on the CPU: the emulation takes the m16n8k16 shape on f16 or bf16 operands with an f32 accumulator}}
    %r = nvgpu.mma.sync (%fa, %fb, %fc) {mmaShape = [16, 8, 8], tf32Enabled}
        : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
    gpu.terminator
  }
  return
}
