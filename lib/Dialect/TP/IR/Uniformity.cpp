//===- Uniformity.cpp - Values equal on every device of a group -----------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/IR/Uniformity.h"

#include "tp/Dialect/TP/IR/TPAttrs.h"
#include "tp/Dialect/TP/IR/TPDialect.h"
#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tp;

namespace {

/// Sorts (by identity: only set equality matters) and removes duplicates.
void sortUnique(SmallVectorImpl<std::pair<StringAttr, StringAttr>> &axes) {
  auto key = [](const std::pair<StringAttr, StringAttr> &a) {
    return std::make_pair(a.first.getAsOpaquePointer(),
                          a.second.getAsOpaquePointer());
  };
  llvm::sort(axes,
             [&](const auto &a, const auto &b) { return key(a) < key(b); });
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
}

} // namespace

Variance Variance::everything() {
  Variance v;
  v.state = State::Everything;
  return v;
}

Variance Variance::over(FlatSymbolRefAttr mesh, ArrayRef<StringRef> axes) {
  Variance v;
  v.state = State::Axes;
  for (StringRef axis : axes)
    v.axes.push_back(
        {mesh.getAttr(), StringAttr::get(mesh.getContext(), axis)});
  sortUnique(v.axes);
  return v;
}

bool Variance::variesOver(FlatSymbolRefAttr mesh,
                          ArrayRef<StringRef> groupAxes) const {
  if (state != State::Axes)
    return true;
  return llvm::any_of(axes, [&](const MeshAxis &a) {
    return a.first == mesh.getAttr() &&
           llvm::is_contained(groupAxes, a.second.getValue());
  });
}

Variance Variance::without(FlatSymbolRefAttr mesh,
                           ArrayRef<StringRef> groupAxes) const {
  if (state != State::Axes)
    return *this;
  Variance v = *this;
  llvm::erase_if(v.axes, [&](const MeshAxis &a) {
    return a.first == mesh.getAttr() &&
           llvm::is_contained(groupAxes, a.second.getValue());
  });
  return v;
}

Variance Variance::join(const Variance &lhs, const Variance &rhs) {
  if (lhs.state == State::Unknown)
    return rhs;
  if (rhs.state == State::Unknown)
    return lhs;
  if (lhs.state == State::Everything || rhs.state == State::Everything)
    return everything();
  Variance v = lhs;
  v.axes.append(rhs.axes.begin(), rhs.axes.end());
  sortUnique(v.axes);
  return v;
}

void Variance::print(raw_ostream &os) const {
  if (state == State::Unknown) {
    os << "<unknown>";
    return;
  }
  if (state == State::Everything) {
    os << "<every axis>";
    return;
  }
  os << "[";
  llvm::interleaveComma(axes, os, [&](const MeshAxis &a) {
    os << "@" << a.first.getValue() << ":" << a.second.getValue();
  });
  os << "]";
}

LogicalResult
VarianceAnalysis::visitOperation(Operation *op,
                                 ArrayRef<const VarianceLattice *> operands,
                                 ArrayRef<VarianceLattice *> results) {
  if (results.empty())
    return success();
  Variance fromOperands;
  for (const VarianceLattice *operand : operands)
    fromOperands = Variance::join(fromOperands, operand->getValue());
  auto setAll = [&](const Variance &v) {
    for (VarianceLattice *result : results)
      propagateIfChanged(result, result->join(v));
  };

  if (auto index = dyn_cast<AxisIndexOp>(op)) {
    setAll(Variance::over(index.getMeshAttr(), getAxisNames(index.getAxes())));
    return success();
  }
  // Every member of the group receives the same tensor, or each keeps its
  // own block.
  if (auto collective = dyn_cast<CollectiveOpInterface>(op)) {
    FlatSymbolRefAttr mesh = collective.getMeshAttr();
    SmallVector<StringRef> axes = collective.getGroupAxes();
    setAll(collective.isResultUniformOverGroup()
               ? fromOperands.without(mesh, axes)
               : Variance::join(fromOperands, Variance::over(mesh, axes)));
    return success();
  }
  // Anything else of the dialect (tp.annotate, tp.reshard: global form), and
  // any op that reads or writes memory, is not a function of its operands.
  if (isa<TPDialect>(op->getDialect()) || !isMemoryEffectFree(op)) {
    setAllToEntryStates(results);
    return success();
  }
  // A pure op: its operands, and what its regions read from above.
  Variance v = fromOperands;
  if (op->getNumRegions()) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    for (Value value : captured)
      v = Variance::join(
          v, getLatticeElementFor(getProgramPointAfter(op), value)->getValue());
  }
  setAll(v);
  return success();
}

void VarianceAnalysis::visitNonControlFlowArguments(
    Operation *op, const RegionSuccessor &successor,
    ArrayRef<VarianceLattice *> argLattices, unsigned firstIndex) {
  Variance v;
  for (Value operand : op->getOperands())
    v = Variance::join(
        v, getLatticeElementFor(getProgramPointAfter(op), operand)->getValue());
  auto set = [&](ArrayRef<VarianceLattice *> lattices) {
    for (VarianceLattice *lattice : lattices)
      propagateIfChanged(lattice, lattice->join(v));
  };
  set(argLattices.take_front(firstIndex));
  set(argLattices.drop_front(firstIndex +
                             successor.getSuccessorInputs().size()));
}

void VarianceAnalysis::visitExternalCall(
    CallOpInterface call, ArrayRef<const VarianceLattice *> arguments,
    ArrayRef<VarianceLattice *> results) {
  auto it = summaries.callResults.find(call);
  if (it == summaries.callResults.end())
    return setAllToEntryStates(results);
  for (auto [lattice, v] : llvm::zip(results, it->second))
    propagateIfChanged(lattice, lattice->join(v));
}

