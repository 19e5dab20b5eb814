//===- PlanStrategies.cpp - Each node's strategies ------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Step 1 of the planner (Planner.h): a node per argument and per op that
// touches tensors, with its strategies: an argument every sharding its
// dimensions divide by, a ruled op every block split of its factors (and
// the variants that carry pending sums on), a constraint or an op without a
// rule exactly one.
//
//===----------------------------------------------------------------------===//

#include "Planner.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::tp;
using namespace mlir::tp::planner;

void Planner::forEachAssignment(
    unsigned numSlots, function_ref<int64_t(unsigned)> sizeOf,
    function_ref<void(ArrayRef<AxisList>)> leaf) const {
  SmallVector<AxisList> slots(numSlots);
  std::function<void(unsigned)> visit = [&](unsigned a) {
    if (a == splitAxes.size())
      return leaf(slots);
    visit(a + 1);
    auto [name, size] = splitAxes[a];
    for (unsigned i = 0; i < numSlots; ++i) {
      int64_t slotSize = sizeOf(i);
      if (slotSize <= 0 || slotSize % (axes.groupSize(slots[i]) * size) != 0)
        continue;
      slots[i].push_back(name);
      visit(a + 1);
      slots[i].pop_back();
    }
  };
  visit(0);
}

SmallVector<TensorSharding> Planner::shardingsOf(RankedTensorType type) const {
  SmallVector<TensorSharding> out;
  forEachAssignment(
      type.getRank(),
      [&](unsigned d) {
        return ShapedType::isDynamic(type.getDimSize(d)) ? 0
                                                         : type.getDimSize(d);
      },
      [&](ArrayRef<AxisList> dims) {
        TensorSharding s;
        s.dims.assign(dims.begin(), dims.end());
        out.push_back(std::move(s));
      });
  return out;
}

void Planner::addArgument(BlockArgument arg) {
  Node node;
  node.argument = arg.getArgNumber();
  auto type = cast<RankedTensorType>(arg.getType());
  const std::optional<TensorSharding> &fixed =
      constraints.arguments[arg.getArgNumber()];
  SmallVector<TensorSharding> candidates =
      fixed ? SmallVector<TensorSharding>{*fixed} : shardingsOf(type);
  for (TensorSharding &s : candidates) {
    Strategy strategy;
    strategy.bytes = localBytes(type, s, axes);
    strategy.results.push_back(std::move(s));
    node.strategies.push_back(std::move(strategy));
  }
  sources[arg] = {static_cast<unsigned>(nodes.size()), 0};
  nodes.push_back(std::move(node));
}

