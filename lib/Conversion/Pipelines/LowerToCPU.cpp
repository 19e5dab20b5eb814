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
  addBufferFrontPasses(pm, "cpu",
                       /*outline=*/options.outlineLayers && !options.reference,
                       options.reference ? 0u
                                         : unsigned(options.maxFunctionOps),
                       /*fuse=*/!options.reference,
                       /*approximateMath=*/!options.reference);
  // The reference keeps f16/bf16 GEMMs as calls: their contract is f32
  // accumulation, which loops on narrow memrefs would not honour.
  ConvertGemmToBlasPassOptions gemm;
  gemm.narrowOnly = options.reference;
  pm.addPass(createConvertGemmToBlasPass(gemm));
  // Loops, then LLVM.
  pm.addPass(createLowerStridedCopiesPass());
  if (options.emulateGpuMapping) {
    // Test aid: the kernels the CUDA lowering maps, run as CPU loops.
    pm.addNestedPass<func::FuncOp>(createMapLinalgToGPUPass());
    pm.addNestedPass<func::FuncOp>(createEmulateGPULaunchesPass());
  }
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  addNarrowFloatEmulationPasses(pm);
  pm.addPass(memref::createExpandStridedMetadataPass());
  // The vector loads and stores of emulated vectorized kernels.
  if (options.emulateGpuMapping)
    pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  addHostToLLVMPasses(pm);
  pm.addPass(createCallRuntimeThroughTablePass());
  pm.addPass(createEmitEntryPointsPass());
}
