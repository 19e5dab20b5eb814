//===- LowerToCPUFuzzer.cpp - Fuzzes the --tp-lower-to-cpu pipeline -------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Every module that parses (the seeds are partitioned, local-form programs)
// runs through --tp-lower-to-cpu under the oracle of FuzzMLIR.h, then through
// tp-split-entry-points at a few ops per part (the pipeline splits only a
// deep model's driver, which no seed is), and what it lowers is translated to
// LLVM IR, as tp-compile does.
//
//===----------------------------------------------------------------------===//

#include "FuzzMLIR.h"

#include "tp/Conversion/Passes.h"

#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &context = tpfuzz::nextContext();
  mlir::OwningOpRef<mlir::ModuleOp> module = tpfuzz::parse(context, data, size);
  if (!module)
    return 0;
  if (!tpfuzz::runChecked(*module, [](mlir::OpPassManager &pm) {
        mlir::tp::buildLowerToCPUPipeline(pm);
        mlir::tp::SplitEntryPointsPassOptions split;
        split.maxPartOps = 4;
        pm.addPass(mlir::tp::createSplitEntryPointsPass(split));
      }))
    return 0;
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(*module, llvmContext, "tp-fuzz");
  (void)llvmModule;
  return 0;
}
