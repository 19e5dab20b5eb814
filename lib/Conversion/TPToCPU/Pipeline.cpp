//===- Pipeline.cpp - --tp-lower-to-cpu -----------------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tp;

void mlir::tp::buildLowerToCPUPipeline(OpPassManager &pm) {
  buildLowerToCPUPipeline(pm, LowerToCPUOptions());
}

void mlir::tp::buildLowerToCPUPipeline(OpPassManager &pm,
                                       const LowerToCPUOptions &options) {
  pm.addPass(createRecordManifestPass());
  pm.addPass(createCopyRepeatedResultsPass());
  // Elementwise ops on tensors (math.tanh %t, arith.addf %a, %b) become
  // linalg.generic, which bufferizes.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addPass(createDecomposeAggregatesPass());
  if (!options.reference) {
    pm.addPass(createFuseElementwisePass());
    pm.addPass(createApproximateMathPass());
  }
  // Tensors -> buffers: identity layouts at function boundaries (the runtime
  // passes dense buffers), results as out-parameters, buffers freed.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createCanonicalizerPass());
  // After deallocation: the contiguous copies these passes make are freed
  // by them, which the ownership-based deallocation would refuse.
  pm.addPass(createConvertCollectivesToRuntimePass());
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
  // f16 and bf16 are storage types: scalar arithmetic and math on them runs
  // in f32, and bf16 conversions become integer code (no compiler runtime
  // support needed).
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"f16", "bf16"};
  emulate.targetTypeStr = "f32";
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  pm.addPass(math::createMathExtendToSupportedTypes());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  ConvertFuncToLLVMPassOptions func;
  func.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(func));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCallRuntimeThroughTablePass());
  pm.addPass(createEmitEntryPointsPass());
}

void mlir::tp::registerTPConversionPipelines() {
  PassPipelineRegistration<LowerToCPUOptions>(
      "tp-lower-to-cpu",
      "Local (or unsharded) form to LLVM dialect for the CPU runtime: "
      "manifest, bufferization, collectives to runtime calls, loops, LLVM, "
      "entry points",
      [](OpPassManager &pm, const LowerToCPUOptions &options) {
        buildLowerToCPUPipeline(pm, options);
      });
}
