//===- SPMDFuzzer.cpp - Fuzzes the --tp-spmd pipeline ---------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Every module that parses runs through --tp-spmd (fold reshapes, propagate,
// partition, optimize collectives, canonicalize) under the oracle of
// FuzzMLIR.h: a failure must come with an error, a success must verify. The
// input's size picks the propagation: the fixed point, its `search`, or
// `auto-plan` (with a budget of 1 MB every other time), so that the
// planner meets every input shape the fixed point does.
//
//===----------------------------------------------------------------------===//

#include "FuzzMLIR.h"

#include "tp/Dialect/TP/Transforms/Passes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &context = tpfuzz::nextContext();
  mlir::OwningOpRef<mlir::ModuleOp> module = tpfuzz::parse(context, data, size);
  if (!module)
    return 0;
  // --tp-spmd at its defaults (the search on), the fixed point alone,
  // auto-plan, auto-plan under a budget.
  mlir::tp::PropagatePassOptions options;
  std::string error;
  if (mlir::failed(mlir::tp::parseSPMDOptions("", options, error)))
    __builtin_trap();
  switch (size % 4) {
  case 1:
    options.search = false;
    break;
  case 2:
    options.autoPlan = true;
    break;
  case 3:
    options.autoPlan = true;
    options.memoryPerDevice = "1MB";
    break;
  default:
    break;
  }
  tpfuzz::runChecked(*module, [&](mlir::OpPassManager &pm) {
    mlir::tp::buildSPMDPipeline(pm, options);
  });
  return 0;
}
