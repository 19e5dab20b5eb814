//===- CopyRepeatedResults.cpp - Every result its own value ---------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// `return %y, %y` becomes `return %y, copy(%y)`: results become
// out-parameters, one buffer each, and MLIR 22's
// buffer-results-to-out-params (with hoisted allocations, as the CPU
// pipeline runs it) crashes on a buffer returned twice.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::tp {
#define GEN_PASS_DEF_COPYREPEATEDRESULTSPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

struct CopyRepeatedResultsPass
    : public tp::impl::CopyRepeatedResultsPassBase<CopyRepeatedResultsPass> {
  void runOnOperation() override {
    getOperation()->walk([&](func::ReturnOp ret) {
      llvm::SmallPtrSet<Value, 4> seen;
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        auto type = dyn_cast<RankedTensorType>(v.getType());
        if (seen.insert(v).second || !type)
          continue;
        OpBuilder b(ret);
        Location loc = ret.getLoc();
        Value empty = tensor::EmptyOp::create(
            b, loc, tensor::getMixedSizes(b, loc, v), type.getElementType());
        operand.set(linalg::CopyOp::create(b, loc, v, empty).getResult(0));
      }
    });
  }
};

} // namespace
