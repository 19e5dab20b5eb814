//===- Common.h - Pieces the lowering pipelines share -----------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_LIB_CONVERSION_PIPELINES_COMMON_H
#define TP_LIB_CONVERSION_PIPELINES_COMMON_H

#include "tp/Conversion/Targets.h"

#include "mlir/Pass/PassManager.h"

namespace mlir::tp {

/// What addBufferFrontPasses runs.
struct BufferFrontOptions {
  /// The manifest's target: "cpu" or "cuda".
  StringRef target;
  /// The manifest's matmul precision: "highest", "high" or "medium".
  StringRef matmulPrecision = "highest";
  /// Repeated layers outlined, and functions longer than `maxFunctionOps`
  /// (0: no limit) cut into parts.
  bool outline = false;
  unsigned maxFunctionOps = 0;
  /// Elementwise chains fused (tp-fuse-elementwise), and row-wise chains
  /// with reductions run a tile of rows at a time (tp-fuse-reductions).
  bool fuse = false;
  bool fuseReductions = false;
  /// tp-fold-addends-into-gemm folds into f16 and bf16 GEMMs too (where the
  /// GEMM library reads C in its own type: cuBLAS).
  bool foldIntoNarrowGemms = false;
  /// Polynomial math instead of libm.
  bool approximateMath = false;
  /// Each buffer freed after its last use, not at the end of its block.
  bool freeEarly = false;
  /// f16 and bf16 max and min reductions accumulate in f32 too (exact; the
  /// CPU's loops then vectorize).
  bool widenExtrema = false;
};

/// Local form on tensors -> buffers whose collectives call the runtime: the
/// manifest, repeated layers outlined, repeated results copied, elementwise
/// ops as linalg (fused), one-shot bufferization with results as
/// out-parameters and buffers freed (those of a tile allocated once, outside
/// its loop), and every function taking the rank context.
void addBufferFrontPasses(OpPassManager &pm, const BufferFrontOptions &options);

/// f16 and bf16 as storage types: scalar arithmetic and math on them runs
/// in f32, and bf16 conversions become integer code (no compiler runtime
/// support needed) unless `nativeBF16Conversions` (the target has the
/// instructions: NVPTX from sm_80). Runs on whatever `pm` is nested on.
void addNarrowFloatEmulationPasses(OpPassManager &pm,
                                   bool nativeBF16Conversions = false);

/// The end of a host lowering, after memref/math are LLVM: arith, func
/// (bare pointers), cf and index to LLVM, casts reconciled.
void addHostToLLVMPasses(OpPassManager &pm);

/// Each target's lowering for buildTargetPipeline (Targets.h), defined
/// beside its pipeline: build<Name>Target for each line of tprt_targets.def.
#define TPRT_TARGET(id, Id, onDevice, defaultBackend, description)             \
  LogicalResult build##Id##Target(                                             \
      OpPassManager &pm, const TargetLowering &options, std::string &error);
#include "tprt/tprt_targets.def"

} // namespace mlir::tp

#endif // TP_LIB_CONVERSION_PIPELINES_COMMON_H
