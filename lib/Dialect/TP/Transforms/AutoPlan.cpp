//===- AutoPlan.cpp - Choosing every sharding of a function ---------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// See AutoPlan.h for the model and the programme, Planner.h for the files
// that do each step:
//  0. Repeated layers fold onto their first repeat (a map from each later
//     repeat's ops and weights to the first's).
//  1. Nodes, in program order: every tensor argument, every op that touches
//     tensors (ops inside a ruled op's body work on scalars and are not
//     visited; data-less values are made where used and need no node). Each
//     node gets its strategies: an argument every sharding its dimensions
//     divide by, a ruled op every block split of its factors, a constraint or
//     an op without a rule exactly one.
//  2. Edges: every tensor operand read from another node, with the seconds
//     of resharding per pair of strategies (cached per type and pair of
//     shardings). An edge to or from a node of one strategy is folded into
//     the other end's strategy costs.
//  3. The programme, solved by CBC; each node's strategy is read back.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/AutoPlan.h"

#include "Planner.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tp-auto-plan"

using namespace mlir;
using namespace mlir::tp;
using namespace mlir::tp::planner;

FailureOr<FunctionPlan> Planner::run() {
  foldRepeats();
  // Per op and per value: sized once (from the body's top-level ops, which
  // the structure counted), not grown through every doubling.
  unsigned numOps = givenStructure->live.numOps;
  nodeOfOp.reserve(numOps);
  sources.reserve(numOps + func.getNumArguments());
  members.reserve(numOps);
  for (BlockArgument arg : func.getArguments())
    if (isTensor(arg) && !repArgs.count(arg))
      addArgument(arg);
  for (auto [arg, rep] : repArgs) {
    Source source = sources.lookup(rep);
    sources[arg] = source;
    ++nodes[source.node].multiplicity;
  }
  func.getFunctionBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    bool ruled = rules.get(op);
    // What carries no data (tensor.empty, its fills, splat constants) is
    // made in whatever sharding each user needs: no choice to plan.
    bool dataless =
        op->getNumResults() > 0 && llvm::all_of(op->getResults(), [](Value r) {
          return isTensor(r) && isRematerializable(r);
        });
    if (!dataless && (ruled || llvm::any_of(op->getOperands(), isTensor) ||
                      llvm::any_of(op->getResults(), isTensor)))
      addOp(op);
    return ruled ? WalkResult::skip() : WalkResult::advance();
  });
  // A node's compute and bytes count once per op it stands for; its edges
  // were added once per real edge.
  for (Node &node : nodes)
    for (Strategy &s : node.strategies) {
      s.computeSeconds *= node.multiplicity;
      s.bytes *= node.multiplicity;
    }
  addPeakActivations();
  addEdges();
  // The incumbent, costed in the same model.
  std::optional<SmallVector<unsigned>> given;
  double givenPeakBytes = 0, givenBytes = 0;
  if (incumbent)
    if ((given = incumbentStrategies()))
      givenBytes = totalsOf(*given).bytes * (1 + 1e-9);
  // The budget: the user's; beside an incumbent, never below what the
  // incumbent holds (judgeSearch keeps a plan that holds more than both).
  budgetBytes = options.memoryPerDevice;
  if (given && budgetBytes > 0)
    budgetBytes = std::max(budgetBytes, givenBytes);
  // Beside an incumbent only a plan faster by more than the margin is of
  // use: the search stops at the first proof that there is none (the
  // relaxation's bound, most often at once).
  if (given) {
    Totals t = totalsOf(*given);
    cutoffSeconds = (t.compute + t.communication) * (1 - kSearchAdoptionMargin);
  }
  SmallVector<unsigned> chosen;
  // Beside an incumbent the model cannot express, the search's plan is only
  // recorded, never adopted (judgeSearch): finding none is no error, and the
  // incumbent stays (a split the model's strategies do not have, such as a
  // dynamic dimension's, leaves no plan at all).
  bool inexpressible = incumbent && !given;
  if (failed(solve(chosen, std::nullopt, /*ignoreBudget=*/false,
                   /*quiet=*/inexpressible))) {
    if (inexpressible) {
      FunctionPlan plan;
      plan.noneFaster = true;
      return plan;
    }
    if (!noneBelowCutoff)
      return failure();
    // No plan is clearly faster than the incumbent: it stays (its peak,
    // which nothing weighs, is not walked).
    FunctionPlan plan;
    Totals t = totalsOf(*given);
    plan.computeSeconds = t.compute;
    plan.communicationSeconds = t.communication;
    plan.incumbent = {t.compute, t.communication, 0};
    plan.noneFaster = true;
    return plan;
  }
  if (given)
    givenPeakBytes = peakBytesOf(*given);
  double peakBytes = peakBytesOf(chosen);
  std::optional<FunctionPlan::Costed> fastest;
  // A plan over both is planned again within what the incumbent holds in
  // the programme's terms (which it fits), in case a plan that does not
  // hold more is faster too.
  if (given && peakBytes > std::max(givenPeakBytes, options.memoryPerDevice)) {
    budgetBytes = givenBytes;
    SmallVector<unsigned> within;
    if (succeeded(solve(within, std::nullopt, false, /*quiet=*/true)))
      if (double bytes = peakBytesOf(within); bytes <= givenPeakBytes) {
        Totals t = totalsOf(chosen);
        fastest = {t.compute, t.communication, peakBytes};
        chosen = std::move(within);
        peakBytes = bytes;
      }
  }

  FunctionPlan plan;
  plan.arguments.resize(func.getNumArguments());
  Totals totals = totalsOf(chosen);
  LLVM_DEBUG({
    for (auto [n, node] : llvm::enumerate(nodes)) {
      const Strategy &st = node.strategies[chosen[n]];
      if (st.computeSeconds + st.communicationSeconds > 1e-4) {
        llvm::dbgs() << "node " << n << " x" << node.multiplicity << " comp "
                     << st.computeSeconds << " comm " << st.communicationSeconds
                     << " nstrat " << node.strategies.size() << ": ";
        if (node.op)
          node.op->print(llvm::dbgs(), OpPrintingFlags().skipRegions());
        else
          llvm::dbgs() << "argument #" << node.argument;
        llvm::dbgs() << "\n";
      }
    }
    for (auto &e : edges) {
      double c = e.second.seconds[chosen[e.second.from] *
                                      nodes[e.second.to].strategies.size() +
                                  chosen[e.second.to]];
      if (c > 1e-4)
        llvm::dbgs() << "edge " << e.second.from << "->" << e.second.to << " "
                     << c << "\n";
    }
    for (auto &e : shared) {
      const SharedRead &read = e.second;
      unsigned from = read.from ? chosen[*read.from] : 0;
      for (auto &[node, need] : read.readers) {
        int t = need[chosen[node]];
        if (t >= 0 && read.seconds[from * read.numTargets + t] > 1e-4)
          llvm::dbgs() << "shared read from "
                       << (read.from ? int(*read.from) : -1) << " reader "
                       << node << " t " << t << " "
                       << read.seconds[from * read.numTargets + t] << "\n";
      }
    }
  });
  plan.computeSeconds = totals.compute;
  plan.communicationSeconds = totals.communication;
  plan.argumentBytes = totals.bytes - totals.activationBytes;
  plan.activationBytes = totals.activationBytes;
  plan.peakBytes = peakBytes;
  plan.fastest = fastest;
  if (given && !fastest)
    plan.noneFaster =
        llvm::equal(chosen, *given) ||
        plan.computeSeconds + plan.communicationSeconds >= cutoffSeconds;
  if (given) {
    Totals t = totalsOf(*given);
    plan.incumbent = {t.compute, t.communication, givenPeakBytes};
  }
  for (auto [n, node] : llvm::enumerate(nodes))
    if (node.argument >= 0)
      plan.arguments[node.argument] =
          node.strategies[chosen[n]].results.front();
  // Each weight's runner-up: the best plan in which it is split otherwise,
  // within the budget, or, when none fits, the best over it (whose bytes
  // say why it lost).
  for (auto [n, node] : llvm::enumerate(nodes)) {
    if (node.argument < 0 || node.strategies.size() < 2 ||
        cast<RankedTensorType>(func.getArgument(node.argument).getType())
                .getRank() < 2)
      continue;
    WeightChoice weight;
    weight.argument = node.argument;
    weight.layers = node.multiplicity;
    weight.chosen = *node.strategies[chosen[n]].results.front();
    SmallVector<unsigned> other;
    auto without = std::make_pair(static_cast<unsigned>(n), chosen[n]);
    if (options.explain &&
        (succeeded(solve(other, without)) ||
         succeeded(solve(other, without, /*ignoreBudget=*/true)))) {
      Totals t = totalsOf(other);
      weight.runnerUp = *node.strategies[other[n]].results.front();
      weight.runnerUpSeconds = t.compute + t.communication;
      weight.runnerUpBytes = t.bytes;
    }
    plan.weights.push_back(std::move(weight));
  }
  for (auto [arg, rep] : repArgs)
    plan.arguments[cast<BlockArgument>(arg).getArgNumber()] =
        plan.arguments[cast<BlockArgument>(rep).getArgNumber()];
  plan.ops.decisions.reserve(members.size());
  for (auto [op, n] : members) {
    if (!rules.get(op))
      continue;
    const Strategy &s = nodes[n].strategies[chosen[n]];
    plan.ops.decisions[op] = s.decision;
    if (!s.passAxes.empty())
      plan.ops.passes[op] = {s.passOperands, s.passAxes};
  }
  return plan;
}

