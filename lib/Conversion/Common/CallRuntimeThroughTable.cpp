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
      std::optional<int64_t> slot = tp::runtimeSlotOffset(decl.getName());
      if (!slot) {
        decl.emitError() << "'" << decl.getName()
                         << "' is not an entry point of the tprt runtime "
                            "(tprt_rt_table, ABI version "
                         << TPRT_RT_ABI_VERSION << ")";
        return signalPassFailure();
      }
      int64_t offset = *slot;
      LLVM::LLVMFunctionType type = decl.getFunctionType();
      // The runtime's own type (tprt_rt_calls.def), as the LLVM dialect
      // writes it.
      LLVM::LLVMFunctionType expected =
          tp::runtimeLLVMFunctionType(&getContext(), decl.getName());
      if (type != expected) {
        decl.emitError() << "'" << decl.getName() << "' is declared as " << type
                         << "; the runtime's entry point "
                         << "(tprt_rt_calls.def) is " << expected;
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
