//===- Common.h - Pieces the lowering pipelines share -----------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_LIB_CONVERSION_PIPELINES_COMMON_H
#define TP_LIB_CONVERSION_PIPELINES_COMMON_H

#include "mlir/Pass/PassManager.h"

namespace mlir::tp {

/// Local form on tensors -> buffers whose collectives call the runtime: the
/// manifest (for `target`), repeated layers outlined when `outline` (and
/// functions longer than `maxFunctionOps` cut into parts), repeated
/// results copied, elementwise ops as
/// linalg (fused when `fuse`, with polynomial math when `approximateMath`),
/// one-shot bufferization with results as out-parameters and buffers freed,
/// and every function taking the rank context.
void addBufferFrontPasses(OpPassManager &pm, StringRef target, bool outline,
                          unsigned maxFunctionOps, bool fuse,
                          bool approximateMath);

/// f16 and bf16 as storage types: scalar arithmetic and math on them runs
/// in f32, and bf16 conversions become integer code (no compiler runtime
/// support needed). Runs on whatever `pm` is nested on.
void addNarrowFloatEmulationPasses(OpPassManager &pm);

/// The end of a host lowering, after memref/math are LLVM: arith, func
/// (bare pointers), cf and index to LLVM, casts reconciled.
void addHostToLLVMPasses(OpPassManager &pm);

} // namespace mlir::tp

#endif // TP_LIB_CONVERSION_PIPELINES_COMMON_H