std::optional<SmallVector<unsigned>> Planner::incumbentStrategies() const {
  constexpr unsigned kUnset = ~0u;
  SmallVector<unsigned> chosen(nodes.size(), kUnset);
  auto sameAxes = [](const AxisList &a, const AxisList &b) {
    return a.size() == b.size() && llvm::all_of(a, [&](StringRef x) {
             return llvm::is_contained(b, x);
           });
  };
  for (auto [op, n] : members) {
    const Node &node = nodes[n];
    unsigned index = 0;
    auto decision = incumbent->decisions.find(op);
    if (decision == incumbent->decisions.end()) {
      // An op without a rule has one strategy.
      if (node.strategies.size() > 1)
        return std::nullopt;
    } else {
      auto pass = incumbent->passes.find(op);
      auto it = llvm::find_if(node.strategies, [&](const Strategy &s) {
        if (s.decision.axes != decision->second.axes)
          return false;
        if (pass == incumbent->passes.end())
          return s.passAxes.empty();
        return sameAxes(s.passAxes, pass->second.axes) &&
               s.passOperands == pass->second.operands;
      });
      if (it == node.strategies.end())
        return std::nullopt;
      index = it - node.strategies.begin();
    }
    if (chosen[n] != kUnset && chosen[n] != index)
      return std::nullopt;
    chosen[n] = index;
  }
  // Argument nodes: a constraint each (one strategy), or no incumbent.
  for (auto [n, node] : llvm::enumerate(nodes))
    if (chosen[n] == kUnset) {
      if (node.strategies.size() > 1)
        return std::nullopt;
      chosen[n] = 0;
    }
  return chosen;
}

