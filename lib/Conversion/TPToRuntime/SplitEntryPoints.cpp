//===- SplitEntryPoints.cpp - Long programs run in parts ------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// An entry point `tprt_entry_<f>(ctx, buffers)` loads every buffer pointer
// and calls `<f>`. When `<f>` is long straight-line code (the driver of a
// deep model: thousands of layer calls, tens of thousands of weights), LLVM's
// code generation of that one function, or of the entry point it is inlined
// into, grows faster than the program. This pass cuts `<f>` into parts of
// bounded size that load the pointers they use themselves, and has the entry
// point call the parts.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/RuntimeCalls.h"
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

namespace mlir::tp {
#define GEN_PASS_DEF_SPLITENTRYPOINTSPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// A leaf: no operands, no regions, one result, no memory effects
/// (constants, addresses of globals, zero, undef).
bool isLeaf(Operation *op) {
  return op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         op->getNumResults() == 1 && isMemoryEffectFree(op);
}

/// An alloca the entry point keeps: its memory must outlive every part.
bool isKeptAlloca(Operation *op) {
  auto alloca = dyn_cast<LLVM::AllocaOp>(op);
  return alloca && llvm::all_of(op->getOperands(), [](Value v) {
           Operation *def = v.getDefiningOp();
           return def && isLeaf(def);
         });
}

/// Ops that tie the program to its own frame: it is not split.
bool usesFrame(Operation *op) {
  return isa<LLVM::AllocaOp>(op)
             ? !isKeptAlloca(op)
             : isa<LLVM::StackSaveOp, LLVM::StackRestoreOp,
                   LLVM::LifetimeStartOp, LLVM::LifetimeEndOp, LLVM::VaStartOp,
                   LLVM::VaEndOp, LLVM::VaCopyOp>(op);
}

/// How the entry point makes argument `v` of its program: the entry's own
/// argument, or a load from a constant offset of one (`%buffers[i]`). Returns
/// the ops to clone, innermost first, or failure.
FailureOr<SmallVector<Operation *, 2>> argumentChain(Value v,
                                                     Block *entryBody) {
  SmallVector<Operation *, 2> chain;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() != entryBody)
      return failure();
    return chain;
  }
  auto load = v.getDefiningOp<LLVM::LoadOp>();
  if (!load || load.getVolatile_() || load->getBlock() != entryBody)
    return failure();
  Value address = load.getAddr();
  if (auto gep = address.getDefiningOp<LLVM::GEPOp>()) {
    if (!gep.getDynamicIndices().empty() ||
        !isa<BlockArgument>(gep.getBase()) ||
        gep.getBase().getParentBlock() != entryBody)
      return failure();
    chain.push_back(gep);
  } else if (!isa<BlockArgument>(address) ||
             address.getParentBlock() != entryBody) {
    return failure();
  }
  chain.push_back(load);
  return chain;
}

struct SplitEntryPointsPass
    : public tp::impl::SplitEntryPointsPassBase<SplitEntryPointsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (maxPartOps == 0)
      return;
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto entry : llvm::to_vector(module.getOps<LLVM::LLVMFuncOp>())) {
      if (!entry.getName().starts_with(kEntryPrefix) ||
          !entry.getBody().hasOneBlock())
        continue;
      LLVM::CallOp call;
      for (auto c : entry.getBody().front().getOps<LLVM::CallOp>())
        if (c.getCallee() &&
            (kEntryPrefix + *c.getCallee()).str() == entry.getName())
          call = c;
      if (!call)
        continue;
      auto program = symbols.lookup<LLVM::LLVMFuncOp>(*call.getCallee());
      if (!program || program.isExternal() ||
          !program.getBody().hasOneBlock() ||
          program.getLinkage() != LLVM::Linkage::Internal)
        continue;
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(program, module);
      if (!uses || !llvm::hasSingleElement(*uses))
        continue;
      split(entry, call, program, symbols);
    }
  }

  void split(LLVM::LLVMFuncOp entry, LLVM::CallOp call,
             LLVM::LLVMFuncOp program, SymbolTable &symbols);
};

