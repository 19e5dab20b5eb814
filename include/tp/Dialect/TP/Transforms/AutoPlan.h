//===- AutoPlan.h - Choosing every sharding of a function -------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The planner behind `--tp-propagate="auto-plan"`: instead of extending the
// shardings that constraints give, one op at a time, it chooses the sharding
// of every open function argument and the factor split of every op at once,
// minimising a modelled step time under a per-device memory budget.
//
// The model (CostModel.h's MachineModel): an op's strategy is a split of its
// factors (every mesh axis on one factor or on none, block splits only); it
// costs its local GEMM flops at the device's GEMM rate, or, for an op without
// a contraction, its local bytes at the memory bandwidth. Where a value made
// in one sharding is read in another, the reshard's collectives cost latency
// + bus bytes / bandwidth each. An argument's strategy is a sharding; its
// local bytes count against the budget. Constraints (annotated arguments,
// results, tp.annotate) are strategies of their own, fixed; open results
// are returned replicated, as a forward pass hands its output to the caller.
//
// The search is exact: an integer programme (one binary per strategy, one
// continuous variable per pair of strategies joined by a value, the pairs'
// sums tied to both ends, as Alpa's intra-operator pass writes it), solved
// by COIN-OR CBC. Ties go to the plan holding fewer bytes.
//
// Repeated layers (RepeatedLayers.h) are planned once: every later repeat's
// ops and weights join the first repeat's nodes, whose compute and bytes
// count once per member and whose edges once per real edge (a repeat's
// output read by the next repeat becomes an edge of the first repeat to
// itself). The plan is the best of those that give every repeat the same
// plan, and the programme is one layer's size at any depth.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_TRANSFORMS_AUTOPLAN_H
#define TP_DIALECT_TP_TRANSFORMS_AUTOPLAN_H

#include "tp/Dialect/TP/Transforms/CostModel.h"
#include "tp/Dialect/TP/Transforms/FactorDecision.h"
#include "tp/Dialect/TP/Transforms/RepeatedLayers.h"
#include "tp/Dialect/TP/Transforms/Structure.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"

#include <memory>
#include <vector>

