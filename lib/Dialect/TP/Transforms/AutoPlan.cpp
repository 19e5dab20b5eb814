//===- AutoPlan.cpp - Choosing every sharding of a function ---------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// See AutoPlan.h for the model and the programme. Here:
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

#include "CoinSolvers.h"
#include "MixedIntegerProgram.h"

#include "tp/Dialect/TP/IR/TPInterfaces.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Dialect/TP/Transforms/RepeatedLayers.h"
#include "tp/Dialect/TP/Transforms/Resharding.h"
#include "tp/Dialect/TP/Transforms/Structure.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Debug.h"

#include <map>

#define DEBUG_TYPE "tp-auto-plan"

using namespace mlir;
using namespace mlir::tp;

namespace {

bool isTensor(Value v) { return isa<RankedTensorType>(v.getType()); }

/// The fewest ops a repeat must have to be planned once for all repeats.
constexpr unsigned kMinLayerOps = 8;

struct Strategy {
  /// An op with a rule: how its factors split.
  FactorDecision decision;
  /// Per operand, what the op needs (none: anything will do).
  SmallVector<std::optional<TensorSharding>, 4> operands;
  /// Per result, what the op makes.
  SmallVector<std::optional<TensorSharding>, 2> results;
  /// Compute seconds, and communication folded in from one-sided edges.
  double computeSeconds = 0;
  double communicationSeconds = 0;
  /// Bytes held against the budget: an argument's, and the activations of
  /// the peak this strategy makes (`activationBytes` of them).
  double bytes = 0;
  double activationBytes = 0;
  /// A pending sum carried on: the operands read unreduced, over `passAxes`
  /// (empty: none).
  SmallVector<bool> passOperands;
  AxisList passAxes;
};

struct Node {
  Operation *op = nullptr;
  /// For an argument node: its number.
  int argument = -1;
  SmallVector<Strategy, 4> strategies;
  /// The first CBC column of its strategies (-1: one strategy, no column).
  int column = -1;
  /// How many ops (or arguments) it stands for: a repeated layer's op and
  /// the same op of every later repeat share one node.
  unsigned multiplicity = 1;
};

struct Edge {
  unsigned from, to;
  /// Seconds per (strategy of `from`, strategy of `to`), row-major.
  SmallVector<double> seconds;
  int column = -1;
};

/// A value read by several readers: each sharding they need is made once
/// (a reshard serves every reader that needs it), so the cost is per
/// (strategy of the source, needed sharding), paid when any chosen reader
/// strategy needs that sharding.
struct SharedRead {
  /// The source node, or none (a value whole on every device).
  std::optional<unsigned> from;
  /// Per reader: its node and, per strategy, the index of the sharding it
  /// needs in `seconds`' columns (-1: none, or the made one for free).
  SmallVector<std::pair<unsigned, SmallVector<int>>> readers;
  unsigned numTargets = 0;
  /// Seconds per (strategy of `from`, needed sharding), row-major, summed
  /// over the values of repeated layers this stands for.
  SmallVector<double> seconds;
  int targetColumn = -1, pairColumn = -1;
};

/// Where a value comes from: a node and its result number (an argument node
/// has one result).
struct Source {
  unsigned node;
  unsigned result;
};

/// Test aid: how many relaxations the planner's own branch and bound may
/// solve before the programme goes to CBC (0: CBC alone, as before it).
static llvm::cl::opt<int> clPlanRelaxations(
    "tp-auto-plan-relaxations", llvm::cl::Hidden, llvm::cl::init(-1),
    llvm::cl::desc("Relaxations auto-plan's branch and bound may solve "
                   "before CBC takes over (-1: by the programme's size; 0: "
                   "CBC only)"));

class Planner {
public:
  Planner(FunctionOpInterface func, MeshOp mesh,
          const PlanConstraints &constraints, const AutoPlanOptions &options,
          const OpChoices *incumbent, ShardingRuleCache *sharedRules,
          PlanStructure *givenStructure)
      : func(func), mesh(mesh), constraints(constraints), options(options),
        incumbent(incumbent), givenStructure(givenStructure), axes(mesh),
        decisions(decider, axes),
        attrs(func->getContext(),
              FlatSymbolRefAttr::get(mesh.getSymNameAttr())),
        rules(sharedRules ? *sharedRules : ownRules) {
    for (auto [name, size] :
         llvm::zip(mesh.getAxisNames(), mesh.getAxisSizes()))
      if (size > 1)
        splitAxes.push_back({cast<StringAttr>(name).getValue(), size});
  }

