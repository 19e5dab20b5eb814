//===- ProtectInputs.cpp - Inputs the program might write: not writable ---===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The manifest (version 4) promises that a program never writes its inputs:
// the runtime lets ranks read their shards in the caller's memory. One-shot
// bufferization keeps that promise for an argument marked
// `bufferization.writable = false` by copying it before a write. This pass
// marks, right before bufferization, the arguments of public functions that
// something may write into, and only those: bufferization removes each mark
// again by rebuilding the function's array of argument attributes, which is
// quadratic in the marks of a driver taking thousands of weights (16,000 on
// a 1,024-layer GPT: 6.7 s), while a weight only read by its layer needs
// none.
//
// An argument may be written unless every use of it reads it: a
// destination-style op's input, tensor.extract and tensor.dim, a view
// (extract_slice, expand/collapse_shape, cast) whose own uses all read, and
// an operand of a call to a private function whose matching argument is
// (recursively) only read. Anything else, a return included, counts as a
// possible write.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::tp {
#define GEN_PASS_DEF_PROTECTINPUTSPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

class ReadOnlyUses {
public:
  /// Whether every use of `value` (and of the views of it) only reads it.
  bool onlyRead(Value value) {
    for (OpOperand &use : value.getUses())
      if (!reads(use))
        return false;
    return true;
  }

private:
  bool reads(OpOperand &use) {
    Operation *user = use.getOwner();
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(user))
      return dps.isDpsInput(&use);
    if (isa<tensor::ExtractOp, tensor::DimOp>(user))
      return true;
    if (isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
            tensor::CollapseShapeOp, tensor::CastOp>(user))
      return onlyRead(user->getResult(0));
    if (auto call = dyn_cast<CallOpInterface>(user)) {
      auto callee = dyn_cast_or_null<FunctionOpInterface>(
          call.resolveCallableInTable(&symbols));
      if (!callee || !callee.isPrivate() || callee.isExternal())
        return false;
      MutableOperandRange args = call.getArgOperandsMutable();
      for (unsigned i = 0, e = args.size(); i < e; ++i)
        if (&args[i] == &use)
          return i < callee.getNumArguments() &&
                 argumentOnlyRead(callee.getArgument(i));
      // The callee (an indirect call's first operand).
      return false;
    }
    return false;
  }

  bool argumentOnlyRead(BlockArgument arg) {
    auto [it, inserted] = arguments.try_emplace(arg, false);
    // A call cycle back to this argument: assume the worst.
    if (!inserted)
      return it->second;
    bool result = onlyRead(arg);
    arguments[arg] = result;
    return result;
  }

  SymbolTableCollection symbols;
  DenseMap<Value, bool> arguments;
};

struct ProtectInputsPass
    : public tp::impl::ProtectInputsPassBase<ProtectInputsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    ReadOnlyUses uses;
    StringAttr writable = StringAttr::get(
        &getContext(), bufferization::BufferizationDialect::kWritableAttrName);
    BoolAttr no = BoolAttr::get(&getContext(), false);
    for (auto func : module.getOps<FunctionOpInterface>()) {
      if (!func.isPublic() || func.isExternal())
        continue;
      // Every argument's attributes set at once: setting one rebuilds the
      // array of all of them.
      SmallVector<DictionaryAttr> dicts;
      bool changed = false;
      for (BlockArgument arg : func.getArguments()) {
        NamedAttrList attrs(func.getArgAttrDict(arg.getArgNumber()));
        if (!isa<TensorType>(arg.getType()) || attrs.get(writable) ||
            uses.onlyRead(arg)) {
          dicts.push_back(attrs.getDictionary(&getContext()));
          continue;
        }
        attrs.set(writable, no);
        dicts.push_back(attrs.getDictionary(&getContext()));
        changed = true;
      }
      if (changed)
        func.setAllArgAttrs(dicts);
    }
  }
};

} // namespace
