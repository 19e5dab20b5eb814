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
// can be captured. A function the entry points call (an outlined layer)
// gets a constants' argument too, which each caller passes as a view of its
// own: its constants are part of its callers', uploaded once with them.
// Only a function whose callers are not all known (a public function that
// is no entry point, one whose symbol is used other than by a call, one in
// a cycle of calls) uploads a fresh buffer in every run.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/Buffers.h"
#include "tp/Conversion/Common/RuntimeCalls.h"
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::tp {
#define GEN_PASS_DEF_UPLOADCONSTANTSPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// A constant that is not a splat, read by a function, and where it lies in
/// the function's constants' buffer.
struct Leaf {
  FlatSymbolRefAttr global;
  MemRefType type;
  int64_t bytes = 0, offset = 0;
};

/// A function's constants' buffer: its own constants, then one block per
/// callee that has constants (the callee's buffer), each 64-byte aligned.
struct Layout {
  llvm::MapVector<Attribute, int64_t> own;       // global -> offset
  llvm::MapVector<Operation *, int64_t> callees; // callee -> offset
  SmallVector<Leaf> leaves;                      // every constant, nested
  int64_t bytes = 0;
};

int64_t alignUp(int64_t bytes) { return (bytes + 63) / 64 * 64; }

/// The pass's work on one module.
struct ConstantsRewriter {
  explicit ConstantsRewriter(ModuleOp module) : module(module) {}

  ModuleOp module;
  SymbolTableCollection symbols;
  /// The functions whose constants live in a buffer they are passed: the
  /// entry points, and the functions only they (transitively) call.
  DenseSet<Operation *> kept;
  DenseMap<Operation *, Layout> layouts;
  /// Each function's reads of constants that are not splats, checked.
  DenseMap<Operation *, SmallVector<memref::GetGlobalOp>> nonSplat;

  /// The layout of `func`, its callees' first; functions in a cycle of
  /// calls leave `kept` (their callers do not count on their layout).
  const Layout &layoutOf(func::FuncOp func, DenseSet<Operation *> &open) {
    if (auto it = layouts.find(func); it != layouts.end())
      return it->second;
    open.insert(func);
    Layout layout;
    for (memref::GetGlobalOp read : nonSplat.lookup(func)) {
      if (layout.own.count(read.getNameAttr()))
        continue;
      auto type = cast<MemRefType>(read.getType());
      int64_t bytes = *staticByteSize(type);
      layout.own[read.getNameAttr()] = layout.bytes;
      layout.leaves.push_back({read.getNameAttr(), type, bytes, layout.bytes});
      layout.bytes += alignUp(bytes);
    }
    func.walk([&](func::CallOp call) {
      auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (!callee || !kept.contains(callee) || layout.callees.count(callee))
        return;
      if (open.contains(callee)) {
        kept.erase(callee);
        return;
      }
      const Layout &inner = layoutOf(callee, open);
      if (inner.bytes == 0 || !kept.contains(callee))
        return;
      layout.callees[callee] = layout.bytes;
      for (const Leaf &leaf : inner.leaves)
        layout.leaves.push_back(
            {leaf.global, leaf.type, leaf.bytes, layout.bytes + leaf.offset});
      layout.bytes += alignUp(inner.bytes);
    });
    open.erase(func);
    return layouts[func] = std::move(layout);
  }

  LogicalResult run() {
    MLIRContext *context = module.getContext();
    Type ptr = LLVM::LLVMPointerType::get(context);
    auto manifestAttr = module->getAttrOfType<StringAttr>(kManifestAttrName);
    std::string manifest =
        manifestAttr ? manifestAttr.getValue().str() : std::string();

    // Every read checked; a function that reads any constant needs the
    // rank context (uploads and fills are runtime calls).
    SmallVector<func::FuncOp> funcs;
    DenseMap<Operation *, SmallVector<memref::GetGlobalOp>> reads;
    WalkResult checked = module.walk([&](func::FuncOp func) {
      if (func.isExternal())
        return WalkResult::advance();
      funcs.push_back(func);
      func.walk([&](memref::GetGlobalOp op) { reads[func].push_back(op); });
      if (!reads.count(func))
        return WalkResult::advance();
      if (func.getNumArguments() == 0 || func.getArgument(0).getType() != ptr) {
        func.emitOpError() << "reads constant buffers but has no rank context "
                              "(run tp-convert-collectives-to-runtime first)";
        return WalkResult::interrupt();
      }
      for (memref::GetGlobalOp read : reads[func]) {
        auto global = symbols.lookupNearestSymbolFrom<memref::GlobalOp>(
            read, read.getNameAttr());
        auto type = dyn_cast<MemRefType>(read.getType());
        auto value = global ? dyn_cast_or_null<DenseElementsAttr>(
                                  global.getInitialValueAttr())
                            : DenseElementsAttr();
        if (!global || !global.getConstant() || !value || !type ||
            !staticByteSize(type) || !type.getLayout().isIdentity()) {
          read.emitOpError()
              << "reads " << read.getNameAttr()
              << ", which is not a dense constant of a statically shaped, "
                 "identity-layout buffer of int or float elements; the CUDA "
                 "lowering uploads only those";
          return WalkResult::interrupt();
        }
        if (!value.isSplat())
          nonSplat[func].push_back(read);
      }
      return WalkResult::advance();
    });
    if (checked.wasInterrupted())
      return failure();

    // Which functions are passed their constants: the entry points (the
    // manifest's), and private functions that only calls use.
    for (func::FuncOp func : funcs) {
      bool entry =
          !func.isPrivate() &&
          findManifestFunction(manifest, func.getName()) != std::string::npos;
      if (entry) {
        kept.insert(func);
        continue;
      }
      if (!func.isPrivate())
        continue;
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(func, module);
      if (!uses || uses->empty())
        continue;
      if (llvm::all_of(*uses, [&](const SymbolTable::SymbolUse &use) {
            auto call = dyn_cast<func::CallOp>(use.getUser());
            return call && call->getParentOfType<func::FuncOp>();
          }))
        kept.insert(func);
    }
    DenseSet<Operation *> open;
    for (func::FuncOp func : funcs)
      if (kept.contains(func))
        (void)layoutOf(func, open);
    // A function leaves `kept` only while its layout is open, and a caller
    // counts on a callee's layout only once it is done: every kept caller's
    // layout agrees with the arguments its callees get.

    for (func::FuncOp func : funcs) {
      const Layout *layout = nullptr;
      if (kept.contains(func))
        if (auto it = layouts.find(func);
            it != layouts.end() && it->second.bytes > 0)
          layout = &it->second;
      if (failed(rewrite(func, layout, manifest)))
        return failure();
    }
    if (auto text = module->getAttrOfType<StringAttr>(kManifestAttrName);
        text && text.getValue() != manifest)
      module->setAttr(kManifestAttrName, StringAttr::get(context, manifest));
    return success();
  }

  /// Rewrites `func`'s reads of constants and its calls of functions passed
  /// their constants; with a `layout`, `func` is passed its own, and an
  /// entry point uploads them all on the rank's first run.
  LogicalResult rewrite(func::FuncOp func, const Layout *layout,
                        std::string &manifest) {
    MLIRContext *context = module.getContext();
    Type ptr = LLVM::LLVMPointerType::get(context);
    SmallVector<memref::GetGlobalOp> reads;
    func.walk([&](memref::GetGlobalOp op) { reads.push_back(op); });

    Value constants;
    if (layout) {
      auto bufferType =
          MemRefType::get({layout->bytes}, IntegerType::get(context, 8));
      unsigned index = func.getNumArguments();
      if (failed(func.insertArgument(index, bufferType, {}, func.getLoc())))
        return failure();
      constants = func.getArgument(index);
    }
    bool entry =
        layout && !func.isPrivate() &&
        findManifestFunction(manifest, func.getName()) != std::string::npos;
    Location loc = func.getLoc();
    OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
    auto viewAt = [&](Value buffer, int64_t offset, MemRefType type) {
      Value at = arith::ConstantIndexOp::create(b, loc, offset);
      return memref::ViewOp::create(b, loc, type, buffer, at, ValueRange{})
          .getResult();
    };
    if (entry) {
      // Uploaded where the entry starts, on the rank's first run: its own
      // constants and every callee's, at their places in the buffer.
      manifest = insertManifestLines(manifest, func.getName(),
                                     "constants " +
                                         std::to_string(layout->bytes) + "\n")
                     .value_or(manifest);
      func::FuncOp once = declareRuntimeFunction(module, "tprt_rt_fill_once");
      Value ctx = func.getArgument(0);
      Value first =
          func::CallOp::create(
              b, loc, once, ValueRange{ctx, bufferPointer(b, loc, constants)})
              .getResult(0);
      Value zero = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
      Value upload =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, first, zero);
      auto ifOp = scf::IfOp::create(b, loc, upload, /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      func::FuncOp copy = declareRuntimeFunction(module, "tprt_rt_upload");
      for (const Leaf &leaf : layout->leaves) {
        Value view = viewAt(constants, leaf.offset, leaf.type);
        Value host = memref::GetGlobalOp::create(b, loc, leaf.type,
                                                 leaf.global.getAttr());
        Value size =
            arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(leaf.bytes));
        func::CallOp::create(b, loc, copy,
                             ValueRange{ctx, bufferPointer(b, loc, view),
                                        bufferPointer(b, loc, host), size});
      }
    }
    // One view per constant and per callee's block, where the function
    // starts.
    DenseMap<Attribute, Value> ownViews;
    DenseMap<Operation *, Value> calleeViews;
    if (layout) {
      for (memref::GetGlobalOp read : nonSplat.lookup(func))
        if (!ownViews.count(read.getNameAttr()))
          ownViews[read.getNameAttr()] =
              viewAt(constants, layout->own.lookup(read.getNameAttr()),
                     cast<MemRefType>(read.getType()));
      for (auto [callee, offset] : layout->callees)
        calleeViews[callee] =
            viewAt(constants, offset,
                   MemRefType::get({layouts.lookup(callee).bytes},
                                   IntegerType::get(context, 8)));
    }
    SmallVector<Value> fresh;
    // A function whose callers are not all known passes its callees a
    // fresh buffer, uploaded by every run.
    SmallVector<func::CallOp> calls;
    func.walk([&](func::CallOp call) { calls.push_back(call); });
    for (func::CallOp call : calls) {
      auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (!callee || !kept.contains(callee))
        continue;
      const Layout &inner = layouts.lookup(callee);
      if (inner.bytes == 0)
        continue;
      Value view = calleeViews.lookup(callee);
      if (!view) {
        if (func.getNumArguments() == 0 || func.getArgument(0).getType() != ptr)
          return func.emitOpError()
                 << "calls " << callee.getName()
                 << ", which reads constant buffers, but has no rank context "
                    "(run tp-convert-collectives-to-runtime first)";
        OpBuilder::InsertionGuard guard(b);
        view = memref::AllocOp::create(
            b, loc,
            MemRefType::get({inner.bytes}, IntegerType::get(context, 8)));
        func::FuncOp copy = declareRuntimeFunction(module, "tprt_rt_upload");
        for (const Leaf &leaf : inner.leaves) {
          Value part = viewAt(view, leaf.offset, leaf.type);
          Value host = memref::GetGlobalOp::create(b, loc, leaf.type,
                                                   leaf.global.getAttr());
          Value size = arith::ConstantOp::create(
              b, loc, b.getI64IntegerAttr(leaf.bytes));
          func::CallOp::create(b, loc, copy,
                               ValueRange{func.getArgument(0),
                                          bufferPointer(b, loc, part),
                                          bufferPointer(b, loc, host), size});
        }
        calleeViews[callee] = view;
        fresh.push_back(view);
      }
      call.getOperandsMutable().append(view);
    }

    for (memref::GetGlobalOp read : reads) {
      auto type = cast<MemRefType>(read.getType());
      auto global = symbols.lookupNearestSymbolFrom<memref::GlobalOp>(
          read, read.getNameAttr());
      auto value = cast<DenseElementsAttr>(global.getInitialValueAttr());
      if (Value view = ownViews.lookup(read.getNameAttr())) {
        read.getResult().replaceAllUsesWith(view);
        read.erase();
        continue;
      }
      OpBuilder at(read);
      Location readLoc = read.getLoc();
      Value buffer = memref::AllocOp::create(at, readLoc, type);
      if (value.isSplat()) {
        auto scalar = arith::ConstantOp::create(
            at, readLoc, cast<TypedAttr>(value.getSplatValue<Attribute>()));
        linalg::FillOp::create(at, readLoc, ValueRange{scalar.getResult()},
                               ValueRange{buffer});
      } else {
        // A function whose callers are not all known: uploaded each run.
        func::FuncOp upload = declareRuntimeFunction(module, "tprt_rt_upload");
        Value host =
            memref::GetGlobalOp::create(at, readLoc, type, read.getNameAttr());
        Value size = arith::ConstantOp::create(
            at, readLoc, at.getI64IntegerAttr(*staticByteSize(type)));
        func::CallOp::create(
            at, readLoc, upload,
            ValueRange{func.getArgument(0), bufferPointer(at, readLoc, buffer),
                       bufferPointer(at, readLoc, host), size});
      }
      read.getResult().replaceAllUsesWith(buffer);
      read.erase();
      fresh.push_back(buffer);
    }
    // Freed where the function returns (the values a function returns are
    // copied to its out-parameters before; bufferization made it so).
    func.walk([&](func::ReturnOp ret) {
      OpBuilder at(ret);
      for (Value buffer : fresh)
        memref::DeallocOp::create(at, ret.getLoc(), buffer);
    });
    return success();
  }
};

struct UploadConstantsPass
    : public tp::impl::UploadConstantsPassBase<UploadConstantsPass> {
  void runOnOperation() override {
    if (failed(ConstantsRewriter(getOperation()).run()))
      signalPassFailure();
  }
};

} // namespace