Planner::Totals Planner::totalsOf(ArrayRef<unsigned> chosen) const {
  Totals t;
  for (auto [n, node] : llvm::enumerate(nodes)) {
    const Strategy &s = node.strategies[chosen[n]];
    t.compute += s.computeSeconds;
    t.communication += s.communicationSeconds;
    t.bytes += s.bytes;
    t.activationBytes += s.activationBytes;
  }
  for (auto &entry : edges) {
    const Edge &edge = entry.second;
    t.communication +=
        edge.seconds[chosen[edge.from] * nodes[edge.to].strategies.size() +
                     chosen[edge.to]];
  }
  for (auto &entry : shared) {
    const SharedRead &read = entry.second;
    unsigned from = read.from ? chosen[*read.from] : 0;
    SmallVector<bool> needed(read.numTargets, false);
    for (auto &[node, need] : read.readers)
      if (int target = need[chosen[node]]; target >= 0)
        needed[target] = true;
    for (unsigned target = 0; target < read.numTargets; ++target)
      if (needed[target])
        t.communication += read.seconds[from * read.numTargets + target];
  }
  return t;
}

PlanStructure mlir::tp::findPlanStructure(FunctionOpInterface func) {
  PlanStructure structure;
  // Where each sharding came from (record-origins) names each layer's own
  // ops: it does not change what a layer computes or costs.
  structure.finder = std::make_unique<LayerFinder>(
      &func.getFunctionBody().front(),
      StringAttr::get(func.getContext(), TPDialect::kOriginsAttrName));
  structure.finder->collect();
  // The search checked every repeat it returns against the first: what each
  // reads from outside comes with it.
  structure.found = structure.finder->search(kMinLayerOps, &structure.checked);
  structure.live = findLiveRanges(func.getFunctionBody().front());
  return structure;
}

