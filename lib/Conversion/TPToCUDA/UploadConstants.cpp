//===- UploadConstants.cpp - Constant buffers in device memory ------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Bufferization makes a tensor constant a memref.global that the host code
// reads with memref.get_global. On CUDA the kernels read device memory, so
// each such buffer is replaced: a splat by a fresh buffer filled on the
// device; any other, in an entry point, by a view of the constants' buffer
// the session keeps for it (its last argument, the manifest's `constants`
// line), uploaded from the host constants by the rank's first run alone
// (tprt_rt_fill_once): later runs upload nothing, and a CUDA graph of them
// can be captured. In a function the entry points call (an outlined layer),
// a fresh buffer is uploaded by every run.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/RuntimeCalls.h"
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
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
/// nothing. An i1 (a mask) takes a byte, as LLVM stores it.
std::optional<int64_t> byteSize(MemRefType type) {
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  int64_t bits = type.getElementType().getIntOrFloatBitWidth();
  if (bits == 1)
    return type.getNumElements();
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
    auto manifestAttr = module->getAttrOfType<StringAttr>(kManifestAttrName);
    std::string manifest =
        manifestAttr ? manifestAttr.getValue().str() : std::string();
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
      // An entry point (the manifest's) keeps its constants in a buffer of
      // the session's.
      bool entry =
          !func.isPrivate() &&
          findManifestFunction(manifest, func.getName()) != std::string::npos;
      SmallVector<Value> fresh;
      struct Kept {
        memref::GetGlobalOp read;
        MemRefType type;
        int64_t bytes, offset;
      };
      SmallVector<Kept> kept;
      int64_t keptBytes = 0;
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
        if (value.isSplat()) {
          Value buffer = memref::AllocOp::create(b, loc, type);
          auto scalar = arith::ConstantOp::create(
              b, loc, cast<TypedAttr>(value.getSplatValue<Attribute>()));
          linalg::FillOp::create(b, loc, ValueRange{scalar.getResult()},
                                 ValueRange{buffer});
          read.getResult().replaceAllUsesWith(buffer);
          read.erase();
          fresh.push_back(buffer);
          continue;
        }
        if (entry) {
          kept.push_back({read, type, *bytes, keptBytes});
          keptBytes += (*bytes + 63) / 64 * 64;
          continue;
        }
        Value buffer = memref::AllocOp::create(b, loc, type);
        func::FuncOp upload = declareRuntimeFunction(
            module, "tprt_rt_upload", {ptr, ptr, ptr, b.getI64Type()}, {});
        Value host =
            memref::GetGlobalOp::create(b, loc, type, read.getNameAttr());
        Value size =
            arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(*bytes));
        func::CallOp::create(b, loc, upload,
                             ValueRange{ctx, bufferPointer(b, loc, buffer),
                                        bufferPointer(b, loc, host), size});
        read.getResult().replaceAllUsesWith(buffer);
        read.erase();
        fresh.push_back(buffer);
      }
      if (!kept.empty()) {
        // The constants' buffer: the last argument; each constant a view of
        // it, uploaded where the function starts, on the rank's first run.
        auto bufferType = MemRefType::get(
            {keptBytes}, IntegerType::get(module.getContext(), 8));
        unsigned index = func.getNumArguments();
        if (failed(func.insertArgument(index, bufferType, {}, func.getLoc())))
          return WalkResult::interrupt();
        Value constants = func.getArgument(index);
        manifest =
            insertManifestLines(manifest, func.getName(),
                                "constants " + std::to_string(keptBytes) + "\n")
                .value_or(manifest);
        Block &body = func.getBody().front();
        OpBuilder b = OpBuilder::atBlockBegin(&body);
        Location loc = func.getLoc();
        func::FuncOp once = declareRuntimeFunction(
            module, "tprt_rt_fill_once", {ptr, ptr}, {b.getI32Type()});
        Value first =
            func::CallOp::create(
                b, loc, once, ValueRange{ctx, bufferPointer(b, loc, constants)})
                .getResult(0);
        Value zero = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
        Value upload = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                             first, zero);
        SmallVector<Value> views;
        for (Kept &k : kept) {
          Value offset = arith::ConstantIndexOp::create(b, loc, k.offset);
          views.push_back(memref::ViewOp::create(b, loc, k.type, constants,
                                                 offset, ValueRange{}));
        }
        auto ifOp = scf::IfOp::create(b, loc, upload, /*withElse=*/false);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&ifOp.getThenRegion().front());
          func::FuncOp copy = declareRuntimeFunction(
              module, "tprt_rt_upload", {ptr, ptr, ptr, b.getI64Type()}, {});
          for (auto [k, view] : llvm::zip(kept, views)) {
            Value host = memref::GetGlobalOp::create(b, loc, k.type,
                                                     k.read.getNameAttr());
            Value size =
                arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(k.bytes));
            func::CallOp::create(b, loc, copy,
                                 ValueRange{ctx, bufferPointer(b, loc, view),
                                            bufferPointer(b, loc, host), size});
          }
        }
        for (auto [k, view] : llvm::zip(kept, views)) {
          k.read.getResult().replaceAllUsesWith(view);
          k.read.erase();
        }
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
    if (auto text = module->getAttrOfType<StringAttr>(kManifestAttrName);
        text && text.getValue() != manifest)
      module->setAttr(kManifestAttrName,
                      StringAttr::get(module.getContext(), manifest));
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
