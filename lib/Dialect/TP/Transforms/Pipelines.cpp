//===- Pipelines.cpp - tp-mlir pass pipelines -----------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::tp;

LogicalResult mlir::tp::parseSPMDOptions(StringRef text,
                                         PropagatePassOptions &options,
                                         std::string &error,
                                         llvm::StringSet<> *given) {
  options = PropagatePassOptions();
  options.search = true;
  llvm::StringSet<> named;
  if (failed(parsePropagateOptions(text, options, &named, error)))
    return failure();
  // The search does not plan sequence parallelism's reduce-scatters: on by
  // default, it gives way; asked for, it is --tp-propagate's error.
  if (options.sequenceParallel && !named.contains("search"))
    options.search = false;
  if (given)
    *given = std::move(named);
  return success();
}

void mlir::tp::buildSPMDPipeline(OpPassManager &pm,
                                 const PropagatePassOptions &options) {
  pm.addPass(createFoldReshapesPass());
  pm.addPass(createPropagatePass(options));
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
  // The options are --tp-propagate's: the text goes to its parser.
  registerPassPipeline(
      "tp-spmd",
      "Global form to per-device (SPMD) form: fold reshapes, propagate "
      "shardings, partition, optimize collectives, canonicalize. Its options "
      "are --tp-propagate's, with search on unless sequence-parallel",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        PropagatePassOptions options;
        std::string error;
        if (failed(parseSPMDOptions(text, options, error)))
          return errorHandler(error);
        buildSPMDPipeline(pm, options);
        return success();
      },
      // --help lists them under --tp-propagate.
      [](function_ref<void(const ::mlir::detail::PassOptions &)>) {});
}