double Planner::computeSeconds(Operation *op, const ShardingRule &rule,
                               const Strategy &s) const {
  double points = 1, split = 1;
  for (unsigned f = 0; f < rule.getNumFactors(); ++f) {
    if (!ShapedType::isDynamic(rule.getFactorSize(f)))
      points *= static_cast<double>(rule.getFactorSize(f));
    split *= static_cast<double>(axes.groupSize(s.decision.axes[f]));
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (linalgOp && linalg::isaContractionOpInterface(linalgOp) &&
      op->getNumResults() == 1)
    return options.machine->gemmSeconds(
        2 * points / split, getElementTypeOrSelf(op->getResult(0).getType()));
  // Memory-bound: what the op reads and writes on one device.
  double bytes = 0;
  for (auto [operand, sharding] : llvm::zip(op->getOperands(), s.operands))
    if (sharding && !isRematerializable(operand))
      bytes += localBytes(cast<RankedTensorType>(operand.getType()), *sharding,
                          axes);
  for (auto [result, sharding] : llvm::zip(op->getResults(), s.results))
    if (sharding)
      bytes +=
          localBytes(cast<RankedTensorType>(result.getType()), *sharding, axes);
  return options.machine->memorySeconds(bytes);
}

void Planner::addRuledOp(Operation *op, const ShardingRule &rule) {
  Node node;
  node.op = op;
  SmallVector<const ShardingRule::TensorFactors *, 4> tensorFactors;
  for (auto [v, tf] : llvm::zip(op->getOperands(), rule.getOperands()))
    if (isTensor(v))
      tensorFactors.push_back(&tf);
  for (auto [v, tf] : llvm::zip(op->getResults(), rule.getResults()))
    if (isTensor(v))
      tensorFactors.push_back(&tf);

  FactorDecision decision(rule.getNumFactors());
  forEachAssignment(
      rule.getNumFactors(),
      [&](unsigned f) -> int64_t {
        int64_t size = rule.getFactorSize(f);
        return rule.getFactorKind(f) == FactorKind::NeedReplication ||
                       ShapedType::isDynamic(size)
                   ? 0
                   : size;
      },
      [&](ArrayRef<AxisList> factorAxes) {
        decision.axes.assign(factorAxes.begin(), factorAxes.end());
        // Only block splits of every tensor: a split that trimming changes is
        // another candidate's.
        SmallVector<AxisList> trimmed = decision.axes;
        if (trimToBlockSplits(tensorFactors, rule, trimmed, axes))
          return;
        OpOutcome outcome = decisions.makeOutcome(op, rule, decision);
        Strategy s;
        s.decision = outcome.decision;
        for (auto [v, sharding] :
             llvm::zip(op->getOperands(), outcome.operands)) {
          if (isTensor(v) && !sharding)
            return;
          s.operands.push_back(sharding);
        }
        for (auto [v, sharding] :
             llvm::zip(op->getResults(), outcome.results)) {
          if (isTensor(v) && !sharding)
            return;
          s.results.push_back(sharding);
        }
        s.computeSeconds = computeSeconds(op, rule, s);
        addPendingVariants(op, node, s);
        node.strategies.push_back(std::move(s));
      });
  addOpNode(op, std::move(node));
}

void Planner::addPendingVariants(Operation *op, Node &node,
                                 const Strategy &base) {
  SmallVector<unsigned> candidates;
  for (auto [k, v] : llvm::enumerate(op->getOperands()))
    if (isTensor(v) && !isRematerializable(v))
      candidates.push_back(k);
  // The axes the base strategy uses anywhere are not free.
  llvm::StringSet<> used;
  auto use = [&](const std::optional<TensorSharding> &s) {
    if (!s)
      return;
    for (const AxisList &dim : s->dims)
      for (StringRef a : dim)
        used.insert(a);
    for (StringRef a : s->partial)
      used.insert(a);
  };
  llvm::for_each(base.operands, use);
  llvm::for_each(base.results, use);
  SmallVector<StringRef> free;
  for (auto [name, size] : splitAxes)
    if (!used.contains(name))
      free.push_back(name);
  if (free.empty() || candidates.empty() || candidates.size() > 6)
    return;
  SmallVector<bool> mask(op->getNumOperands(), false);
  for (unsigned m = 1; m < (1u << candidates.size()); ++m) {
    mask.assign(op->getNumOperands(), false);
    for (auto [i, k] : llvm::enumerate(candidates))
      mask[k] = m & (1u << i);
    if (!isLinearIn(op, mask))
      continue;
    for (unsigned a = 1; a < (1u << free.size()); ++a) {
      AxisList axesOf;
      for (auto [i, name] : llvm::enumerate(free))
        if (a & (1u << i))
          axesOf.push_back(name);
      Strategy s = base;
      s.passOperands = mask;
      s.passAxes = axesOf;
      for (auto [k, sharding] : llvm::enumerate(s.operands))
        if (mask[k])
          sharding->partial.append(axesOf.begin(), axesOf.end());
      for (std::optional<TensorSharding> &sharding : s.results)
        if (sharding)
          sharding->partial.append(axesOf.begin(), axesOf.end());
      node.strategies.push_back(std::move(s));
    }
  }
}

void Planner::addOp(Operation *op) {
  // A later repeat's op joins the first repeat's node.
  if (Operation *rep = repOps.lookup(op)) {
    unsigned n = nodeOfOp.lookup(rep);
    ++nodes[n].multiplicity;
    for (auto [i, r] : llvm::enumerate(op->getResults()))
      sources[r] = {n, static_cast<unsigned>(i)};
    nodeOfOp[op] = n;
    members.push_back({op, n});
    return;
  }
  if (const ShardingRule *rule = rules.get(op))
    return addRuledOp(op, *rule);
  // One strategy: what a constraint says, or replicated.
  Strategy s;
  auto replicated = [](Value v) -> std::optional<TensorSharding> {
    if (!isTensor(v))
      return std::nullopt;
    return TensorSharding::replicated(
        cast<RankedTensorType>(v.getType()).getRank());
  };
  if (isa<AnnotateOp, ReshardOp>(op)) {
    TensorSharding target = TensorSharding::fromAttr(getOwnSharding(op));
    s.operands.push_back(target);
    s.results.push_back(target);
  } else if (op->hasTrait<OpTrait::IsTerminator>() &&
             op->getParentOp() == func.getOperation()) {
    for (auto [i, v] : llvm::enumerate(op->getOperands())) {
      // A result tied to an argument: its edge goes to the argument's node
      // (addEdges).
      if (tiedArgument(i) >= 0)
        s.operands.push_back(std::nullopt);
      else
        s.operands.push_back(i < constraints.results.size() &&
                                     constraints.results[i] && isTensor(v)
                                 ? constraints.results[i]
                                 : replicated(v));
    }
  } else if (isa<tensor::DimOp>(op)) {
    // A size query reads no data: any sharding will do.
    s.operands.resize(op->getNumOperands());
  } else {
    for (Value v : op->getOperands())
      s.operands.push_back(replicated(v));
    for (Value v : op->getResults())
      s.results.push_back(replicated(v));
  }
  Node node;
  node.op = op;
  node.strategies.push_back(std::move(s));
  addOpNode(op, std::move(node));
}

void Planner::addOpNode(Operation *op, Node node) {
  for (auto [i, r] : llvm::enumerate(op->getResults()))
    sources[r] = {static_cast<unsigned>(nodes.size()),
                  static_cast<unsigned>(i)};
  nodeOfOp[op] = nodes.size();
  members.push_back({op, static_cast<unsigned>(nodes.size())});
  nodes.push_back(std::move(node));
}
