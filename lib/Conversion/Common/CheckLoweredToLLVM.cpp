//===- CheckLoweredToLLVM.cpp - --tp-check-lowered-to-llvm ----------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The lowerings end in the LLVM dialect, which is all the translation to LLVM
// IR takes. An op that no conversion handles passes through unchanged; this
// pass reports it (each op kind once) before the translation sees it.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::tp {
#define GEN_PASS_DEF_CHECKLOWEREDTOLLVMPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

struct CheckLoweredToLLVMPass
    : public tp::impl::CheckLoweredToLLVMPassBase<CheckLoweredToLLVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::DenseSet<OperationName> reported;
    module.walk([&](Operation *op) {
      if (op == module || isa<LLVM::LLVMDialect>(op->getDialect()) ||
          !reported.insert(op->getName()).second)
        return;
      op->emitOpError() << "is not lowered to the LLVM dialect: the lowering "
                           "converts no '"
                        << op->getName().getDialectNamespace()
                        << "' op (a model computes with the func, tensor, "
                           "linalg, arith, math and tp dialects)";
    });
    if (!reported.empty())
      signalPassFailure();
  }
};

} // namespace
