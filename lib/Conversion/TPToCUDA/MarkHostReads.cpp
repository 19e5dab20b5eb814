//===- MarkHostReads.cpp - Arguments the host code of a GPU program reads -===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// On a GPU every argument of an entry point is in device memory, where the
// host code cannot read it. What the host code reads of an argument (an
// offset computed from a 0-d integer input: a decode step's position, at
// which a KV cache is written) is found here, after the kernels are
// outlined: a memref.load outside every kernel, of an argument or of a view
// of one, in the entry point or in a function it passes the argument to.
// The manifest gets a `hostread <argument>` line for each: the runtime
// passes those arguments in host memory (a copy of the device array's
// bytes), and does not capture such a function in a CUDA graph, whose
// replays would keep the value read at its capture.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/RuntimeCalls.h"
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::tp {
#define GEN_PASS_DEF_MARKHOSTREADSPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// Whether the host code reads `value` (a buffer of a host function): a
/// load of it or of a view of it, or a call passing it to a function whose
/// parameter is so read.
bool readOnHost(Value value, SymbolTable &symbols,
                llvm::SmallPtrSetImpl<Value> &seen) {
  if (!seen.insert(value).second)
    return false;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isa<memref::LoadOp>(user))
      return true;
    if (isa<ViewLikeOpInterface, memref::CastOp, memref::ReinterpretCastOp,
            memref::ExpandShapeOp, memref::CollapseShapeOp>(user)) {
      for (Value result : user->getResults())
        if (readOnHost(result, symbols, seen))
          return true;
      continue;
    }
    if (auto call = dyn_cast<func::CallOp>(user)) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (callee && !callee.isExternal() &&
          readOnHost(callee.getArgument(use.getOperandNumber()), symbols, seen))
        return true;
    }
  }
  return false;
}

/// The number of arguments of function `name` in the manifest (its `func
/// <name> <#args> <#results>` line), or -1.
int64_t manifestArgCount(StringRef manifest, StringRef name) {
  size_t at = findManifestFunction(manifest, name);
  if (at == StringRef::npos)
    return -1;
  // `\nfunc <name> <#args> ...`: the name is the second word.
  StringRef rest = manifest.drop_front(at + 1);
  rest = rest.drop_front(rest.find(' ') + 1);
  std::optional<std::string> parsed = parseManifestName(rest);
  int64_t count = -1;
  if (!parsed || rest.ltrim(' ')
                     .take_until([](char c) { return c == ' '; })
                     .getAsInteger(10, count))
    return -1;
  return count;
}

struct MarkHostReadsPass
    : public tp::impl::MarkHostReadsPassBase<MarkHostReadsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto manifest = module->getAttrOfType<StringAttr>(kManifestAttrName);
    if (!manifest)
      return;
    SymbolTable symbols(module);
    std::string text = manifest.getValue().str();
    for (auto func : module.getOps<func::FuncOp>()) {
      // The manifest's functions are the public ones with a body.
      if (func.isExternal() || func.isPrivate())
        continue;
      // The manifest counts the buffers: the rank context the runtime
      // calls take (a pointer, first) is not one of them. The arguments
      // come first, then the results' and the arena: device memory that
      // kernels write, which the host code cannot read.
      int64_t numArgs = manifestArgCount(manifest.getValue(), func.getName());
      SmallVector<unsigned> read;
      unsigned buffer = 0;
      for (BlockArgument arg : func.getArguments()) {
        if (!isa<MemRefType>(arg.getType()))
          continue;
        llvm::SmallPtrSet<Value, 8> seen;
        if (readOnHost(arg, symbols, seen)) {
          if (numArgs >= 0 && buffer >= numArgs) {
            func.emitError()
                << "tp-mark-host-reads: the host code reads a value a kernel "
                   "computes (in buffer #"
                << buffer
                << ", a result's or the arena): an offset or size computed "
                   "on the device; only an entry argument (a 0-d integer "
                   "input, as a decode step's position) can be read by the "
                   "host code of a GPU program";
            return signalPassFailure();
          }
          read.push_back(buffer);
        }
        ++buffer;
      }
      std::string lines;
      for (unsigned arg : read)
        lines += "hostread " + std::to_string(arg) + "\n";
      if (!read.empty())
        text = insertManifestLines(text, func.getName(), lines).value_or(text);
    }
    module->setAttr(kManifestAttrName, StringAttr::get(&getContext(), text));
  }
};

} // namespace
