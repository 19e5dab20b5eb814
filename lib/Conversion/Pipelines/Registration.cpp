//===- Registration.cpp - The lowering pipelines as tp-opt flags ----------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::tp;

void mlir::tp::registerTPConversionPipelines() {
  PassPipelineRegistration<LowerToCPUOptions>(
      "tp-lower-to-cpu",
      "Local (or unsharded) form to LLVM dialect for the CPU runtime: "
      "manifest, bufferization, collectives to runtime calls, loops, LLVM, "
      "entry points",
      [](OpPassManager &pm, const LowerToCPUOptions &options) {
        buildLowerToCPUPipeline(pm, options);
      });
  PassPipelineRegistration<LowerToCUDAOptions>(
      "tp-lower-to-cuda",
      "Local (or unsharded) form to LLVM dialect for the CUDA runtime: the "
      "CPU lowering's front, GEMMs and collectives as runtime calls, every "
      "other linalg op a GPU kernel (mapped, outlined, NVVM, a fatbin in the "
      "library), launches and device buffers through the runtime",
      [](OpPassManager &pm, const LowerToCUDAOptions &options) {
        buildLowerToCUDAPipeline(pm, options);
      });
}