FailureOr<FunctionPlan> mlir::tp::planFunction(
    FunctionOpInterface func, MeshOp mesh, const PlanConstraints &constraints,
    const AutoPlanOptions &options, const OpChoices *incumbent,
    ShardingRuleCache *rules, PlanStructure *repeats) {
  return Planner(func, mesh, constraints, options, incumbent, rules, repeats)
      .run();
}

StringRef mlir::tp::stringifySearchRule(SearchRule rule) {
  switch (rule) {
  case SearchRule::Inexpressible:
    return "inexpressible";
  case SearchRule::Memory:
    return "memory";
  case SearchRule::Margin:
    return "margin";
  case SearchRule::Adopted:
    return "adopted";
  }
  llvm_unreachable("unknown search rule");
}

std::optional<SearchRule> mlir::tp::symbolizeSearchRule(StringRef text) {
  for (SearchRule rule : {SearchRule::Inexpressible, SearchRule::Memory,
                          SearchRule::Margin, SearchRule::Adopted})
    if (stringifySearchRule(rule) == text)
      return rule;
  return std::nullopt;
}

SearchRule mlir::tp::judgeSearch(const FunctionPlan &plan,
                                 double memoryPerDevice) {
  if (!plan.incumbent)
    return SearchRule::Inexpressible;
  const FunctionPlan::Costed &given = *plan.incumbent;
  // The user's split is their budget: a plan may hold more than it only
  // where the user said how much a device holds.
  if (plan.peakBytes > std::max(given.peakBytes, memoryPerDevice))
    return SearchRule::Memory;
  auto clearlyFaster = [&](double seconds) {
    return seconds < given.seconds() * (1 - kSearchAdoptionMargin);
  };
  if (!clearlyFaster(plan.computeSeconds + plan.communicationSeconds))
    // What stopped a faster plan: its bytes, or the margin.
    return plan.fastest && clearlyFaster(plan.fastest->seconds())
               ? SearchRule::Memory
               : SearchRule::Margin;
  return SearchRule::Adopted;
}

std::optional<double> mlir::tp::parseByteSize(StringRef text) {
  text = text.trim();
  size_t numberEnd = text.find_first_not_of("0123456789.eE+-");
  // "1e9" is a number; "1GB" a number and a unit ('B' and 'G' stop it).
  StringRef number = text.take_front(numberEnd);
  StringRef unit = text.drop_front(number.size()).trim();
  double value;
  if (number.empty() || number.getAsDouble(value) || !(value > 0) ||
      !std::isfinite(value))
    return std::nullopt;
  static const std::pair<StringRef, double> kUnits[] = {
      {"", 1},
      {"B", 1},
      {"KB", 1e3},
      {"MB", 1e6},
      {"GB", 1e9},
      {"TB", 1e12},
      {"KiB", 1 << 10},
      {"MiB", 1 << 20},
      {"GiB", double(1 << 30)},
      {"TiB", double(1ull << 40)}};
  for (auto [name, scale] : kUnits)
    if (unit == name)
      return value * scale;
  return std::nullopt;
}
