//===- LowerToCPU.cpp - --tp-lower-to-cpu ---------------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "tp/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tp;

void mlir::tp::buildLowerToCPUPipeline(OpPassManager &pm) {
  buildLowerToCPUPipeline(pm, LowerToCPUOptions());
}

void mlir::tp::buildLowerToCPUPipeline(OpPassManager &pm,
                                       const LowerToCPUOptions &options) {
  // The reference stays one plain function: it checks the outlining too.
  BufferFrontOptions front;
  front.target = "cpu";
  front.matmulPrecision = options.matmulPrecision;
  front.outline = options.outlineLayers && !options.reference;
  front.maxFunctionOps =
      options.reference ? 0u : unsigned(options.maxFunctionOps);
  front.fuse = !options.reference;
  // The emulated GPU mapping maps what the CUDA lowering sees.
  front.fuseReductions = !options.reference && !options.emulateGpuMapping;
  front.foldIntoNarrowGemms = options.emulateGpuMapping;
  // The CUDA lowering keeps libdevice's exact math (and its GELU a GEMM
  // epilogue can take).
  front.approximateMath = !options.reference && !options.emulateGpuMapping;
  front.freeEarly = !options.reference;
  // Exact, so the reference too; not where the CUDA lowering is emulated.
  front.widenExtrema = !options.emulateGpuMapping;
  addBufferFrontPasses(pm, front);
  // The reference keeps f16/bf16 GEMMs as calls: their contract is f32
  // accumulation, which loops on narrow memrefs would not honour.
  ConvertGemmToBlasPassOptions gemm;
  gemm.narrowOnly = options.reference;
  // As the CUDA lowering: the bias, residual and GELU loops around a GEMM
  // go into its call (the runtime's CPU epilogues check what cuBLASLt's do).
  gemm.epilogues = options.emulateGpuMapping;
  // And its attention kernel, run by the emulation below.
  if (options.emulateGpuMapping) {
    FuseAttentionPassOptions attention;
    attention.matmulPrecision = options.matmulPrecision;
    pm.addNestedPass<func::FuncOp>(createFuseAttentionPass(attention));
  }
  pm.addPass(createConvertGemmToBlasPass(gemm));
  pm.addPass(createLowerStridedCopiesPass());
  // What has independent iterations, shared by the rank's threads (the
  // cores its GEMMs use): after the GEMM matcher, which must see the ops.
  if (!options.reference && !options.emulateGpuMapping)
    pm.addPass(createOutlineParallelLoopsPass());
  // The entry points' own buffers in one arena the session allocates once:
  // after the GEMM matcher, which folds ops into a GEMM whose output is a
  // fresh allocation.
  if (!options.reference)
    pm.addPass(createPlanArenaPass());
  // Loops, then LLVM.
  if (options.emulateGpuMapping) {
    // Test aid: the kernels the CUDA lowering maps, run as CPU loops.
    pm.addNestedPass<func::FuncOp>(createMapLinalgToGPUPass());
    pm.addNestedPass<func::FuncOp>(createEmulateGPULaunchesPass());
  }
  // Reductions keep their accumulator in a register and row-wise ops load
  // what is invariant along a row once (both vectorize); the reference keeps
  // convert-linalg-to-loops' plain sequential loops.
  if (!options.reference && !options.emulateGpuMapping)
    pm.addNestedPass<func::FuncOp>(createLowerRowLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  addNarrowFloatEmulationPasses(pm);
  pm.addPass(memref::createExpandStridedMetadataPass());
  // The offsets of subviews at loop indices (tiles) it computes.
  pm.addPass(createLowerAffinePass());
  // The vector loads and stores of emulated vectorized kernels, and the
  // fragments of emulated mma.sync (built from poison by vector-to-llvm).
  if (options.emulateGpuMapping) {
    pm.addPass(createConvertVectorToLLVMPass());
    pm.addPass(createUBToLLVMConversionPass());
  }
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  addHostToLLVMPasses(pm);
  pm.addPass(createLowerParallelCallsPass());
  pm.addPass(createCallRuntimeThroughTablePass());
  pm.addPass(createEmitEntryPointsPass());
  // A deep model's driver reaches code generation in bounded parts.
  pm.addPass(createSplitEntryPointsPass());
  // Anything left outside the LLVM dialect would reach the translation.
  pm.addPass(createCheckLoweredToLLVMPass());
}

LogicalResult mlir::tp::buildCpuTarget(OpPassManager &pm,
                                       const TargetLowering &options,
                                       std::string &error) {
  if (options.gpuArch || options.toolkit) {
    error = "--gpu-arch and --cuda-toolkit compile device code; target 'cpu' "
            "has none";
    return failure();
  }
  LowerToCPUOptions lowering;
  lowering.reference = options.reference;
  lowering.emulateGpuMapping = options.emulateGpuMapping;
  lowering.outlineLayers = options.outlineLayers;
  if (options.maxFunctionOps)
    lowering.maxFunctionOps = *options.maxFunctionOps;
  lowering.matmulPrecision = options.matmulPrecision;
  buildLowerToCPUPipeline(pm, lowering);
  return success();
}
