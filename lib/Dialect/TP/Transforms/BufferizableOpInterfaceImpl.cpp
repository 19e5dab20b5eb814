//===- BufferizableOpInterfaceImpl.cpp - Bufferizing collectives ----------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A data collective reads its operand and produces a new value of the
// result's shape, like an op with a fresh `tensor.empty` init: its operand is
// read (never written, never aliased by the result), and its result gets a
// new allocation. Bufferized, the op keeps its name and attributes and
// writes that allocation (`into`); `tp.shardings`, which describes results,
// is dropped with the result.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/BufferizableOpInterfaceImpl.h"

#include "tp/Dialect/TP/IR/TPDialect.h"
#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::tp;

namespace {

/// Every collective bufferizes alike: it reads its operand and writes a fresh
/// buffer (CollectiveOpInterface gives the operand and the form).
template <typename OpTy>
struct CollectiveBufferization : public BufferizableOpInterface::ExternalModel<
                                     CollectiveBufferization<OpTy>, OpTy> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }

  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }

  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }

  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  FailureOr<BufferLikeType> getBufferType(Operation *op, Value value,
                                          const BufferizationOptions &,
                                          const BufferizationState &,
                                          SmallVector<Value> &) const {
    // A fresh buffer with the identity layout, in the default memory space.
    auto type = cast<RankedTensorType>(value.getType());
    return cast<BufferLikeType>(
        MemRefType::get(type.getShape(), type.getElementType()));
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto collective = cast<CollectiveOpInterface>(op);
    if (collective.hasBufferSemantics())
      return success();
    FailureOr<Value> input =
        getBuffer(rewriter, collective.getInput(), options, state);
    if (failed(input))
      return failure();
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    if (!resultType.hasStaticShape())
      return op->emitOpError()
             << "cannot be bufferized with a dynamic result shape "
             << resultType << " yet";
    rewriter.setInsertionPoint(op);
    FailureOr<Value> output = options.createAlloc(
        rewriter, op->getLoc(),
        MemRefType::get(resultType.getShape(), resultType.getElementType()),
        /*dynShape=*/{});
    if (failed(output))
      return failure();
    // Same name and attributes, the buffers as operands, no result.
    SmallVector<NamedAttribute> attrs;
    for (NamedAttribute attr : op->getAttrs())
      if (attr.getName() != TPDialect::kShardingsAttrName)
        attrs.push_back(attr);
    OperationState buffered(op->getLoc(), op->getName().getStringRef(),
                            ValueRange{*input, *output}, TypeRange{}, attrs);
    rewriter.create(buffered);
    replaceOpWithBufferizedValues(rewriter, op, *output);
    return success();
  }
};

} // namespace

template <typename... OpTys>
static void attachCollectiveBufferization(MLIRContext *ctx) {
  (OpTys::template attachInterface<CollectiveBufferization<OpTys>>(*ctx), ...);
}

void mlir::tp::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TPDialect *) {
    attachCollectiveBufferization<AllReduceOp, AllGatherOp, ReduceScatterOp,
                                  AllToAllOp, AllSliceOp>(ctx);
  });
}
