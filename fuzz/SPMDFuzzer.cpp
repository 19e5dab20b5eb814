//===- SPMDFuzzer.cpp - Fuzzes the --tp-spmd pipeline ---------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Every module that parses runs through --tp-spmd (fold reshapes, propagate,
// partition, optimize collectives, canonicalize) under the oracle of
// FuzzMLIR.h: a failure must come with an error, a success must verify.
//
//===----------------------------------------------------------------------===//

#include "FuzzMLIR.h"

#include "tp/Dialect/TP/Transforms/Passes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &context = tpfuzz::nextContext();
  mlir::OwningOpRef<mlir::ModuleOp> module = tpfuzz::parse(context, data, size);
  if (!module)
    return 0;
  tpfuzz::runChecked(*module, [](mlir::OpPassManager &pm) {
    mlir::tp::buildSPMDPipeline(pm, mlir::tp::SPMDPipelineOptions());
  });
  return 0;
}
