//===- EmitEntryPoints.cpp - One calling convention for every program -----===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// For each function of the manifest: `tprt_entry_<f>(ctx, buffers)` loads the
// buffer pointers of the arguments, then of the results (out-parameters),
// from the array `buffers` and calls `<f>(ctx, ...)`, which becomes internal
// (LLVM inlines it into its entry point). The manifest becomes the
// global string `tprt_manifest`; the tp.mesh ops, which it describes, go.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/RuntimeCalls.h"
#include "tp/Conversion/Passes.h"

#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::tp {
#define GEN_PASS_DEF_EMITENTRYPOINTSPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

struct EmitEntryPointsPass
    : public tp::impl::EmitEntryPointsPassBase<EmitEntryPointsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    auto manifest = module->getAttrOfType<StringAttr>(kManifestAttrName);
    if (!manifest) {
      module.emitError() << "no '" << kManifestAttrName
                         << "' attribute; run --tp-record-manifest first";
      return signalPassFailure();
    }
    OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Type voidType = LLVM::LLVMVoidType::get(ctx);

    // The functions of the manifest, by their `func` lines.
    SmallVector<StringRef> lines;
    manifest.getValue().split(lines, '\n');
    for (StringRef line : lines) {
      if (!line.consume_front("func "))
        continue;
      std::optional<std::string> name = parseManifestName(line);
      if (!name) {
        module.emitError() << "malformed manifest line 'func " << line << "'";
        return signalPassFailure();
      }
      auto func = module.lookupSymbol<LLVM::LLVMFuncOp>(*name);
      if (!func) {
        module.emitError() << "function '" << *name
                           << "' of the manifest is not in the module";
        return signalPassFailure();
      }
      LLVM::LLVMFunctionType type = func.getFunctionType();
      if (!isa<LLVM::LLVMVoidType>(type.getReturnType()) ||
          llvm::any_of(type.getParams(), [&](Type t) { return t != ptr; })) {
        func.emitError() << "cannot be an entry point: expected (ptr, ...) -> "
                            "void after lowering (context, buffer pointers, "
                            "results as out-parameters), got "
                         << type;
        return signalPassFailure();
      }
      auto entryType = LLVM::LLVMFunctionType::get(voidType, {ptr, ptr});
      auto entry = LLVM::LLVMFuncOp::create(
          b, func.getLoc(), (kEntryPrefix + *name).str(), entryType);
      Block *body = entry.addEntryBlock(b);
      OpBuilder eb = OpBuilder::atBlockEnd(body);
      SmallVector<Value> args = {body->getArgument(0)};
      for (unsigned i = 1; i < type.getNumParams(); ++i) {
        Value slot = LLVM::GEPOp::create(
            eb, func.getLoc(), ptr, ptr, body->getArgument(1),
            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i - 1)});
        args.push_back(LLVM::LoadOp::create(eb, func.getLoc(), ptr, slot));
      }
      LLVM::CallOp::create(eb, func.getLoc(), func, args);
      LLVM::ReturnOp::create(eb, func.getLoc(), ValueRange{});
      // Reached through its entry point only: LLVM inlines it there, and a
      // model's weights are not passed one by one (arguments on the stack,
      // which code generation handles in time quadratic in their number).
      // A deep model's driver is cut into parts by tp-split-entry-points.
      func.setLinkage(LLVM::Linkage::Internal);
    }

    // The manifest, zero-terminated.
    std::string text = manifest.getValue().str();
    text.push_back('\0');
    auto arrayType =
        LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), text.size());
    LLVM::GlobalOp::create(b, module.getLoc(), arrayType, /*isConstant=*/true,
                           LLVM::Linkage::External, "tprt_manifest",
                           b.getStringAttr(text));
    module->removeAttr(kManifestAttrName);
    // Meshes live on in the manifest.
    for (MeshOp mesh : llvm::to_vector(module.getOps<MeshOp>()))
      mesh->erase();
  }
};

} // namespace
