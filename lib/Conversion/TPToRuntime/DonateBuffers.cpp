//===- DonateBuffers.cpp - Results computed in donated arguments ----------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// An argument donated to a result (`tp.donate`) gives the result its buffer.
// Before bufferization this pass makes the argument writable and, where the
// result is made by destination-style ops whose chain of destinations starts
// at a `tensor.empty`, starts it at the argument instead (an empty tensor's
// contents are undefined, so that changes no value): one-shot bufferization
// then writes the result into the argument's buffer wherever it can do so
// without changing what the program computes, and copies where it cannot,
// which tp-drop-donated-results reports.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"
#include "tp/Dialect/TP/IR/TPDialect.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace mlir::tp {
#define GEN_PASS_DEF_DONATEBUFFERSPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// Starts the chain of destinations that makes `value` at `arg`, where it
/// starts at a tensor.empty of the argument's type.
void startChainAt(Value value, BlockArgument arg) {
  Value current = value;
  while (true) {
    auto result = dyn_cast<OpResult>(current);
    if (!result)
      return; // the argument itself, or another one
    auto dps = dyn_cast<DestinationStyleOpInterface>(result.getOwner());
    if (!dps)
      return;
    OpOperand *init = dps.getTiedOpOperand(result);
    if (!init)
      return;
    Value dest = init->get();
    if (dest.getDefiningOp<tensor::EmptyOp>()) {
      if (dest.getType() == arg.getType())
        init->set(arg);
      return;
    }
    current = dest;
  }
}

struct DonateBuffersPass
    : public tp::impl::DonateBuffersPassBase<DonateBuffersPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      for (BlockArgument arg : func.getArguments()) {
        auto donated = func.getArgAttrOfType<IntegerAttr>(
            arg.getArgNumber(), TPDialect::kDonateAttrName);
        if (!donated)
          continue;
        func.setArgAttr(arg.getArgNumber(),
                        bufferization::BufferizationDialect::kWritableAttrName,
                        BoolAttr::get(&getContext(), true));
        func.walk([&](func::ReturnOp ret) {
          startChainAt(ret.getOperand(donated.getInt()), arg);
        });
      }
    }
  }
};

} // namespace
