//===- Common.cpp - Pieces the lowering pipelines share -------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "tp/Conversion/Passes.h"
#include "tp/Dialect/TP/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tp;

void mlir::tp::addBufferFrontPasses(OpPassManager &pm,
                                    const BufferFrontOptions &options) {
  RecordManifestPassOptions manifest;
  manifest.target = options.target.str();
  manifest.matmulPrecision = options.matmulPrecision.str();
  pm.addPass(createRecordManifestPass(manifest));
  // Each distinct layer is lowered and code-generated once.
  if (options.outline || options.maxFunctionOps) {
    OutlineRepeatedLayersPassOptions layers;
    if (!options.outline)
      layers.maxLayers = 0;
    layers.maxFunctionOps = options.maxFunctionOps;
    // A deep driver left straight-line code, for tp-split-entry-points.
    if (options.outline && options.maxFunctionOps)
      layers.straightLineCalls = kStraightLineCalls;
    pm.addPass(createOutlineRepeatedLayersPass(layers));
  }
  pm.addPass(createCopyRepeatedResultsPass());
  // Elementwise ops on tensors (math.tanh %t, arith.addf %a, %b) become
  // linalg.generic, which bufferizes.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addPass(createDecomposeAggregatesPass());
  // f16 and bf16 sums in f32, in every lowering (the reference too).
  WidenReductionsPassOptions widen;
  widen.extrema = options.widenExtrema;
  pm.addPass(createWidenReductionsPass(widen));
  if (options.fuse) {
    // Rotate-half's slices, negation and concatenation, read in place by
    // the rotation.
    pm.addPass(createFuseConcatenationsPass());
    pm.addPass(createFuseElementwisePass());
  }
  if (options.fuseReductions)
    pm.addPass(createFuseReductionsPass());
  // A GEMM starts from its bias: one pass over its output less. After the
  // CSE of tp-fuse-reductions, which would merge the empty tensor that both
  // branches of a partial sum's init write with others.
  if (options.fuse) {
    // Each destination its own zeroed buffer (after the CSE of
    // tp-fuse-reductions, and wherever the model shares a fill).
    pm.addPass(createUnshareFillsPass());
    FoldAddendsIntoGemmPassOptions addends;
    addends.narrow = options.foldIntoNarrowGemms;
    pm.addPass(createFoldAddendsIntoGemmPass(addends));
  }
  if (options.approximateMath)
    pm.addPass(createApproximateMathPass());
  // The manifest's promise: bufferization copies an input before writing
  // into it, so ranks may read their shards in the caller's memory.
  pm.addPass(createProtectInputsPass());
  // A donated argument's buffer becomes its result's (after fusion, which
  // rebuilds the ops that make results).
  pm.addPass(createDonateBuffersPass());
  // Tensors -> buffers: identity layouts at function boundaries (the runtime
  // passes dense buffers), results as out-parameters, buffers freed.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // A result written in its donated argument's buffer needs no buffer.
  pm.addPass(createDropDonatedResultsPass());
  // Distinct tensors may have become one buffer.
  pm.addPass(createCopyRepeatedResultsPass());
  // A result that reshapes a buffer gets the buffer itself, which the next
  // pass makes the out-parameter: no copy at the end of every run.
  pm.addPass(createReturnBuffersUnreshapedPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  // A tile's buffers (tp-fuse-reductions) are made once, not per tile.
  if (options.fuseReductions)
    pm.addNestedPass<func::FuncOp>(
        bufferization::createBufferLoopHoistingPass());
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createCanonicalizerPass());
  // Deallocation frees at the end of each block: in a driver, every layer's
  // output lives to the end.
  if (options.freeEarly)
    pm.addPass(createFreeBuffersEarlyPass());
  // After deallocation: the contiguous copies these passes make are freed
  // by them, which the ownership-based deallocation would refuse.
  pm.addPass(createConvertCollectivesToRuntimePass());
  // Offsets known at run time (a decode step's position) checked: an error
  // status, never memory outside a buffer.
  pm.addPass(createCheckSliceOffsetsPass());
}

void mlir::tp::addNarrowFloatEmulationPasses(OpPassManager &pm,
                                             bool nativeBF16Conversions) {
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"f16", "bf16"};
  emulate.targetTypeStr = "f32";
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  pm.addPass(math::createMathExtendToSupportedTypes());
  // Float minimum/maximum stay for LLVM's intrinsics (vectorized reductions).
  ExpandArithPassOptions expand;
  expand.bf16Conversions = !nativeBF16Conversions;
  pm.addPass(createExpandArithPass(expand));
}

void mlir::tp::addHostToLLVMPasses(OpPassManager &pm) {
  pm.addPass(createArithToLLVMConversionPass());
  ConvertFuncToLLVMPassOptions func;
  func.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(func));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}