void VarianceAnalysis::setToEntryState(VarianceLattice *lattice) {
  Variance v = Variance::everything();
  if (auto it = summaries.arguments.find(lattice->getAnchor());
      it != summaries.arguments.end()) {
    propagateIfChanged(lattice, lattice->join(it->second));
    return;
  }
  if (auto arg = dyn_cast<BlockArgument>(lattice->getAnchor())) {
    auto func =
        dyn_cast_or_null<FunctionOpInterface>(arg.getOwner()->getParentOp());
    if (func && arg.getOwner()->isEntryBlock()) {
      if (auto sharding = func.getArgAttrOfType<ShardingAttr>(
              arg.getArgNumber(), TPDialect::kShardingAttrName))
        v = Variance::over(sharding.getMesh(), sharding.getUsedAxes());
    }
  }
  propagateIfChanged(lattice, lattice->join(v));
}

VarianceInfo::VarianceInfo() = default;
VarianceInfo::~VarianceInfo() = default;

/// The private functions of `root` (a symbol table) whose every use is as a
/// call's callee: their call sites are all known. One walk over the symbol
/// uses of all of them (a walk per function was quadratic where a flat model
/// is cut into hundreds of parts).
static SmallVector<FunctionOpInterface> summarizedFunctions(Operation *root) {
  SmallVector<FunctionOpInterface> found;
  std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(root);
  if (!root->hasTrait<OpTrait::SymbolTable>() || !uses)
    return found;
  DenseMap<StringAttr, bool> onlyCalled;
  for (const SymbolTable::SymbolUse &use : *uses) {
    auto call = dyn_cast<CallOpInterface>(use.getUser());
    bool callee =
        call && llvm::dyn_cast_if_present<SymbolRefAttr>(
                    call.getCallableForCallee()) == use.getSymbolRef();
    auto [it, inserted] =
        onlyCalled.try_emplace(use.getSymbolRef().getRootReference(), callee);
    if (!inserted)
      it->second &= callee;
  }
  for (Operation &op : root->getRegion(0).front()) {
    auto func = dyn_cast<FunctionOpInterface>(op);
    if (!func || !func.isPrivate() || func.isExternal())
      continue;
    auto it = onlyCalled.find(func.getNameAttr());
    if (it == onlyCalled.end() || it->second)
      found.push_back(func);
  }
  return found;
}

LogicalResult VarianceInfo::run(Operation *root) {
  SmallVector<FunctionOpInterface> functions = summarizedFunctions(root);
  llvm::SmallPtrSet<Operation *, 8> summarized;
  for (FunctionOpInterface func : functions)
    summarized.insert(func);
  SymbolTableCollection symbols;
  SmallVector<CallOpInterface> calls;
  if (!summarized.empty())
    root->walk([&](CallOpInterface call) {
      Operation *callee = call.resolveCallableInTable(&symbols);
      if (callee && summarized.contains(callee))
        calls.push_back(call);
    });
  // Everything a summary holds, not yet known: the first round assumes
  // nothing of what crosses calls, and each round after it joins what the
  // last one found.
  VarianceSummaries unknown;
  for (FunctionOpInterface func : functions)
    for (BlockArgument arg : func.getArguments())
      unknown.arguments[arg] = Variance();
  for (CallOpInterface call : calls)
    unknown.callResults[call].resize(call->getNumResults());
  summaries = unknown;
  // Each summary only grows, through a lattice as high as a mesh has axes
  // (plus two): a bound far above what any program needs.
  for (unsigned round = 0; round < 64; ++round) {
    solver = std::make_unique<DataFlowSolver>(
        DataFlowConfig().setInterprocedural(false));
    solver->load<dataflow::DeadCodeAnalysis>();
    solver->load<dataflow::SparseConstantPropagation>();
    solver->load<VarianceAnalysis>(summaries);
    if (failed(solver->initializeAndRun(root))) {
      solver.reset();
      return failure();
    }
    if (summarized.empty())
      return success();
    auto varianceOf = [&](Value v) {
      const VarianceLattice *lattice = solver->lookupState<VarianceLattice>(v);
      return lattice ? lattice->getValue() : Variance();
    };
    // What each summarized function returns.
    DenseMap<Operation *, SmallVector<Variance, 1>> returns;
    for (FunctionOpInterface func : functions) {
      SmallVector<Variance, 1> &joined = returns[func];
      joined.resize(func.getNumResults());
      for (Block &block : func.getFunctionBody())
        if (Operation *terminator = block.getTerminator();
            terminator && terminator->hasTrait<OpTrait::ReturnLike>())
          for (auto [v, operand] : llvm::zip(joined, terminator->getOperands()))
            v = Variance::join(v, varianceOf(operand));
    }
    VarianceSummaries next = unknown;
    for (CallOpInterface call : calls) {
      auto func =
          cast<FunctionOpInterface>(call.resolveCallableInTable(&symbols));
      for (auto [arg, operand] :
           llvm::zip(func.getArguments(), call.getArgOperands())) {
        Variance &v = next.arguments[arg];
        v = Variance::join(v, varianceOf(operand));
      }
      next.callResults[call] = returns.lookup(func);
    }
    if (next == summaries)
      return success();
    summaries = std::move(next);
  }
  solver.reset();
  return failure();
}

bool VarianceInfo::isUniformOver(Value value, FlatSymbolRefAttr mesh,
                                 ArrayRef<StringRef> axes) const {
  if (!solver)
    return false;
  const VarianceLattice *lattice = solver->lookupState<VarianceLattice>(value);
  return lattice && lattice->getValue().isKnown() &&
         !lattice->getValue().variesOver(mesh, axes);
}
