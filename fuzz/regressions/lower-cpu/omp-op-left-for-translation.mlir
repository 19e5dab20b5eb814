// MLIR 22 translated this op to LLVM IR and crashed: the lowering left it.
omp.target_exit_data
