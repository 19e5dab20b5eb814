//===- TargetPipelines.cpp - Each target's lowering by its name -----------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// buildTargetPipeline: the target registry (tprt_targets.def) to each
// target's build<Name>Target, defined beside its pipeline (LowerToCPU.cpp,
// LowerToCUDA.cpp).
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "tp/Conversion/Targets.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::tp;

LogicalResult mlir::tp::buildTargetPipeline(OpPassManager &pm,
                                            const TargetInfo &target,
                                            const TargetLowering &options,
                                            std::string &error) {
#define TPRT_TARGET(id, Id, onDevice, defaultBackend, description)             \
  if (target.name == #id)                                                      \
    return build##Id##Target(pm, options, error);
#include "tprt/tprt_targets.def"
  error = ("no pipeline for target '" + target.name + "'").str();
  return failure();
}
