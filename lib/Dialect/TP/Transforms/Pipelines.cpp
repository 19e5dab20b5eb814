//===- Pipelines.cpp - tp-mlir pass pipelines -----------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tp;

void mlir::tp::buildSPMDPipeline(OpPassManager &pm,
                                 const SPMDPipelineOptions &options) {
  pm.addPass(createFoldReshapesPass());
  PropagatePassOptions propagate;
  propagate.replicateOpenBoundaries = options.replicateOpenBoundaries;
  propagate.recordOrigins = options.recordOrigins;
  propagate.sequenceParallel = options.sequenceParallel;
  pm.addPass(createPropagatePass(propagate));
  pm.addPass(createPartitionPass());
  pm.addPass(createOptimizeCollectivesPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::tp::registerTPPipelines() {
  PassPipelineRegistration<SPMDPipelineOptions>(
      "tp-spmd",
      "Global form to per-device (SPMD) form: fold reshapes, propagate "
      "shardings, partition, optimize collectives, canonicalize",
      buildSPMDPipeline);
}
