//===- CallRuntimeThroughTable.cpp - Runtime calls through the context ----===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Lowered code calls the runtime as `llvm.call @tprt_rt_X(%ctx, ...)`. A
// program library must not reference the runtime's symbols (it would then
// load only where the runtime sits in the global symbol scope), so each such
// call loads the function from the table the rank context points to
// (tprt_rt_table in tprt.h, whose field offsets this pass reads) and calls
// it indirectly; the declarations go.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/RuntimeCalls.h"
#include "tp/Conversion/Passes.h"

#include "tprt/tprt.h"

#include "llvm/ADT/StringSwitch.h"

#include <cstddef>

namespace mlir::tp {
#define GEN_PASS_DEF_CALLRUNTIMETHROUGHTABLEPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

static_assert(mlir::tp::kRuntimeAbiVersion == TPRT_RT_ABI_VERSION,
              "the compiler and the runtime disagree on the call table");

namespace {

constexpr int64_t kNoSlot = -1;

/// The byte offset of runtime function `name` in tprt_rt_table.
int64_t slotOffset(StringRef name) {
  return llvm::StringSwitch<int64_t>(name)
      .Case("tprt_rt_all_reduce", offsetof(tprt_rt_table, all_reduce))
      .Case("tprt_rt_all_gather", offsetof(tprt_rt_table, all_gather))
      .Case("tprt_rt_reduce_scatter", offsetof(tprt_rt_table, reduce_scatter))
      .Case("tprt_rt_all_to_all", offsetof(tprt_rt_table, all_to_all))
      .Case("tprt_rt_all_slice", offsetof(tprt_rt_table, all_slice))
      .Case("tprt_rt_axis_index", offsetof(tprt_rt_table, axis_index))
      .Case("tprt_rt_gemm", offsetof(tprt_rt_table, gemm))
      .Case("tprt_rt_alloc", offsetof(tprt_rt_table, alloc))
      .Case("tprt_rt_free", offsetof(tprt_rt_table, free))
      .Case("tprt_rt_upload", offsetof(tprt_rt_table, upload))
      .Case("tprt_rt_launch", offsetof(tprt_rt_table, launch))
      .Case("tprt_rt_index_error", offsetof(tprt_rt_table, index_error))
      .Case("tprt_rt_fill_once", offsetof(tprt_rt_table, fill_once))
      .Case("tprt_rt_parallel_for", offsetof(tprt_rt_table, parallel_for))
      .Default(kNoSlot);
}

struct CallRuntimeThroughTablePass
    : public tp::impl::CallRuntimeThroughTablePassBase<
          CallRuntimeThroughTablePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Type ptr = LLVM::LLVMPointerType::get(&getContext());
    Type i8 = IntegerType::get(&getContext(), 8);
    SmallVector<LLVM::LLVMFuncOp> declarations;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (func.isExternal() && func.getName().starts_with("tprt_rt_"))
        declarations.push_back(func);
    for (LLVM::LLVMFuncOp decl : declarations) {
      int64_t offset = slotOffset(decl.getName());
      if (offset == kNoSlot) {
        decl.emitError() << "'" << decl.getName()
                         << "' is not an entry point of the tprt runtime "
                            "(tprt_rt_table, ABI version "
                         << TPRT_RT_ABI_VERSION << ")";
        return signalPassFailure();
      }
      LLVM::LLVMFunctionType type = decl.getFunctionType();
      if (type.getNumParams() == 0 || type.getParamType(0) != ptr) {
        decl.emitError() << "'" << decl.getName()
                         << "' must take the rank context (!llvm.ptr) first";
        return signalPassFailure();
      }
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(decl, module);
      SmallVector<LLVM::CallOp> calls;
      for (const SymbolTable::SymbolUse &use : *uses) {
        auto call = dyn_cast<LLVM::CallOp>(use.getUser());
        if (!call) {
          use.getUser()->emitError()
              << "takes the address of runtime function '" << decl.getName()
              << "'; programs may only call it";
          return signalPassFailure();
        }
        calls.push_back(call);
      }
      for (LLVM::CallOp call : calls) {
        OpBuilder b(call);
        Location loc = call.getLoc();
        Value ctx = call.getArgOperands()[0];
        Value table = LLVM::LoadOp::create(b, loc, ptr, ctx);
        Value slot = LLVM::GEPOp::create(
            b, loc, ptr, i8, table,
            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(offset)},
            LLVM::GEPNoWrapFlags::inbounds);
        Value fn = LLVM::LoadOp::create(b, loc, ptr, slot);
        SmallVector<Value> operands = {fn};
        llvm::append_range(operands, call.getArgOperands());
        auto indirect = LLVM::CallOp::create(b, loc, type, operands);
        call.replaceAllUsesWith(indirect.getResults());
        call.erase();
      }
      decl.erase();
    }
  }
};

} // namespace