namespace mlir::tp {

class MeshOp;
class ShardingRuleCache;

struct AutoPlanOptions {
  const MachineModel *machine = nullptr;
  /// Bytes one device may hold (the function's arguments and the
  /// intermediates live at its peak); 0: no budget.
  double memoryPerDevice = 0;
  /// Also find each weight's runner-up (one more solve per weight), for
  /// the plan record and --tp-report.
  bool explain = true;
};

/// What constraints fix in a function, as propagation seeds it.
struct PlanConstraints {
  /// Per function argument: its sharding when a constraint fixes it.
  SmallVector<std::optional<TensorSharding>> arguments;
  /// Per function result: its constraint; open results are replicated.
  SmallVector<std::optional<TensorSharding>> results;
  /// Per function result: the argument whose sharding it takes (a
  /// parameter's gradient is laid out as the parameter), or -1.
  SmallVector<int> resultTies;
};

/// A weight's sharding in the plan, and the best plan that splits it
/// otherwise (the runner-up), for the report.
struct WeightChoice {
  unsigned argument = 0;
  /// The repeats of its layer it stands for (1: no repeat).
  unsigned layers = 1;
  TensorSharding chosen;
  /// None when the weight has no other sharding.
  std::optional<TensorSharding> runnerUp;
  double runnerUpSeconds = 0, runnerUpBytes = 0;
};

/// The chosen plan of one function.
struct FunctionPlan {
  /// Per function argument (none for a non-tensor).
  SmallVector<std::optional<TensorSharding>> arguments;
  /// Per op with a sharding rule: how its factors split; per op that
  /// carries a pending sum on (linear in it), which operands are read
  /// unreduced, and over which axes.
  OpChoices ops;
  /// Modelled seconds of one step on one device: compute and communication.
  double computeSeconds = 0;
  double communicationSeconds = 0;
  /// Bytes of the arguments on one device, and of the activations live at
  /// the function's peak (program order).
  double argumentBytes = 0;
  double activationBytes = 0;
  /// Bytes one device holds at the plan's peak in program order: the
  /// arguments, the values the ops make at their planned sizes, and every
  /// reshard's result from the value it reshards to its last reader (as
  /// reshard insertion places it: a weight gathered whole for a forward and
  /// a backward use is held between them).
  double peakBytes = 0;
  /// Another plan's modelled step and peak.
  struct Costed {
    double computeSeconds = 0, communicationSeconds = 0, peakBytes = 0;
    double seconds() const { return computeSeconds + communicationSeconds; }
  };
  /// The incumbent plan planFunction was given, in the same model, when the
  /// model can express it (every op's choice one of its strategies, the
  /// same in every repeat of a layer).
  std::optional<Costed> incumbent;
  /// The fastest plan, where it held more than both the incumbent and the
  /// budget and this plan was found within the incumbent's bytes instead.
  std::optional<Costed> fastest;
  /// No plan faster than the incumbent by more than kSearchAdoptionMargin
  /// exists, within the budget or over it (the search stops at the proof;
  /// the plan is the incumbent's), or no plan at all beside an incumbent the
  /// model cannot express: nothing to decide.
  bool noneFaster = false;
  /// Per weight (open argument of rank 2 or more; one per repeated layer),
  /// its choice and runner-up.
  std::vector<WeightChoice> weights;
};

/// How much faster than the fixed point's plan the search's must be
/// modelled to replace it on the annotated path, as a fraction of the fixed
/// point's step: more than the model's error against measured steps
/// (`bench/bench_plan.py`: 8-28% on the CPU backend). The one place the
/// margin is set.
constexpr double kSearchAdoptionMargin = 0.30;

/// The rule that decided between the annotated path's search and the fixed
/// point's plan, in the order they are tried.
enum class SearchRule {
  /// Kept: the model cannot express the fixed point's plan.
  Inexpressible,
  /// Kept: the search's plan holds more bytes per device at its peak than
  /// the fixed point's (the user's split is their memory budget), and no
  /// `memory-per-device` allows it.
  Memory,
  /// Kept: modelled faster by no more than kSearchAdoptionMargin.
  Margin,
  /// Adopted: faster by more than the margin, within the memory rule.
  Adopted,
};
StringRef stringifySearchRule(SearchRule rule);
std::optional<SearchRule> symbolizeSearchRule(StringRef text);

/// Which rule decides between `plan` (planned with an incumbent) and its
/// incumbent; `memoryPerDevice` (0: none) is the budget the user gave.
SearchRule judgeSearch(const FunctionPlan &plan, double memoryPerDevice);

/// What a plan of a function takes from the function's structure alone:
/// the repeated layers it folds onto their first repeat (LayerFinder's
/// search over the body as it is, discardable attributes included,
/// tp.origins aside, each repeat checked against the first) and the live
/// ranges its memory model weighs. Finding them only reads the IR: a caller
/// may find them on a thread of its own while it reads the same function,
/// as long as nothing changes the function until planFunction takes them.
struct PlanStructure {
  std::unique_ptr<LayerFinder> finder;
  LayerRepeats found;
  RepeatExternals checked;
  LiveRanges live;
};
PlanStructure findPlanStructure(FunctionOpInterface func);

/// Plans `func` over `mesh`. Fails with a diagnostic on the function when no
/// plan fits the budget (naming the least any plan needs) or the solver
/// fails. With `incumbent` (the choices of the fixed point), also costs that
/// plan in the same model (`FunctionPlan::incumbent`). With `rules`,
/// the ops' rules come from that cache (shared with propagation). With
/// `structure` (findPlanStructure of `func` as it is now), that is used;
/// otherwise planFunction finds it.
FailureOr<FunctionPlan> planFunction(FunctionOpInterface func, MeshOp mesh,
                                     const PlanConstraints &constraints,
                                     const AutoPlanOptions &options,
                                     const OpChoices *incumbent = nullptr,
                                     ShardingRuleCache *rules = nullptr,
                                     PlanStructure *structure = nullptr);

/// Parses a byte count: a number with an optional unit (B, KB, MB, GB, TB,
/// KiB, MiB, GiB, TiB), e.g. "80GB", "1.5GiB", "4096".
std::optional<double> parseByteSize(StringRef text);

} // namespace mlir::tp

#endif // TP_DIALECT_TP_TRANSFORMS_AUTOPLAN_H