  FailureOr<FunctionPlan> run();

private:
  /// Maps the ops (and weights) of every repeat of the body's repeated
  /// layers but the first to the first's.
  void foldRepeats();
  void mapNested(Operation *rep, Operation *other);
  void addArgument(BlockArgument arg);
  void addOp(Operation *op);
  void addRuledOp(Operation *op, const ShardingRule &rule);
  /// Adds to `node` the variants of `base` that carry pending sums on: per
  /// set of operands `op` is linear in, and per set of mesh axes `base`
  /// leaves free, those operands read pending over the axes and the results
  /// made pending over them (a sum reduced later, after this op, or a
  /// replicated addend turned into one term for free).
  void addPendingVariants(Operation *op, Node &node, const Strategy &base);
  /// Calls `leaf` for every way of putting each mesh axis that splits (in
  /// mesh order) on one of `numSlots` slots or on none, where slot i only
  /// takes axes whose group size divides `sizeOf(i)` (0: it takes none).
  void forEachAssignment(unsigned numSlots,
                         function_ref<int64_t(unsigned)> sizeOf,
                         function_ref<void(ArrayRef<AxisList>)> leaf) const;
  /// Every sharding of `type` that splits dimensions by mesh axes (in mesh
  /// order) into equal blocks.
  SmallVector<TensorSharding> shardingsOf(RankedTensorType type) const;
  double computeSeconds(Operation *op, const ShardingRule &rule,
                        const Strategy &s) const;
  double reshardSeconds(RankedTensorType type, const TensorSharding &from,
                        const TensorSharding &to);
  void addEdges();
  /// Charges the intermediates live at the function's peak (program order,
  /// whole sizes) to the strategies that make them, at their local sizes.
  void addPeakActivations();
  /// The argument function result `i` takes its sharding from, or -1.
  int tiedArgument(unsigned i) const {
    return i < constraints.resultTies.size() &&
                   (i >= constraints.results.size() || !constraints.results[i])
               ? constraints.resultTies[i]
               : -1;
  }
  /// The best plan (one strategy per node) within `budgetBytes` (0: none).
  /// With `forbidden` (a node and one of its strategies), the best plan
  /// without that strategy, within the budget or (`ignoreBudget`) not,
  /// failing quietly when there is none; so does a `quiet` solve.
  LogicalResult
  solve(SmallVectorImpl<unsigned> &chosen,
        std::optional<std::pair<unsigned, unsigned>> forbidden = std::nullopt,
        bool ignoreBudget = false, bool quiet = false);
  struct Totals {
    double compute = 0, communication = 0, bytes = 0, activationBytes = 0;
  };
  Totals totalsOf(ArrayRef<unsigned> chosen) const;
  /// The bytes one device holds at the peak of the plan `chosen`
  /// (FunctionPlan::peakBytes).
  double peakBytesOf(ArrayRef<unsigned> chosen) const;
  /// The strategy of every node that `incumbent` makes, when each of its
  /// ops' choices is a strategy (and the repeats of a layer agree).
  std::optional<SmallVector<unsigned>> incumbentStrategies() const;

  FunctionOpInterface func;
  MeshOp mesh;
  const PlanConstraints &constraints;
  const AutoPlanOptions &options;
  const OpChoices *incumbent;
  /// The bytes a plan may hold (the programme's terms: arguments and the
  /// activations live at the peak); 0: no budget.
  double budgetBytes = 0;
  /// Beside an incumbent: the modelled seconds a plan must beat to be of
  /// use (judgeSearch's margin), which cuts the search short; and whether
  /// the last solve proved that no plan does.
  double cutoffSeconds = std::numeric_limits<double>::infinity();
  bool noneBelowCutoff = false;
  /// The function's structure, found by the caller or (`ownStructure`)
  /// by foldRepeats.
  PlanStructure *givenStructure;
  PlanStructure ownStructure;
  MeshAxes axes;
  SmallVector<std::pair<StringRef, int64_t>> splitAxes;
  CommunicationCostDecider decider;
  OpDecisions decisions;
  ShardingAttrCache attrs;
  ShardingRuleCache ownRules;
  ShardingRuleCache &rules;

  std::vector<Node> nodes;
  DenseMap<Value, Source> sources;
  /// Folded repeats: an op or argument to the first repeat's.
  DenseMap<Operation *, Operation *> repOps;
  DenseMap<Value, Value> repArgs;
  /// Every op visited, with the node it belongs to.
  SmallVector<std::pair<Operation *, unsigned>> members;
  DenseMap<Operation *, unsigned> nodeOfOp;
  llvm::MapVector<std::pair<unsigned, unsigned>, Edge> edges;
  /// Shared reads, one per distinct (source, readers) shape: the same value
  /// of every repeat shares one.
  std::map<std::vector<int64_t>, SharedRead> shared;
  DenseMap<std::tuple<Attribute, Attribute, Type>, double> reshardCache;
};

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
  for (auto [i, r] : llvm::enumerate(op->getResults()))
    sources[r] = {static_cast<unsigned>(nodes.size()),
                  static_cast<unsigned>(i)};
  nodeOfOp[op] = nodes.size();
  members.push_back({op, static_cast<unsigned>(nodes.size())});
  nodes.push_back(std::move(node));
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
  for (auto [i, r] : llvm::enumerate(op->getResults()))
    sources[r] = {static_cast<unsigned>(nodes.size()),
                  static_cast<unsigned>(i)};
  nodeOfOp[op] = nodes.size();
  members.push_back({op, static_cast<unsigned>(nodes.size())});
  nodes.push_back(std::move(node));
}

