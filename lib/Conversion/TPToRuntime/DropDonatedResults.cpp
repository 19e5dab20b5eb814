//===- DropDonatedResults.cpp - Donated results leave the signature -------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// After bufferization, a result whose argument was donated to it
// (`tp.donate`) must be that argument's buffer: the program wrote it in
// place. The result then leaves the function's signature (the entry point
// takes no buffer for it; the manifest's `donate` line tells the runtime
// where it is). Where bufferization gave the result a buffer of its own, the
// donation cannot hold, and the pass says why.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"
#include "tp/Dialect/TP/IR/TPDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::tp {
#define GEN_PASS_DEF_DROPDONATEDRESULTSPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

Value stripCasts(Value value) {
  while (auto cast = value.getDefiningOp<memref::CastOp>())
    value = cast.getSource();
  return value;
}

struct DropDonatedResultsPass
    : public tp::impl::DropDonatedResultsPassBase<DropDonatedResultsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      SmallVector<std::pair<unsigned, unsigned>> donations; // result, arg
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (auto donated = func.getArgAttrOfType<IntegerAttr>(
                i, TPDialect::kDonateAttrName))
          donations.push_back({static_cast<unsigned>(donated.getInt()), i});
      if (donations.empty())
        continue;
      bool inPlace = true;
      func.walk([&](func::ReturnOp ret) {
        for (auto [result, arg] : donations)
          if (stripCasts(ret.getOperand(result)) != func.getArgument(arg)) {
            InFlightDiagnostic diag = func.emitOpError()
                                      << "argument #" << arg
                                      << " is donated to result #" << result
                                      << ", but the result cannot be written "
                                         "in its buffer: the argument is read "
                                         "after the result is written, or "
                                         "the result is not computed into a "
                                         "buffer it can take (a reshape, a "
                                         "collective); drop tp.donate or "
                                         "compute the result in place";
            diag.attachNote(ret.getOperand(result).getLoc())
                << "the result's buffer is made here";
            inPlace = false;
          }
      });
      if (!inPlace)
        return signalPassFailure();
      // Highest first: erasing a result renumbers those after it.
      llvm::sort(donations, [](auto a, auto b) { return a.first > b.first; });
      for (auto [result, arg] : donations) {
        func.walk([&, result = result](func::ReturnOp ret) {
          ret->eraseOperand(result);
        });
        if (failed(func.eraseResult(result)))
          return signalPassFailure();
        func.removeArgAttr(arg, TPDialect::kDonateAttrName);
      }
    }
  }
};

} // namespace
