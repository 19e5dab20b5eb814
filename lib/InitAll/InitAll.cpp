//===- InitAll.cpp - Register every dialect and pass tp-mlir uses ---------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/InitAll.h"

#include "tp/Conversion/Passes.h"
#include "tp/Dialect/TP/IR/TPDialect.h"
#include "tp/Dialect/TP/IR/TPInterfaces.h"
#include "tp/Dialect/TP/Transforms/BufferizableOpInterfaceImpl.h"
#include "tp/Dialect/TP/Transforms/Partitioning.h"
#include "tp/Dialect/TP/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/PrettyStackTrace.h"

void mlir::tp::registerAllDialects(DialectRegistry &registry) {
  registry.insert<TPDialect>();
  // Everything mlir-opt knows (func, arith, math, tensor, linalg,
  // bufferization, memref, scf, cf, vector, gpu, nvvm, llvm, ...), with the
  // interface extensions that their passes need (bufferization, inlining,
  // conversion to LLVM).
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // Sharding rules of the upstream ops, derived from their structure.
  registerShardingRuleModels(registry);
  // How each of those ops computes on its shard (--tp-partition).
  registerPartitionModels(registry);
  // One-shot bufferization of the collectives.
  registerBufferizableOpInterfaceExternalModels(registry);
  // gpu-module-to-binary (--tp-lower-to-cuda): the NVVM target and the
  // translations of the kernels' dialects to LLVM IR.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerAllToLLVMIRTranslations(registry);
}

void mlir::tp::registerAllPasses() {
  mlir::registerAllPasses();
  registerTPPasses();
  registerTPPipelines();
  registerTPConversionPasses();
  registerTPConversionPipelines();
}

void mlir::tp::setCrashMessage() {
  llvm::setBugReportMsg(
      "tp-mlir crashed. Bad input must get a diagnostic, never a crash: "
      "please report this with the input and the command line. Crashes "
      "inside MLIR 22 itself (frames in libMLIR.so only) that tp-mlir cannot "
      "fix are listed in docs/known-issues.md.\n");
}