double Planner::reshardSeconds(RankedTensorType type,
                               const TensorSharding &from,
                               const TensorSharding &to) {
  if (from == to)
    return 0;
  ShardingAttr fromAttr = attrs.get(from), toAttr = attrs.get(to);
  auto [it, inserted] = reshardCache.try_emplace(
      std::make_tuple(Attribute(fromAttr), Attribute(toAttr), Type(type)), 0.0);
  if (!inserted)
    return it->second;
  // Walk the steps, keeping the sharding between them for the bytes.
  TensorSharding cur = from;
  double seconds = 0;
  for (const ReshardStep &step : planReshard(fromAttr, toAttr)) {
    int64_t n = axes.groupSize(step.axes);
    auto drop = [&](AxisList &list) {
      for (StringRef a : step.axes)
        llvm::erase(list, a);
    };
    switch (step.kind) {
    case ReshardStep::Kind::AllReduce:
      seconds += options.machine->collectiveSeconds(
          CollectiveKind::AllReduce, n, localBytes(type, cur, axes));
      drop(cur.partial);
      break;
    case ReshardStep::Kind::ReduceScatter:
      seconds += options.machine->collectiveSeconds(
          CollectiveKind::ReduceScatter, n, localBytes(type, cur, axes));
      drop(cur.partial);
      cur.dims[step.dim].append(step.axes.begin(), step.axes.end());
      break;
    case ReshardStep::Kind::AllGather:
      drop(cur.dims[step.dim]);
      seconds += options.machine->collectiveSeconds(
          CollectiveKind::AllGather, n, localBytes(type, cur, axes));
      break;
    case ReshardStep::Kind::AllToAll:
      seconds += options.machine->collectiveSeconds(
          CollectiveKind::AllToAll, n,
          localBytes(type, cur, axes) * static_cast<double>(n));
      drop(cur.dims[step.concatDim]);
      cur.dims[step.dim].append(step.axes.begin(), step.axes.end());
      break;
    case ReshardStep::Kind::AllSlice:
      cur.dims[step.dim].append(step.axes.begin(), step.axes.end());
      break;
    case ReshardStep::Kind::ZeroOthers:
      break;
    }
  }
  it->second = seconds;
  return seconds;
}

void Planner::mapNested(Operation *rep, Operation *other) {
  for (auto [ra, rb] : llvm::zip(rep->getRegions(), other->getRegions()))
    for (auto [ba, bb] : llvm::zip(ra, rb))
      for (auto [oa, ob] : llvm::zip(ba, bb)) {
        repOps[&ob] = &oa;
        mapNested(&oa, &ob);
      }
}

void Planner::foldRepeats() {
  Block &body = func.getFunctionBody().front();
  if (!givenStructure) {
    ownStructure = findPlanStructure(func);
    givenStructure = &ownStructure;
  }
  PlanStructure &repeats = *givenStructure;
  const LayerFinder &finder = *repeats.finder;
  const RepeatExternals &checked = repeats.checked;
  LayerRepeats found = repeats.found;
  if (!found.saved())
    return;
  ArrayRef<Operation *> first = finder.repeat(found.start, found.period, 0);
  auto argNumber = [&](Value v) -> int {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == &body ? arg.getArgNumber() : -1;
  };
  llvm::DenseSet<Operation *> inOther;
  repOps.reserve(found.period * (found.repeats - 1));
  // The ops nested in a ruled op are never nodes (its body works on
  // scalars): only other ops' regions are mapped.
  SmallVector<bool> ruled = llvm::map_to_vector(
      first, [&](Operation *op) { return bool(rules.get(op)); });
  for (unsigned k = 1; k < found.repeats; ++k) {
    ArrayRef<Operation *> other = finder.repeat(found.start, found.period, k);
    inOther.clear();
    inOther.insert(other.begin(), other.end());
    for (auto [a, b, isRuled] : llvm::zip(first, other, ruled)) {
      repOps[b] = a;
      if (!isRuled)
        mapNested(a, b);
    }
    ArrayRef<Value> externals = checked.first, others = checked.others[k - 1];
    // A weight of this repeat alone takes the first's place, unless a
    // constraint fixes it to another sharding than the first's.
    for (auto [x, y] : llvm::zip(externals, others)) {
      int xi = argNumber(x), yi = argNumber(y);
      if (x == y || xi < 0 || yi < 0 || !isTensor(y) ||
          llvm::any_of(y.getUsers(), [&](Operation *user) {
            return !inOther.contains(finder.topLevel(user));
          }))
        continue;
      const std::optional<TensorSharding> &fx = constraints.arguments[xi];
      const std::optional<TensorSharding> &fy = constraints.arguments[yi];
      if (fy && (!fx || *fx != *fy))
        continue;
      repArgs[y] = x;
    }
  }
}

