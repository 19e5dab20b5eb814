//===- LowerParallelCalls.cpp - Range functions run by tprt_rt_parallel_for
//===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// tp-outline-parallel-loops leaves calls `F(lo, hi, args...)` of functions
// marked tp.parallel_body. The runtime's tprt_rt_parallel_for takes one
// signature for every F, `void task(void *args, int64_t lo, int64_t hi)`: so
// each F gets a task that unpacks its arguments from a struct and calls it,
// and each call packs them into such a struct on the caller's stack.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/RuntimeCalls.h"
#include "tp/Conversion/Passes.h"
#include "tp/Dialect/TP/IR/TPDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tp {
#define GEN_PASS_DEF_LOWERPARALLELCALLSPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

constexpr StringLiteral kParallelFor = "tprt_rt_parallel_for";

struct LowerParallelCallsPass
    : public tp::impl::LowerParallelCallsPassBase<LowerParallelCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    SymbolTable symbols(module);
    Type i64 = IntegerType::get(context, 64);
    SmallVector<LLVM::LLVMFuncOp> bodies;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (func->hasAttr(TPDialect::kParallelBodyAttrName))
        bodies.push_back(func);
    if (bodies.empty())
      return;
    OpBuilder b(context);
    // void tprt_rt_parallel_for(ctx, task, args, lo, hi)
    auto runtime = symbols.lookup<LLVM::LLVMFuncOp>(kParallelFor);
    if (!runtime) {
      b.setInsertionPointToEnd(module.getBody());
      runtime = LLVM::LLVMFuncOp::create(
          b, module.getLoc(), kParallelFor,
          runtimeLLVMFunctionType(context, kParallelFor));
      symbols.insert(runtime);
    }
    for (LLVM::LLVMFuncOp body : bodies) {
      LLVM::LLVMFunctionType type = body.getFunctionType();
      ArrayRef<Type> params = type.getParams();
      if (params.size() < 2 || params[0] != i64 || params[1] != i64 ||
          !isa<LLVM::LLVMVoidType>(type.getReturnType()) || type.isVarArg()) {
        body.emitError() << "'" << TPDialect::kParallelBodyAttrName
                         << "' function must take (i64 lo, i64 hi, ...) and "
                            "return nothing, got "
                         << type;
        return signalPassFailure();
      }
      auto args =
          LLVM::LLVMStructType::getLiteral(context, params.drop_front(2));
      // The calls there are before the task adds its own.
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(body, module);
      SmallVector<LLVM::CallOp> calls;
      for (const SymbolTable::SymbolUse &use : *uses) {
        auto call = dyn_cast<LLVM::CallOp>(use.getUser());
        if (!call || call.getCallee() != body.getName()) {
          use.getUser()->emitError()
              << "uses '" << TPDialect::kParallelBodyAttrName << "' function @"
              << body.getName() << " other than by a direct call";
          return signalPassFailure();
        }
        calls.push_back(call);
      }
      LLVM::LLVMFuncOp task = makeTask(b, body, args, symbols);
      for (LLVM::CallOp call : calls)
        if (failed(lowerCall(b, call, task, args, runtime)))
          return signalPassFailure();
      body->removeAttr(TPDialect::kParallelBodyAttrName);
    }
  }

  /// `@<body>_task(ptr %args, i64 %lo, i64 %hi)`: body(lo, hi, *args...).
  LLVM::LLVMFuncOp makeTask(OpBuilder &b, LLVM::LLVMFuncOp body,
                            LLVM::LLVMStructType args, SymbolTable &symbols) {
    MLIRContext *context = b.getContext();
    Location loc = body.getLoc();
    Type ptr = LLVM::LLVMPointerType::get(context);
    Type i64 = IntegerType::get(context, 64);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(body);
    auto task = LLVM::LLVMFuncOp::create(
        b, loc, (body.getName() + "_task").str(),
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                    {ptr, i64, i64}),
        LLVM::Linkage::Internal);
    symbols.insert(task);
    Block *entry = task.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    SmallVector<Value> operands{entry->getArgument(1), entry->getArgument(2)};
    for (auto [i, field] : llvm::enumerate(args.getBody())) {
      Value slot = LLVM::GEPOp::create(
          b, loc, ptr, args, entry->getArgument(0),
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
      operands.push_back(LLVM::LoadOp::create(b, loc, field, slot));
    }
    LLVM::CallOp::create(b, loc, body, operands);
    LLVM::ReturnOp::create(b, loc, ValueRange{});
    return task;
  }

  LogicalResult lowerCall(OpBuilder &b, LLVM::CallOp call,
                          LLVM::LLVMFuncOp task, LLVM::LLVMStructType args,
                          LLVM::LLVMFuncOp runtime) {
    Location loc = call.getLoc();
    Type ptr = LLVM::LLVMPointerType::get(b.getContext());
    auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
    if (!caller || caller.isExternal() || caller.getNumArguments() == 0 ||
        caller.getArgument(0).getType() != ptr ||
        caller->hasAttr(TPDialect::kParallelBodyAttrName))
      return call.emitError()
             << "calls a '" << TPDialect::kParallelBodyAttrName
             << "' function from a function without a rank context (a "
                "leading !llvm.ptr argument)";
    Value ctx = caller.getArgument(0);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&caller.getBody().front());
    Value one = LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                         b.getI64IntegerAttr(1));
    Value slots = LLVM::AllocaOp::create(b, loc, ptr, args, one);
    b.setInsertionPoint(call);
    ValueRange operands = call.getArgOperands();
    for (auto [i, value] : llvm::enumerate(operands.drop_front(2))) {
      Value slot = LLVM::GEPOp::create(
          b, loc, ptr, args, slots,
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
      LLVM::StoreOp::create(b, loc, value, slot);
    }
    Value address = LLVM::AddressOfOp::create(b, loc, task);
    LLVM::CallOp::create(
        b, loc, runtime,
        ValueRange{ctx, address, slots, operands[0], operands[1]});
    call.erase();
    return success();
  }
};

} // namespace
