//===- Pipelines.cpp - tp-mlir pass pipelines -----------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::tp;

void mlir::tp::buildSPMDPipeline(OpPassManager &pm,
                                 const SPMDPipelineOptions &options) {
  pm.addPass(createFoldReshapesPass());
  PropagatePassOptions propagate;
  propagate.replicateOpenBoundaries = options.replicateOpenBoundaries;
  propagate.recordOrigins = options.recordOrigins;
  propagate.sequenceParallel = options.sequenceParallel;
  propagate.autoPlan = options.autoPlan;
  propagate.memoryPerDevice = options.memoryPerDevice;
  propagate.costModel = options.costModel;
  propagate.explain = options.explain;
  // The search does not plan sequence parallelism's reduce-scatters.
  propagate.search = options.search && !options.sequenceParallel;
  pm.addPass(createPropagatePass(propagate));
  pm.addPass(createPartitionPass());
  pm.addPass(createOptimizeCollectivesPass());
  // The partitioned program is already clean: one sweep folds what is left
  // (constants out of bodies, dead ops), without a second sweep to confirm
  // convergence or region simplification (tp programs are single-block).
  // A full canonicalize was 57% of the pipeline's instructions (64-layer MLP
  // stack); and when the sweep changes nothing, it says so, and the pass
  // manager does not verify the program once more.
  pm.addPass(createCanonicalizePass());
}

void mlir::tp::registerTPPipelines() {
  PassPipelineRegistration<SPMDPipelineOptions>(
      "tp-spmd",
      "Global form to per-device (SPMD) form: fold reshapes, propagate "
      "shardings, partition, optimize collectives, canonicalize",
      buildSPMDPipeline);
}