void Planner::addEdges() {
  // Every read of each value: the reading node and what it needs per
  // strategy (the op's operand, or, for a result tied to an argument, the
  // argument's sharding: a gradient returned as its parameter is laid out).
  struct Read {
    unsigned node;
    unsigned operand;
    int tie;
  };
  Operation *ret = func.getFunctionBody().back().getTerminator();
  llvm::MapVector<Value, SmallVector<Read, 2>> reads;
  reads.reserve(members.size());
  for (auto [op, reader] : members)
    for (auto [k, operand] : llvm::enumerate(op->getOperands())) {
      if (!isTensor(operand) || isRematerializable(operand))
        continue;
      int tie = op == ret ? tiedArgument(k) : -1;
      unsigned v =
          tie >= 0 ? sources.lookup(func.getArgument(tie)).node : reader;
      reads[operand].push_back({v, static_cast<unsigned>(k), tie});
    }

  // The same value of every repeat of a layer is read alike (the same
  // source node and result, type and reading nodes): its costs are found
  // once and counted once per value.
  struct Group {
    Value value;
    unsigned count;
  };
  SmallVector<Group> groups;
  DenseMap<ArrayRef<int64_t>, unsigned> groupOf;
  llvm::BumpPtrAllocator keyStorage;
  SmallVector<int64_t, 16> shape;
  for (auto &[value, list] : reads) {
    shape.clear();
    auto it = sources.find(value);
    if (it != sources.end())
      llvm::append_values(shape, it->second.node, it->second.result);
    else
      llvm::append_values(shape, -1, 0);
    shape.push_back(
        reinterpret_cast<intptr_t>(value.getType().getAsOpaquePointer()));
    for (const Read &r : list)
      llvm::append_values(shape, r.node, r.operand, r.tie);
    auto found = groupOf.find(ArrayRef<int64_t>(shape));
    if (found != groupOf.end()) {
      ++groups[found->second].count;
      continue;
    }
    int64_t *stored = keyStorage.Allocate<int64_t>(shape.size());
    llvm::copy(shape, stored);
    groupOf[ArrayRef<int64_t>(stored, shape.size())] = groups.size();
    groups.push_back({value, 1});
  }

  for (auto [value, count] : groups) {
    ArrayRef<Read> list = reads.find(value)->second;
    double weight = count;
    auto type = cast<RankedTensorType>(value.getType());
    // A value from outside the nodes (a loop's block argument) is whole on
    // every device.
    std::optional<Source> source;
    if (auto it = sources.find(value); it != sources.end())
      source = it->second;
    unsigned numFrom = source ? nodes[source->node].strategies.size() : 1;
    TensorSharding whole = TensorSharding::replicated(type.getRank());
    auto madeBy = [&](unsigned i) -> const TensorSharding & {
      if (!source)
        return whole;
      const std::optional<TensorSharding> &r =
          nodes[source->node].strategies[i].results[source->result];
      return r ? *r : whole;
    };
    auto neededBy = [&](const Read &r,
                        unsigned j) -> const std::optional<TensorSharding> & {
      const Strategy &s = nodes[r.node].strategies[j];
      return r.tie >= 0 ? s.results.front() : s.operands[r.operand];
    };

    SmallVector<Read, 2> others;
    for (const Read &r : list) {
      // A repeat's output read by the next repeat's same op: the node pays
      // for its own strategy met again.
      if (source && source->node == r.node) {
        for (auto [j, s] : llvm::enumerate(nodes[r.node].strategies))
          if (const std::optional<TensorSharding> &needed = neededBy(r, j))
            s.communicationSeconds +=
                weight * reshardSeconds(type, madeBy(j), *needed);
        continue;
      }
      others.push_back(r);
    }
    if (others.empty())
      continue;

    if (others.size() == 1) {
      const Read &r = others.front();
      Node &node = nodes[r.node];
      unsigned numTo = node.strategies.size();
      SmallVector<double> seconds(numFrom * numTo, 0.0);
      bool any = false;
      for (unsigned i = 0; i < numFrom; ++i)
        for (unsigned j = 0; j < numTo; ++j)
          if (const std::optional<TensorSharding> &needed = neededBy(r, j)) {
            double t = weight * reshardSeconds(type, madeBy(i), *needed);
            seconds[i * numTo + j] = t;
            any |= t > 0;
          }
      if (!any)
        continue;
      // One end with one strategy: the cost belongs to the other end.
      if (numFrom == 1) {
        for (unsigned j = 0; j < numTo; ++j)
          node.strategies[j].communicationSeconds += seconds[j];
        continue;
      }
      if (numTo == 1) {
        for (unsigned i = 0; i < numFrom; ++i)
          nodes[source->node].strategies[i].communicationSeconds += seconds[i];
        continue;
      }
      auto [entry, inserted] =
          edges.try_emplace(std::make_pair(source->node, r.node), Edge());
      Edge &edge = entry->second;
      if (inserted) {
        edge.from = source->node;
        edge.to = r.node;
        edge.seconds = std::move(seconds);
      } else {
        for (auto [a, b] : llvm::zip(edge.seconds, seconds))
          a += b;
      }
      continue;
    }

    // Several readers: the shardings they may need, each made once.
    SharedRead read;
    if (source)
      read.from = source->node;
    SmallVector<TensorSharding> targets;
    DenseMap<Attribute, int> targetIndex;
    for (const Read &r : others) {
      SmallVector<int> need;
      for (unsigned j = 0; j < nodes[r.node].strategies.size(); ++j) {
        const std::optional<TensorSharding> &needed = neededBy(r, j);
        if (!needed) {
          need.push_back(-1);
          continue;
        }
        auto [it, inserted] =
            targetIndex.try_emplace(attrs.get(*needed), targets.size());
        if (inserted)
          targets.push_back(*needed);
        need.push_back(it->second);
      }
      read.readers.push_back({r.node, std::move(need)});
    }
    // Only shardings that cost something from some source strategy.
    SmallVector<int> kept(targets.size(), -1);
    for (auto [t, target] : llvm::enumerate(targets)) {
      SmallVector<double> costs;
      for (unsigned i = 0; i < numFrom; ++i)
        costs.push_back(weight * reshardSeconds(type, madeBy(i), target));
      if (llvm::none_of(costs, [](double c) { return c > 0; }))
        continue;
      kept[t] = read.numTargets++;
      read.seconds.append(costs);
    }
    if (read.numTargets == 0)
      continue;
    // seconds: per needed sharding, per source strategy; make it row-major
    // per source strategy.
    SmallVector<double> bySource(read.seconds.size());
    for (unsigned t = 0; t < read.numTargets; ++t)
      for (unsigned i = 0; i < numFrom; ++i)
        bySource[i * read.numTargets + t] = read.seconds[t * numFrom + i];
    read.seconds = std::move(bySource);
    for (auto &reader : read.readers)
      for (int &t : reader.second)
        t = t >= 0 ? kept[t] : -1;
    // Readers of one strategy each: the cost is the source's alone.
    if (llvm::all_of(read.readers, [&](const auto &reader) {
          return nodes[reader.first].strategies.size() == 1;
        })) {
      SmallVector<bool> needed(read.numTargets, false);
      for (auto &reader : read.readers)
        if (reader.second.front() >= 0)
          needed[reader.second.front()] = true;
      // A source of one strategy too: a constant, kept for the totals.
      Node &payer = source ? nodes[source->node] : nodes[others.front().node];
      for (unsigned i = 0; i < numFrom; ++i)
        for (unsigned t = 0; t < read.numTargets; ++t)
          if (needed[t])
            payer.strategies[i].communicationSeconds +=
                read.seconds[i * read.numTargets + t];
      continue;
    }
    // The same read in every repeat shares one entry.
    std::vector<int64_t> key = {source ? static_cast<int64_t>(source->node)
                                       : -1,
                                source ? source->result : 0};
    for (const Read &r : others)
      llvm::append_values(key, r.node, r.operand, r.tie);
    auto [entry, inserted] = shared.try_emplace(std::move(key), SharedRead());
    if (inserted)
      entry->second = std::move(read);
    else
      for (auto [a, b] : llvm::zip(entry->second.seconds, read.seconds))
        a += b;
  }
}

