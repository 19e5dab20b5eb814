//===- OutlineRepeatedLayers.cpp - One function per repeated layer --------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Finds runs of structurally identical op sequences in a function's body (a
// model's layers) and outlines one repeat into a function that every repeat
// calls, so that code generation sees each distinct layer once.
//
// 1-3. RepeatedLayers.h finds runs of repeats, checked op for op.
// 4. The candidate that saves the most ops is outlined; then the search runs
//    again on what is left.
//
// The work is linear in the function's size per candidate period, and a
// handful of periods are tried.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Passes.h"

#include "tp/Dialect/TP/IR/TPDialect.h"
#include "tp/Dialect/TP/Transforms/RepeatedLayers.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace mlir::tp {
#define GEN_PASS_DEF_OUTLINEREPEATEDLAYERSPASS
#include "tp/Dialect/TP/Transforms/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

using Candidate = LayerRepeats;

struct OutlineRepeatedLayersPass
    : public tp::impl::OutlineRepeatedLayersPassBase<
          OutlineRepeatedLayersPass> {
  using OutlineRepeatedLayersPassBase::OutlineRepeatedLayersPassBase;

  /// A function with a donated argument (tp.donate) stays whole: its
  /// result is written in the argument's buffer by a chain of in-place ops,
  /// which a call would cut (the called function's results are new buffers).
  static bool hasDonatedArgument(func::FuncOp func) {
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (func.getArgAttr(i, TPDialect::kDonateAttrName))
        return true;
    return false;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (func::FuncOp func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal() || !func.getBody().hasOneBlock() ||
          hasDonatedArgument(func))
        continue;
      LayerFinder finder(&func.getBody().front());
      for (unsigned made = 0; made < maxLayers; ++made) {
        finder.collect();
        RepeatExternals checked;
        Candidate best =
            finder.search(std::max(1u, unsigned(minLayerOps)), &checked);
        if (!best.saved())
          break;
        outline(func, finder, best, symbols, "_layer", 0, &checked);
      }
    }
    if (maxFunctionOps != 0)
      cutLongFunctions(module, symbols);
    if (straightLineCalls != 0)
      straightenDrivers(module, symbols);
  }

  void cutLongFunctions(ModuleOp module, SymbolTable &symbols) {
    // What is left long (a model without repeats, a long layer) is cut into
    // parts of at most maxFunctionOps ops, each called once.
    for (func::FuncOp func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal() || !func.getBody().hasOneBlock() ||
          hasDonatedArgument(func))
        continue;
      LayerFinder finder(&func.getBody().front());
      finder.collect();
      unsigned n = finder.ops.size();
      // Calls (of the layers outlined above) are one line each for LLVM,
      // not code to optimize: a driver calling 96 layers stays whole.
      if (n - llvm::count_if(finder.ops, llvm::IsaPred<func::CallOp>) <=
          maxFunctionOps)
        continue;
      // Equal parts, the last first: the positions of those before it stay.
      unsigned parts = llvm::divideCeil(n, unsigned(maxFunctionOps));
      unsigned size = llvm::divideCeil(n, parts);
      for (unsigned part = parts; part-- > 0;) {
        unsigned start = part * size;
        if (start >= n)
          continue;
        finder.collect();
        outline(func, finder, Candidate{start, std::min(size, n - start), 1},
                symbols, "_part", part);
      }
    }
  }

  /// In a function making more than straightLineCalls calls, each run of
  /// ops between calls that lowers to loops becomes a part: the function is
  /// left straight-line code.
  void straightenDrivers(ModuleOp module, SymbolTable &symbols) {
    // What lowers to no loop (views and reshapes; runs hold no calls).
    auto straight = [](Operation *op) {
      return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                 tensor::ExtractSliceOp, tensor::CastOp, tensor::EmptyOp>(op);
    };
    for (func::FuncOp func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal() || !func.getBody().hasOneBlock())
        continue;
      LayerFinder finder(&func.getBody().front());
      finder.collect();
      if (llvm::count_if(finder.ops, llvm::IsaPred<func::CallOp>) <=
          straightLineCalls)
        continue;
      // The runs between calls, each with an op that makes loops.
      SmallVector<std::pair<unsigned, unsigned>> runs;
      for (unsigned i = 0, n = finder.ops.size(); i < n;) {
        if (isa<func::CallOp>(finder.ops[i])) {
          ++i;
          continue;
        }
        unsigned start = i;
        bool loops = false;
        for (; i < n && !isa<func::CallOp>(finder.ops[i]); ++i)
          loops |= !straight(finder.ops[i]);
        if (loops)
          runs.emplace_back(start, i - start);
      }
      // The last first: the positions of those before it stay.
      for (unsigned index = runs.size(); index-- > 0;) {
        finder.collect();
        outline(func, finder,
                Candidate{runs[index].first, runs[index].second, 1}, symbols,
                "_part", index);
      }
    }
  }

  /// Outlines `c`'s repeats; `checked` (for more than one) is what the
  /// search found each of them reads.
  void outline(func::FuncOp func, LayerFinder &finder, const Candidate &c,
               SymbolTable &symbols, StringRef suffix, unsigned firstNumber = 0,
               const RepeatExternals *checked = nullptr) {
    assert((c.repeats == 1 || checked) && "repeats outlined unchecked");
    Block *body = finder.body;
    ArrayRef<Operation *> first = finder.repeat(c.start, c.period, 0);
    SmallVector<Value> externals;
    if (checked) {
      externals = checked->first;
    } else {
      llvm::DenseSet<Operation *> inFirst(first.begin(), first.end());
      DenseMap<Value, unsigned> index;
      finder.collectExternals(first, inFirst, externals, index);
    }

    // Each repeat's operands, and the results anything after a repeat reads
    // (in any repeat: the layer function returns their union).
    SmallVector<SmallVector<Value>> operands(c.repeats);
    SmallVector<llvm::DenseSet<Operation *>> members(c.repeats);
    std::vector<std::pair<unsigned, unsigned>> escaping;
    for (unsigned k = 0; k < c.repeats; ++k) {
      ArrayRef<Operation *> rep = finder.repeat(c.start, c.period, k);
      members[k].insert(rep.begin(), rep.end());
      operands[k] = k == 0 ? externals : checked->others[k - 1];
      for (auto [j, op] : llvm::enumerate(rep))
        for (OpResult result : op->getResults())
          if (llvm::any_of(result.getUses(), [&](OpOperand &use) {
                return !members[k].contains(finder.topLevel(use.getOwner()));
              }))
            escaping.emplace_back(j, result.getResultNumber());
    }
    llvm::sort(escaping);
    escaping.erase(llvm::unique(escaping), escaping.end());

    // The layer function: the first repeat, its leaves cloned in.
    MLIRContext *context = func.getContext();
    SmallVector<Type> argTypes, resultTypes;
    for (Value v : externals)
      argTypes.push_back(v.getType());
    for (auto [j, r] : escaping)
      resultTypes.push_back(first[j]->getResult(r).getType());
    OpBuilder builder(context);
    builder.setInsertionPointAfter(func);
    auto layer =
        func::FuncOp::create(builder, first.front()->getLoc(),
                             freshName(func, suffix, firstNumber, symbols),
                             FunctionType::get(context, argTypes, resultTypes));
    layer.setPrivate();
    // LLVM would inline it back (a part is called once): that is the code
    // size this pass keeps away from each function's optimisation.
    layer->setAttr("passthrough",
                   builder.getArrayAttr({builder.getStringAttr("noinline")}));
    if (Attribute spmd = func->getAttr(TPDialect::kSpmdAttrName))
      layer->setAttr(TPDialect::kSpmdAttrName, spmd);
    symbols.insert(layer);
    Block *entry = layer.addEntryBlock();
    IRMapping mapping;
    for (auto [v, arg] : llvm::zip(externals, entry->getArguments()))
      mapping.map(v, arg);
    builder.setInsertionPointToStart(entry);
    for (Operation *top : first)
      top->walk([&](Operation *op) {
        for (Value v : op->getOperands())
          if (Operation *leaf = leafOf(v, body); leaf && !mapping.contains(v))
            builder.clone(*leaf, mapping);
      });
    for (Operation *op : first)
      builder.clone(*op, mapping);
    SmallVector<Value> returned;
    for (auto [j, r] : escaping)
      returned.push_back(mapping.lookup(first[j]->getResult(r)));
    func::ReturnOp::create(builder, layer.getLoc(), returned);

    // Every repeat becomes a call (reading, where a repeat reads an earlier
    // one, that one's call).
    DenseMap<Value, Value> replaced;
    for (unsigned k = 0; k < c.repeats; ++k) {
      ArrayRef<Operation *> rep = finder.repeat(c.start, c.period, k);
      for (Value &v : operands[k])
        v = replaced.lookup_or(v, v);
      builder.setInsertionPoint(rep.front());
      auto call = func::CallOp::create(builder, rep.front()->getLoc(), layer,
                                       operands[k]);
      for (auto [e, jr] : llvm::enumerate(escaping)) {
        Value old = rep[jr.first]->getResult(jr.second);
        replaced[old] = call.getResult(e);
        old.replaceUsesWithIf(call.getResult(e), [&](OpOperand &use) {
          return !members[k].contains(finder.topLevel(use.getOwner()));
        });
      }
      for (Operation *op : llvm::reverse(rep))
        op->erase();
    }
    for (Operation &op : llvm::make_early_inc_range(*body))
      if (isLeaf(&op) && op.use_empty())
        op.erase();
  }

  /// `<func><suffix><i>`, the first free from i = `first`.
  static std::string freshName(func::FuncOp func, StringRef suffix,
                               unsigned first, SymbolTable &symbols) {
    for (unsigned i = first;; ++i) {
      std::string name = (func.getSymName() + suffix + Twine(i)).str();
      if (!symbols.lookup(name))
        return name;
    }
  }
};

} // namespace
