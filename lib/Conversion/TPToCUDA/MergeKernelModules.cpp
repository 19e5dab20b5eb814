//===- MergeKernelModules.cpp - One GPU module per program ----------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// gpu-kernel-outlining makes one gpu.module per kernel, so a program's image
// was one fatbin per kernel, each a module a rank loads (cuModuleLoadData)
// and keeps: 22 for a GPT-2 block. This pass moves every kernel into one
// gpu.module, which gpu-module-to-binary compiles into one image: a rank
// loads its program with one module load.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tp {
#define GEN_PASS_DEF_MERGEKERNELMODULESPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

struct MergeKernelModulesPass
    : public tp::impl::MergeKernelModulesPassBase<MergeKernelModulesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> kernels(module.getOps<gpu::GPUModuleOp>());
    if (kernels.size() < 2)
      return;
    for (gpu::GPUModuleOp kernel : kernels)
      if (kernel->getAttr("targets") || kernel.getOffloadingHandlerAttr()) {
        kernel.emitError("tp-merge-kernel-modules: gpu.module @")
            << kernel.getName()
            << " already has targets or an offloading handler; merge the "
               "kernel modules before gpu-*-attach-target";
        return signalPassFailure();
      }

    // The merged module takes the first one's place.
    SymbolTable top(module);
    OpBuilder builder(kernels.front());
    auto merged =
        gpu::GPUModuleOp::create(builder, kernels.front().getLoc(), mergedName);
    top.insert(merged);
    SymbolTable table(merged);

    // Each kernel is named after its old module (unique in the program);
    // each other symbol keeps its name, renamed where it collides.
    DenseMap<Attribute, SymbolRefAttr> newRefs;
    for (gpu::GPUModuleOp kernel : kernels) {
      StringAttr moduleName = kernel.getNameAttr();
      // First, in its own module, each helper (a device function, a global)
      // whose name the merged module has takes a free one, and the module's
      // kernel calls it by that name.
      for (Operation &op : kernel.getBody()->getOperations()) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol ||
            (isa<gpu::GPUFuncOp>(op) && cast<gpu::GPUFuncOp>(op).isKernel()))
          continue;
        StringAttr oldName = symbol.getNameAttr();
        if (!table.lookup(oldName))
          continue;
        std::string candidate;
        for (unsigned n = 0;; ++n) {
          candidate = (oldName.getValue() + "_" + Twine(n)).str();
          if (!table.lookup(candidate) &&
              !SymbolTable::lookupSymbolIn(kernel, candidate))
            break;
        }
        StringAttr newName = StringAttr::get(&getContext(), candidate);
        if (failed(
                SymbolTable::replaceAllSymbolUses(oldName, newName, kernel))) {
          op.emitError("tp-merge-kernel-modules: cannot rename @")
              << oldName.getValue();
          return signalPassFailure();
        }
        symbol.setName(newName);
      }
      // Then everything moves; the kernel is named after its old module
      // (unique in the program).
      for (Operation &op :
           llvm::make_early_inc_range(kernel.getBody()->getOperations())) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        op.remove();
        merged.getBody()->push_back(&op);
        if (!symbol)
          continue;
        if (isa<gpu::GPUFuncOp>(op) && cast<gpu::GPUFuncOp>(op).isKernel()) {
          newRefs[SymbolRefAttr::get(
              moduleName, {FlatSymbolRefAttr::get(symbol.getNameAttr())})] =
              SymbolRefAttr::get(merged.getNameAttr(),
                                 {FlatSymbolRefAttr::get(moduleName)});
          symbol.setName(moduleName);
        }
        table.insert(&op, merged.getBody()->end());
      }
      top.erase(kernel);
    }

    // The launches name the kernels where they are now.
    WalkResult walk = module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = newRefs.find(launch.getKernel());
      if (it == newRefs.end()) {
        launch.emitError("tp-merge-kernel-modules: no kernel ")
            << launch.getKernel();
        return WalkResult::interrupt();
      }
      launch.setKernelAttr(it->second);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