LogicalResult
Planner::solve(SmallVectorImpl<unsigned> &chosen,
               std::optional<std::pair<unsigned, unsigned>> forbidden,
               bool ignoreBudget, bool quiet) {
  bool budget = budgetBytes > 0 && !ignoreBudget;
  quiet = quiet || forbidden;
  noneBelowCutoff = false;
  // Seconds in microseconds; a tie goes to fewer bytes (one microsecond per
  // gigabyte: far below any modelled difference).
  constexpr double kScale = 1e6, kPerByte = 1e-9;
  // The model is built here and handed to CBC at once: CBC's addRow copies
  // its row store each time (quadratic: most of a GPT layer's search).
  MipBuilder mip;
  int columns = 0;
  double fixedBytes = 0, leastBytes = 0;
  // The objective of a plan that costs `cutoffSeconds`, at most: the
  // programme leaves out the nodes of one strategy, and the bytes'
  // tie-break adds at most each node's largest.
  double cutoff = std::isfinite(cutoffSeconds) && !forbidden
                      ? cutoffSeconds * kScale
                      : std::numeric_limits<double>::infinity();
  for (Node &node : nodes) {
    double least = std::numeric_limits<double>::infinity();
    double most = 0;
    for (const Strategy &s : node.strategies) {
      least = std::min(least, s.bytes);
      most = std::max(most, s.bytes);
    }
    leastBytes += least;
    if (node.strategies.size() == 1) {
      const Strategy &s = node.strategies.front();
      fixedBytes += s.bytes;
      cutoff -= (s.computeSeconds + s.communicationSeconds) * kScale;
      continue;
    }
    cutoff += most * kPerByte;
    node.column = columns;
    for (const Strategy &s : node.strategies) {
      bool allowed =
          !forbidden ||
          forbidden->first != static_cast<unsigned>(&node - &nodes[0]) ||
          forbidden->second != static_cast<unsigned>(&s - &node.strategies[0]);
      mip.addColumn(0, allowed ? 1 : 0,
                    (s.computeSeconds + s.communicationSeconds) * kScale +
                        s.bytes * kPerByte,
                    /*integer=*/true);
      ++columns;
    }
  }
  if (budget && leastBytes > budgetBytes && quiet)
    return failure();
  if (budget && leastBytes > budgetBytes)
    return mlir::emitError(func.getLoc())
           << "auto-plan: no plan fits memory-per-device="
           << static_cast<uint64_t>(options.memoryPerDevice)
           << " bytes: the function's arguments and the activations live at "
              "its peak need at least "
           << static_cast<uint64_t>(leastBytes)
           << " bytes per device (every open argument split as far as the "
              "mesh allows"
           << (fixedBytes > 0 ? ", annotated ones as annotated" : "") << ")";
  for (auto &entry : edges) {
    Edge &edge = entry.second;
    edge.column = columns;
    for (double t : edge.seconds) {
      mip.addColumn(0, 1, t * kScale, /*integer=*/false);
      ++columns;
    }
  }
  // A shared read: per needed sharding, whether any chosen reader needs it
  // (forced when a reader of one strategy does); per (source strategy,
  // needed sharding), its cost, paid when both hold.
  for (auto &entry : shared) {
    SharedRead &read = entry.second;
    SmallVector<bool> forced(read.numTargets, false);
    for (auto &[node, need] : read.readers)
      if (nodes[node].column < 0 && need.front() >= 0)
        forced[need.front()] = true;
    read.targetColumn = columns;
    for (bool f : forced) {
      mip.addColumn(f ? 1 : 0, 1, 0, /*integer=*/false);
      ++columns;
    }
    // A source of one strategy: the cost is on the needed sharding itself;
    // else per (source strategy, needed sharding) where it costs.
    if (!read.from || nodes[*read.from].column < 0) {
      for (unsigned t = 0; t < read.numTargets; ++t)
        mip.objective[read.targetColumn + t] = read.seconds[t] * kScale;
      continue;
    }
    read.pairColumn = columns;
    for (double t : read.seconds) {
      if (t <= 0)
        continue;
      mip.addColumn(0, 1, t * kScale, /*integer=*/false);
      ++columns;
    }
  }
  // Each node takes one strategy.
  SmallVector<int> cols;
  SmallVector<double> coefs;
  for (const Node &node : nodes) {
    if (node.column < 0)
      continue;
    cols.clear();
    for (unsigned i = 0; i < node.strategies.size(); ++i)
      cols.push_back(node.column + i);
    coefs.assign(cols.size(), 1.0);
    mip.addRow(cols.size(), cols.data(), coefs.data(), 'E', 1);
  }
  // An edge's pairs add up to the strategy each end takes: for each
  // strategy of one end, the pairs that hold it (`count` columns from
  // `first`, `stride` apart) sum to its variable.
  auto addMarginal = [&](int first, unsigned count, unsigned stride,
                         int strategy) {
    cols.clear();
    coefs.clear();
    for (unsigned k = 0; k < count; ++k) {
      cols.push_back(first + k * stride);
      coefs.push_back(1);
    }
    cols.push_back(strategy);
    coefs.push_back(-1);
    mip.addRow(cols.size(), cols.data(), coefs.data(), 'E', 0);
  };
  for (auto &entry : edges) {
    const Edge &edge = entry.second;
    unsigned numFrom = nodes[edge.from].strategies.size();
    unsigned numTo = nodes[edge.to].strategies.size();
    for (unsigned i = 0; i < numFrom; ++i)
      addMarginal(edge.column + i * numTo, numTo, 1,
                  nodes[edge.from].column + i);
    for (unsigned j = 0; j < numTo; ++j)
      addMarginal(edge.column + j, numFrom, numTo, nodes[edge.to].column + j);
  }
  for (auto &entry : shared) {
    const SharedRead &read = entry.second;
    // A needed sharding holds when a reader takes a strategy that needs it
    // (its strategies needing it together: they exclude each other).
    for (auto &[node, need] : read.readers) {
      if (nodes[node].column < 0)
        continue;
      for (unsigned t = 0; t < read.numTargets; ++t) {
        cols.assign({read.targetColumn + static_cast<int>(t)});
        coefs.assign({1});
        for (auto [j, target] : llvm::enumerate(need))
          if (target == static_cast<int>(t)) {
            cols.push_back(nodes[node].column + j);
            coefs.push_back(-1);
          }
        if (cols.size() > 1)
          mip.addRow(cols.size(), cols.data(), coefs.data(), 'G', 0);
      }
    }
    // A needed sharding is made from the source's strategy: the pairs that
    // cost, and the strategies that make it for free, cover it; each pair
    // within its strategy (as an edge's marginals).
    if (read.pairColumn < 0)
      continue;
    int fromColumn = nodes[*read.from].column;
    unsigned numFrom = read.seconds.size() / read.numTargets;
    int pair = read.pairColumn;
    SmallVector<int> pairOf(read.seconds.size(), -1);
    for (auto [k, t] : llvm::enumerate(read.seconds))
      if (t > 0)
        pairOf[k] = pair++;
    for (unsigned t = 0; t < read.numTargets; ++t) {
      cols.assign({read.targetColumn + static_cast<int>(t)});
      coefs.assign({-1});
      for (unsigned i = 0; i < numFrom; ++i) {
        int p = pairOf[i * read.numTargets + t];
        cols.push_back(p >= 0 ? p : fromColumn + static_cast<int>(i));
        coefs.push_back(1);
        if (p < 0)
          continue;
        int rowCols[] = {p, fromColumn + static_cast<int>(i)};
        double rowCoefs[] = {1, -1};
        mip.addRow(2, rowCols, rowCoefs, 'L', 0);
      }
      mip.addRow(cols.size(), cols.data(), coefs.data(), 'G', 0);
    }
  }
  // The budget.
  if (budget) {
    cols.clear();
    coefs.clear();
    for (const Node &node : nodes)
      if (node.column >= 0)
        for (auto [i, s] : llvm::enumerate(node.strategies))
          if (s.bytes > 0) {
            cols.push_back(node.column + i);
            coefs.push_back(s.bytes);
          }
    if (!cols.empty())
      mip.addRow(cols.size(), cols.data(), coefs.data(), 'L',
                 budgetBytes - fixedBytes);
  }
  chosen.assign(nodes.size(), 0);
  if (columns == 0)
    return success();
  std::string coinError;
  const CoinSolvers *solvers = CoinSolvers::get(coinError);
  if (!solvers)
    return mlir::emitError(func.getLoc()) << "auto-plan: " << coinError;
  const CoinSolvers &coin = *solvers;
  MipBuilder::Matrix matrix = mip.matrix();
  // A plan whose layers fold into one is a small programme (an MLP layer:
  // 200 columns), which a few relaxations prove: 3 for an MLP layer, 11 for
  // a GPT layer. CBC's setup and root processing (its cut generators and,
  // under a budget, its heuristics) cost several times that. A runner-up,
  // within 1%, is proved by more relaxations as cheaply (a GPT layer's under
  // a budget: up to 150, 40 ms, against CBC's 0.2-0.8 s for the same plans).
  // A large programme (layers that differ) goes to CBC after a few
  // relaxations: each costs about as much as its size.
  unsigned perColumns = forbidden ? 256000 : 64000;
  unsigned maxNodes =
      clPlanRelaxations >= 0
          ? unsigned(clPlanRelaxations)
          : std::clamp<unsigned>(perColumns / columns, 4, forbidden ? 256 : 64);
  std::vector<double> solution;
  // Set (with CBC's own deleter) once CBC is loaded.
  std::unique_ptr<Cbc_Model, void (*)(Cbc_Model *)> model(nullptr, nullptr);
  const double *x = nullptr;
  MipBuilder::Outcome outcome =
      maxNodes ? mip.branchAndBound(coin, matrix, forbidden ? 0.01 : 0,
                                    maxNodes, cutoff, solution)
               : MipBuilder::Outcome::GaveUp;
  if (outcome == MipBuilder::Outcome::NoneBelowCutoff) {
    noneBelowCutoff = true;
    return failure();
  }
  if (outcome == MipBuilder::Outcome::Solved) {
    LLVM_DEBUG(llvm::dbgs() << "auto-plan: " << nodes.size() << " nodes, "
                            << columns << " columns: solved by Clp\n");
    x = solution.data();
  } else {
    if (!CoinSolvers::get(coinError, /*cbc=*/true))
      return mlir::emitError(func.getLoc()) << "auto-plan: " << coinError;
    model = std::unique_ptr<Cbc_Model, void (*)(Cbc_Model *)>(
        coin.Cbc_newModel(), coin.Cbc_deleteModel);
    coin.Cbc_setLogLevel(model.get(), 0);
    mip.load(coin, model.get(), matrix);
    coin.Cbc_setAllowableGap(model.get(), 0);
    // Without a budget CBC's primal heuristics and its preprocessing are most
    // of its time while rarely changing the bound: off, the same plans come
    // sooner (3-4x on a 12-layer GPT). The cut generators stay: a large plan
    // whose layers do not fold (64 layers that differ) branches without end
    // without them (over 120 s against 0.4 s). With a budget the heuristics
    // find the knapsack's good plans early and prove them (fewer
    // branch-and-bound nodes).
    if (!budget) {
      coin.Cbc_setParameter(model.get(), "heuristicsOnOff", "off");
      coin.Cbc_setParameter(model.get(), "preprocess", "off");
    }
    // The plan is exact; a runner-up, which only explains it, is within 1%.
    coin.Cbc_setAllowableFractionGap(model.get(), forbidden ? 0.01 : 0);
    if (std::isfinite(cutoff))
      coin.Cbc_setCutoff(model.get(), cutoff);
    coin.Cbc_solve(model.get());
    LLVM_DEBUG(llvm::dbgs()
               << "auto-plan: " << nodes.size() << " nodes, " << edges.size()
               << " edges, " << shared.size() << " shared reads, " << columns
               << " columns, " << coin.Cbc_getNumRows(model.get()) << " rows; "
               << coin.Cbc_getNodeCount(model.get())
               << " branch-and-bound nodes\n");
    if (std::isfinite(cutoff) && coin.Cbc_isProvenInfeasible(model.get())) {
      noneBelowCutoff = true;
      return failure();
    }
    if (!coin.Cbc_isProvenOptimal(model.get()) && quiet)
      return failure();
    if (!coin.Cbc_isProvenOptimal(model.get()))
      return mlir::emitError(func.getLoc())
             << "auto-plan: the solver found no optimal plan (CBC status "
             << coin.Cbc_status(model.get()) << ", secondary "
             << coin.Cbc_secondaryStatus(model.get()) << ")";
    x = coin.Cbc_getColSolution(model.get());
  }
  for (auto [n, node] : llvm::enumerate(nodes)) {
    if (node.column < 0)
      continue;
    unsigned best = 0;
    for (unsigned i = 1; i < node.strategies.size(); ++i)
      if (x[node.column + i] > x[node.column + best])
        best = i;
    chosen[n] = best;
  }
  return success();
}

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
  if (failed(solve(chosen))) {
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

double Planner::peakBytesOf(ArrayRef<unsigned> chosen) const {
  FunctionOpInterface func = this->func;
  Block &body = func.getFunctionBody().front();
  const LiveRanges &live = givenStructure->live;
  DenseMap<Operation *, unsigned> position;
  position.reserve(live.numOps);
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = i;
  // What a value is made as in the plan; a value without a node (a loop's
  // block argument, a data-less value made where used) is not counted.
  auto madeOf = [&](Value v) -> std::optional<TensorSharding> {
    auto it = sources.find(v);
    if (!isTensor(v) || it == sources.end())
      return std::nullopt;
    const Strategy &s =
        nodes[it->second.node].strategies[chosen[it->second.node]];
    if (it->second.result < s.results.size() && s.results[it->second.result])
      return s.results[it->second.result];
    return TensorSharding::replicated(
        cast<RankedTensorType>(v.getType()).getRank());
  };
  auto bytesOf = [&](Value v, const TensorSharding &s) {
    auto type = cast<RankedTensorType>(v.getType());
    return type.hasStaticShape() ? localBytes(type, s, axes) : 0.0;
  };

  // Every read: as made (the value's own storage serves it), or resharded
  // (one reshard per value and sharding, made after the value and held to
  // its last reader).
  struct Temporary {
    TensorSharding sharding;
    unsigned last;
  };
  DenseMap<Value, SmallVector<Temporary, 1>> temporaries;
  DenseMap<Value, unsigned> reshardedReads;
  Operation *ret = body.getTerminator();
  for (auto [op, n] : members) {
    Operation *top = body.findAncestorOpInBlock(*op);
    if (!top)
      continue;
    unsigned at = position.lookup(top);
    const Strategy &s = nodes[n].strategies[chosen[n]];
    for (auto [k, operand] : llvm::enumerate(op->getOperands())) {
      if (!isTensor(operand) || isRematerializable(operand))
        continue;
      std::optional<TensorSharding> made = madeOf(operand);
      int tie = op == ret ? tiedArgument(k) : -1;
      std::optional<TensorSharding> needed;
      if (tie >= 0)
        needed = madeOf(func.getArgument(tie));
      else if (k < s.operands.size())
        needed = s.operands[k];
      if (!made || !needed || *needed == *made)
        continue;
      // Made pending over more axes, a value is itself on one device and
      // zeros (a fill, made where used) on the others: a read as made.
      if (needed->dims == made->dims &&
          llvm::all_of(made->partial, [&](StringRef axis) {
            return llvm::is_contained(needed->partial, axis);
          }))
        continue;
      ++reshardedReads[operand];
      SmallVector<Temporary, 1> &list = temporaries[operand];
      auto it = llvm::find_if(
          list, [&](const Temporary &t) { return t.sharding == *needed; });
      if (it == list.end())
        list.push_back({*needed, at});
      else
        it->last = std::max(it->last, at);
    }
  }

  double argumentBytes = 0;
  SmallVector<double> delta(live.numOps + 1, 0);
  auto hold = [&](unsigned from, unsigned to, double bytes) {
    delta[from] += bytes;
    delta[std::min<unsigned>(to, live.numOps - 1) + 1] -= bytes;
  };
  for (BlockArgument arg : func.getArguments())
    if (std::optional<TensorSharding> made = madeOf(arg))
      argumentBytes += bytesOf(arg, *made);
  for (const LiveRange &range : live.ranges) {
    std::optional<TensorSharding> made = madeOf(range.value);
    if (!made)
      continue;
    // A value every reader takes resharded is freed once resharded.
    auto resharded = reshardedReads.find(range.value);
    bool allResharded =
        resharded != reshardedReads.end() &&
        resharded->second ==
            static_cast<unsigned>(
                std::distance(range.value.use_begin(), range.value.use_end()));
    hold(range.from, allResharded ? range.from : range.to,
         bytesOf(range.value, *made));
  }
  for (auto &[value, list] : temporaries) {
    unsigned from = 0;
    if (Operation *def = value.getDefiningOp())
      if (Operation *top = body.findAncestorOpInBlock(*def))
        from = position.lookup(top);
    for (const Temporary &t : list)
      hold(from, std::max(from, t.last), bytesOf(value, t.sharding));
  }
  double now = 0, peak = 0;
  for (double d : delta)
    peak = std::max(peak, now += d);
  return argumentBytes + peak;
}

void Planner::addPeakActivations() {
  LivePeak peak = findLivePeak(givenStructure->live, [&](Value v) -> double {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.hasStaticShape() || !sources.count(v))
      return 0;
    return localBytes(type, TensorSharding::replicated(type.getRank()), axes);
  });
  for (Value v : peak.values) {
    Source source = sources.lookup(v);
    auto type = cast<RankedTensorType>(v.getType());
    for (Strategy &s : nodes[source.node].strategies) {
      const std::optional<TensorSharding> &made =
          source.result < s.results.size() ? s.results[source.result]
                                           : std::nullopt;
      TensorSharding whole = TensorSharding::replicated(type.getRank());
      double bytes = localBytes(type, made ? *made : whole, axes);
      s.bytes += bytes;
      s.activationBytes += bytes;
    }
  }
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

} // namespace

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
