// RUN: tp-opt %s --split-input-file --tp-check-lowered-to-llvm --verify-diagnostics | FileCheck %s

// A module in the LLVM dialect passes unchanged.

// CHECK-LABEL: llvm.func @lowered
// CHECK: llvm.add
llvm.func @lowered(%a: i64) -> i64 {
  %s = llvm.add %a, %a : i64
  llvm.return %s : i64
}

// -----

// An op that no conversion handles is reported where it is, each kind once
// (the second omp.barrier is not reported again), nested ops too.

llvm.func @left(%a: i64) -> i64 {
  // expected-error @below {{'omp.barrier' op is not lowered to the LLVM dialect: the lowering converts no 'omp' op}}
  omp.barrier
  omp.barrier
  // expected-error @below {{'arith.addi' op is not lowered to the LLVM dialect: the lowering converts no 'arith' op}}
  %s = arith.addi %a, %a : i64
  llvm.return %s : i64
}

// -----

// The crash the fuzzer found: MLIR 22's translation to LLVM IR dereferences
// null on this op; the lowering now stops before it.

// expected-error @below {{'omp.target_exit_data' op is not lowered to the LLVM dialect}}
omp.target_exit_data
