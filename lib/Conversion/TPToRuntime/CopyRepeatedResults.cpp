//===- CopyRepeatedResults.cpp - Every result its own value ---------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// `return %y, %y` becomes `return %y, copy(%y)`: results become
// out-parameters, one buffer each, and MLIR 22's
// buffer-results-to-out-params (with hoisted allocations, as the CPU
// pipeline runs it) crashes on a buffer returned twice. Distinct tensors can
// still bufferize to one buffer (a returned `tensor.empty` that an op also
// writes into in place), so the pipelines run this pass on tensors before
// bufferization and on memrefs after it.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
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
        if (seen.insert(v).second)
          continue;
        OpBuilder b(ret);
        Location loc = ret.getLoc();
        if (auto type = dyn_cast<RankedTensorType>(v.getType())) {
          Value empty = tensor::EmptyOp::create(
              b, loc, tensor::getMixedSizes(b, loc, v), type.getElementType());
          operand.set(linalg::CopyOp::create(b, loc, v, empty).getResult(0));
        } else if (auto type = dyn_cast<MemRefType>(v.getType());
                   type && type.getLayout().isIdentity()) {
          // Function boundaries have identity layouts (the pipelines
          // bufferize them so), which a fresh buffer has too.
          SmallVector<Value> dynamicSizes;
          for (auto [i, size] : llvm::enumerate(type.getShape()))
            if (ShapedType::isDynamic(size))
              dynamicSizes.push_back(memref::DimOp::create(b, loc, v, i));
          Value copy = memref::AllocOp::create(b, loc, type, dynamicSizes);
          memref::CopyOp::create(b, loc, v, copy);
          operand.set(copy);
        }
      }
    });
  }
};

} // namespace
