//===- Planner.h - The automatic planner's programme -----------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The planner behind planFunction (AutoPlan.h): one class, its work in a
// file per job:
//   PlanRepeats.cpp     repeated layers folded onto their first repeat;
//   PlanStrategies.cpp  each node's strategies (arguments, ruled ops,
//                       pending-sum variants, constraints);
//   PlanEdges.cpp       the reshard seconds between strategies (edges and
//                       shared reads);
//   PlanMemory.cpp      activations at the peak and a plan's exact peak;
//   PlanProgramme.cpp   the integer programme: built, bounded, solved;
//   AutoPlan.cpp        the order of it all and the solution read back.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_TRANSFORMS_PLANNER_H
#define TP_DIALECT_TP_TRANSFORMS_PLANNER_H

#include "tp/Dialect/TP/Transforms/AutoPlan.h"

#include "tp/Dialect/TP/IR/TPInterfaces.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Dialect/TP/Transforms/RepeatedLayers.h"
#include "tp/Dialect/TP/Transforms/Resharding.h"
#include "tp/Dialect/TP/Transforms/Structure.h"

#include "llvm/ADT/MapVector.h"

#include <map>

namespace mlir::tp::planner {

inline bool isTensor(Value v) { return isa<RankedTensorType>(v.getType()); }

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

  // The pieces of strategies and edge costs (PlanStrategies.cpp,
  // PlanEdges.cpp), public for their unit tests.
  /// Calls `leaf` for every way of putting each mesh axis that splits (in
  /// mesh order) on one of `numSlots` slots or on none, where slot i only
  /// takes axes whose group size divides `sizeOf(i)` (0: it takes none).
  void forEachAssignment(unsigned numSlots,
                         function_ref<int64_t(unsigned)> sizeOf,
                         function_ref<void(ArrayRef<AxisList>)> leaf) const;
  /// Every sharding of `type` that splits dimensions by mesh axes (in mesh
  /// order) into equal blocks.
  SmallVector<TensorSharding> shardingsOf(RankedTensorType type) const;
  /// The modelled seconds of resharding a `type` value from `from` to `to`
  /// (the steps of planReshard, each by the machine model).
  double reshardSeconds(RankedTensorType type, const TensorSharding &from,
                        const TensorSharding &to);

private:
  /// Maps the ops (and weights) of every repeat of the body's repeated
  /// layers but the first to the first's.
  void foldRepeats();
  void mapNested(Operation *rep, Operation *other);
  void addArgument(BlockArgument arg);
  void addOp(Operation *op);
  void addRuledOp(Operation *op, const ShardingRule &rule);
  /// Makes `node` op `op`'s: the source of its results, and a member.
  void addOpNode(Operation *op, Node node);
  /// Adds to `node` the variants of `base` that carry pending sums on: per
  /// set of operands `op` is linear in, and per set of mesh axes `base`
  /// leaves free, those operands read pending over the axes and the results
  /// made pending over them (a sum reduced later, after this op, or a
  /// replicated addend turned into one term for free).
  void addPendingVariants(Operation *op, Node &node, const Strategy &base);
  double computeSeconds(Operation *op, const ShardingRule &rule,
                        const Strategy &s) const;
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

} // namespace mlir::tp::planner

#endif // TP_DIALECT_TP_TRANSFORMS_PLANNER_H
