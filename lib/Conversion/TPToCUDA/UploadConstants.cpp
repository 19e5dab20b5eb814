//===- UploadConstants.cpp - Constant buffers in device memory ------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Bufferization makes a tensor constant a memref.global that the host code
// reads with memref.get_global. On CUDA the kernels read device memory, so
// each such buffer is replaced by a fresh one, filled on the device (a
// splat) or uploaded from the host constant through tprt_rt_upload.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/RuntimeCalls.h"
#include "tp/Conversion/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tp {
#define GEN_PASS_DEF_UPLOADCONSTANTSPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// Bytes of a statically shaped memref of int or float elements, or
/// nothing.
std::optional<int64_t> byteSize(MemRefType type) {
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  int64_t bits = type.getElementType().getIntOrFloatBitWidth();
  if (bits % 8 != 0)
    return std::nullopt;
  return type.getNumElements() * (bits / 8);
}

struct UploadConstantsPass
    : public tp::impl::UploadConstantsPassBase<UploadConstantsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = module.getContext();
    Type ptr = LLVM::LLVMPointerType::get(context);
    SymbolTableCollection symbols;
    WalkResult result = module.walk([&](func::FuncOp func) {
      if (func.isExternal())
        return WalkResult::advance();
      SmallVector<memref::GetGlobalOp> reads;
      func.walk([&](memref::GetGlobalOp op) { reads.push_back(op); });
      if (reads.empty())
        return WalkResult::advance();
      if (func.getNumArguments() == 0 || func.getArgument(0).getType() != ptr) {
        func.emitOpError() << "reads constant buffers but has no rank context "
                              "(run tp-convert-collectives-to-runtime first)";
        return WalkResult::interrupt();
      }
      Value ctx = func.getArgument(0);
      SmallVector<Value> fresh;
      for (memref::GetGlobalOp read : reads) {
        auto global = symbols.lookupNearestSymbolFrom<memref::GlobalOp>(
            read, read.getNameAttr());
        auto type = dyn_cast<MemRefType>(read.getType());
        auto value = global ? dyn_cast_or_null<DenseElementsAttr>(
                                  global.getInitialValueAttr())
                            : DenseElementsAttr();
        std::optional<int64_t> bytes =
            type ? byteSize(type) : std::optional<int64_t>();
        if (!global || !global.getConstant() || !value || !bytes ||
            !type.getLayout().isIdentity()) {
          read.emitOpError()
              << "reads " << read.getNameAttr()
              << ", which is not a dense constant of a statically shaped, "
                 "identity-layout buffer of int or float elements; the CUDA "
                 "lowering uploads only those";
          return WalkResult::interrupt();
        }
        OpBuilder b(read);
        Location loc = read.getLoc();
        Value buffer = memref::AllocOp::create(b, loc, type);
        if (value.isSplat()) {
          auto scalar = arith::ConstantOp::create(
              b, loc, cast<TypedAttr>(value.getSplatValue<Attribute>()));
          linalg::FillOp::create(b, loc, ValueRange{scalar.getResult()},
                                 ValueRange{buffer});
        } else {
          func::FuncOp upload = declareRuntimeFunction(
              module, "tprt_rt_upload", {ptr, ptr, ptr, b.getI64Type()}, {});
          Value host =
              memref::GetGlobalOp::create(b, loc, type, read.getNameAttr());
          Value size =
              arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(*bytes));
          func::CallOp::create(b, loc, upload,
                               ValueRange{ctx, bufferPointer(b, loc, buffer),
                                          bufferPointer(b, loc, host), size});
        }
        read.getResult().replaceAllUsesWith(buffer);
        read.erase();
        fresh.push_back(buffer);
      }
      // Freed where the function returns (the values a function returns are
      // copied to its out-parameters before; bufferization made it so).
      func.walk([&](func::ReturnOp ret) {
        OpBuilder b(ret);
        for (Value buffer : fresh)
          memref::DeallocOp::create(b, ret.getLoc(), buffer);
      });
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