void SplitEntryPointsPass::split(LLVM::LLVMFuncOp entry, LLVM::CallOp call,
                                 LLVM::LLVMFuncOp program,
                                 SymbolTable &symbols) {
  Block *entryBody = &entry.getBody().front();
  Block *body = &program.getBody().front();
  auto ret = dyn_cast<LLVM::ReturnOp>(body->getTerminator());
  if (!ret || ret->getNumOperands() != 0 ||
      call.getArgOperands().size() != body->getNumArguments())
    return;

  // How the entry point makes each argument of the program.
  SmallVector<SmallVector<Operation *, 2>> chains;
  for (Value operand : call.getArgOperands()) {
    FailureOr<SmallVector<Operation *, 2>> chain =
        argumentChain(operand, entryBody);
    if (failed(chain))
      return;
    chains.push_back(std::move(*chain));
  }

  // Pure ops (memref descriptors, addresses, constants) are rebuilt in each
  // part that uses them, and the arguments loaded there: a part takes from
  // the others only what ops with effects made (a buffer from malloc). The
  // other ops are cut into consecutive parts, each operand rebuilt counted
  // as one op more.
  llvm::SmallPtrSet<Operation *, 16> rebuilt;
  SmallVector<Operation *> kept;
  SmallVector<SmallVector<Operation *>> parts(1);
  DenseMap<Operation *, unsigned> partOf;
  unsigned size = 0;
  for (Operation &op : body->without_terminator()) {
    if (usesFrame(&op) || op.getNumRegions() != 0)
      return;
    if (isKeptAlloca(&op)) {
      kept.push_back(&op);
      continue;
    }
    if (op.getNumResults() != 0 && isMemoryEffectFree(&op)) {
      rebuilt.insert(&op);
      continue;
    }
    unsigned cost = 1 + llvm::count_if(op.getOperands(), [&](Value v) {
                      if (auto arg = dyn_cast<BlockArgument>(v))
                        return !chains[arg.getArgNumber()].empty();
                      return rebuilt.contains(v.getDefiningOp());
                    });
    if (size + cost > maxPartOps && !parts.back().empty()) {
      parts.emplace_back();
      size = 0;
    }
    size += cost;
    partOf[&op] = parts.size() - 1;
    parts.back().push_back(&op);
  }
  if (parts.size() < 2)
    return;

  MLIRContext *ctx = &getContext();
  Location loc = program.getLoc();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  OpBuilder eb(call);
  Value context = entryBody->getArgument(0);
  Value buffers = entryBody->getArgument(1);

  // The entry point's value of each of the program's values that a part
  // takes as an argument.
  IRMapping inEntry;
  for (auto [arg, operand] :
       llvm::zip_equal(body->getArguments(), call.getArgOperands()))
    inEntry.map(arg, operand);
  for (Operation *alloca : kept) {
    for (Value size : alloca->getOperands())
      if (!inEntry.contains(size))
        eb.clone(*size.getDefiningOp(), inEntry);
    eb.clone(*alloca, inEntry);
  }

  // What each part takes: the values of ops with effects in other parts
  // (or kept allocas) that its ops use, directly or through pure ops. What
  // each part gives: its values that later parts take.
  SmallVector<llvm::SetVector<Value>> liveIns(parts.size()),
      liveOuts(parts.size());
  for (auto [index, ops] : llvm::enumerate(parts)) {
    llvm::SmallPtrSet<Operation *, 16> visited;
    // Depth first, in the order of the operands: the order of first use.
    SmallVector<Value> worklist;
    for (Operation *op : llvm::reverse(ops))
      llvm::append_range(worklist, llvm::reverse(op->getOperands()));
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      Operation *def = v.getDefiningOp();
      if (!def)
        continue;
      if (rebuilt.contains(def)) {
        if (visited.insert(def).second)
          llvm::append_range(worklist, llvm::reverse(def->getOperands()));
        continue;
      }
      auto it = partOf.find(def);
      if (it != partOf.end() && it->second == index)
        continue;
      liveIns[index].insert(v);
      if (it != partOf.end())
        liveOuts[it->second].insert(v);
    }
  }

  for (auto [index, ops] : llvm::enumerate(parts)) {
    ArrayRef<Value> ins = liveIns[index].getArrayRef();
    ArrayRef<Value> outs = liveOuts[index].getArrayRef();
    // The part.
    SmallVector<Type> argTypes = {ptr, ptr};
    for (Value v : ins)
      argTypes.push_back(v.getType());
    SmallVector<Type> resultTypes;
    for (Value v : outs)
      resultTypes.push_back(v.getType());
    Type resultType = outs.empty() ? LLVM::LLVMVoidType::get(ctx)
                      : outs.size() == 1
                          ? resultTypes.front()
                          : LLVM::LLVMStructType::getLiteral(ctx, resultTypes);
    OpBuilder mb(program);
    auto part = LLVM::LLVMFuncOp::create(
        mb, loc, (program.getName() + "_span" + Twine(index)).str(),
        LLVM::LLVMFunctionType::get(resultType, argTypes),
        LLVM::Linkage::Internal);
    symbols.insert(part);
    part.setPassthroughAttr(
        ArrayAttr::get(ctx, {StringAttr::get(ctx, "noinline")}));
    Block *partBody = part.addEntryBlock(mb);
    OpBuilder pb = OpBuilder::atBlockEnd(partBody);
    IRMapping inPart;
    for (auto [v, arg] :
         llvm::zip_equal(ins, partBody->getArguments().drop_front(2)))
      inPart.map(v, arg);
    // The entry point's own arguments, as the part's.
    IRMapping entryArgs;
    entryArgs.map(context, partBody->getArgument(0));
    entryArgs.map(buffers, partBody->getArgument(1));
    // A rebuilt value, right before its first use in the part: an argument
    // as the entry point loads it, a pure op after its operands.
    std::function<void(Value)> materialize = [&](Value v) {
      if (inPart.contains(v))
        return;
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        for (Operation *step : chains[arg.getArgNumber()])
          pb.clone(*step, entryArgs);
        inPart.map(v,
                   entryArgs.lookup(call.getArgOperands()[arg.getArgNumber()]));
        return;
      }
      Operation *def = v.getDefiningOp();
      for (Value operand : def->getOperands())
        materialize(operand);
      pb.clone(*def, inPart);
    };
    for (Operation *op : ops) {
      for (Value v : op->getOperands())
        materialize(v);
      pb.clone(*op, inPart);
    }
    if (outs.empty()) {
      LLVM::ReturnOp::create(pb, loc, ValueRange{});
    } else if (outs.size() == 1) {
      LLVM::ReturnOp::create(pb, loc, inPart.lookup(outs.front()));
    } else {
      Value all = LLVM::UndefOp::create(pb, loc, resultType);
      for (auto [i, v] : llvm::enumerate(outs))
        all = LLVM::InsertValueOp::create(pb, loc, all, inPart.lookup(v),
                                          ArrayRef<int64_t>{int64_t(i)});
      LLVM::ReturnOp::create(pb, loc, all);
    }

    // Its call.
    SmallVector<Value> operands = {context, buffers};
    for (Value v : ins)
      operands.push_back(inEntry.lookup(v));
    auto partCall = LLVM::CallOp::create(eb, loc, part, operands);
    if (outs.size() == 1) {
      inEntry.map(outs.front(), partCall.getResult());
    } else {
      for (auto [i, v] : llvm::enumerate(outs))
        inEntry.map(
            v, LLVM::ExtractValueOp::create(eb, loc, partCall.getResult(),
                                            ArrayRef<int64_t>{int64_t(i)}));
    }
  }

  // The loads of the old call, then the program, go.
  call.erase();
  SmallVector<Operation *> loads;
  for (Operation &op : entryBody->without_terminator())
    loads.push_back(&op);
  for (Operation *op : llvm::reverse(loads))
    if (isOpTriviallyDead(op))
      op->erase();
  symbols.erase(program);
}

} // namespace
