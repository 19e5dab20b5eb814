//===- FactorDecision.h - Choosing how an op's factors split ----*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// At every op, propagation projects what its tensors have onto the op's
// factors (FactorProjection.h) and a decider chooses, per factor, the mesh
// axes that split it. The decider is an interface: the one --tp-propagate
// uses weighs communication against redundant work (CostModel.h); a planner
// with another objective is another decider, not a new propagation.
//
// OpDecisions wraps a decider for the passes: it memoizes the outcome per
// rule and current shardings (the layers of a stack repeat the same
// decisions), makes the decision expressible as block splits of every
// tensor, and composes what it implies for each operand and result.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_TRANSFORMS_FACTORDECISION_H
#define TP_DIALECT_TP_TRANSFORMS_FACTORDECISION_H

#include "tp/Dialect/TP/Transforms/FactorProjection.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Allocator.h"
#include <deque>
#include <optional>

namespace mlir::tp {

/// One tensor operand or result of an op, as a decider sees it.
struct FactorTensor {
  /// The operand number, or the number of operands plus the result number.
  int index = -1;
  RankedTensorType type;
  const ShardingRule::TensorFactors *factors = nullptr;
  /// What the tensor has now; null when nothing is known yet.
  const TensorSharding *sharding = nullptr;
  /// `sharding` projected onto the rule's factors (empty when unknown).
  FactorProjection projection;
  bool isResult = false;
};

/// Axes per factor of a rule, and which tensor proposed each.
struct FactorDecision {
  SmallVector<AxisList> axes;
  /// Per factor, the `FactorTensor::index` of the tensor whose projection
  /// gave the axes; -1 when none did (the factor stays whole).
  SmallVector<int> sources;

  explicit FactorDecision(unsigned numFactors = 0)
      : axes(numFactors), sources(numFactors, -1) {}
  /// The tensor that proposed the first split factor, or -1.
  int firstSource() const;
};

/// Chooses how an op's factors are split.
class FactorDecider {
public:
  virtual ~FactorDecider();
  /// Axes for every factor of `rule`, given the op's tensors. A mesh axis
  /// splits at most one factor; NeedReplication factors stay whole. The
  /// caller trims the result to block splits (trimToBlockSplits).
  virtual FactorDecision decide(const ShardingRule &rule,
                                ArrayRef<FactorTensor> tensors,
                                const MeshAxes &mesh) const = 0;
};

/// The decider of --tp-propagate. Each factor gets, among the axis lists the
/// tensors propose for it and none, the one of least cost: the bytes of
/// gathering what each tensor loses (slicing is free), the op's iteration
/// points not split (redundant work, kBytesPerIterationPoint each), and for
/// a reduction factor, all-reducing the partial results. Ties go to more
/// parallelism. Factors that would lose most by not getting their best
/// proposal choose first (a column-split weight keeps its axis; a cheaply
/// gathered activation gives it up).
class CommunicationCostDecider : public FactorDecider {
public:
  FactorDecision decide(const ShardingRule &rule,
                        ArrayRef<FactorTensor> tensors,
                        const MeshAxes &mesh) const override;
  /// The cost of splitting factor `f` over `axes` (see the class comment).
  double cost(const ShardingRule &rule, ArrayRef<FactorTensor> tensors,
              const MeshAxes &mesh, unsigned f, ArrayRef<StringRef> axes) const;
};

/// A planned op's pending sums: the operands it reads unreduced (each a term
/// of a sum over `axes`, which its results stay pending over). An op the
/// plan holds without one reduces every pending operand first.
struct PendingPass {
  SmallVector<bool> operands;
  AxisList axes;
};

/// Per op of a function: how its factors split, and the pending sums it
/// carries on (an op absent from `passes` reduces every pending operand) —
/// what a plan fixes, or what reshard insertion chose.
struct OpChoices {
  DenseMap<Operation *, FactorDecision> decisions;
  DenseMap<Operation *, PendingPass> passes;
};

/// A decision and what it implies for an op's tensors.
struct OpOutcome {
  FactorDecision decision;
  /// Per operand and result, its sharding under the decision; none for a
  /// non-tensor.
  SmallVector<std::optional<TensorSharding>> operands, results;
  /// The operand (or number of operands + result) that proposed the first
  /// split axes, or -1.
  int originSource = -1;
};

/// Decisions of the ops of one function, memoized.
class OpDecisions {
public:
  /// What a tensor of the op being decided has now: null when unknown.
  using ShardingLookup =
      function_ref<const TensorSharding *(Value, bool isResult)>;

  OpDecisions(const FactorDecider &decider, const MeshAxes &mesh)
      : decider(decider), mesh(mesh) {}

  /// A plan (auto-plan): an op it holds takes its planned decision, whatever
  /// its tensors have.
  void setPlan(const DenseMap<Operation *, FactorDecision> *p) { plan = p; }

  /// The outcome at `op` (whose rule is `rule`) given what its tensors have.
  /// Operands that are rematerializable propose nothing. The reference stays
  /// valid as long as this object.
  const OpOutcome &decide(Operation *op, const ShardingRule &rule,
                          ShardingLookup shardingOf);
  /// What `decision` (already expressible) implies for `op`'s tensors.
  OpOutcome makeOutcome(Operation *op, const ShardingRule &rule,
                        FactorDecision decision) const;

private:
  FactorDecision decideNew(Operation *op, const ShardingRule &rule,
                           ShardingLookup shardingOf) const;

  const FactorDecider &decider;
  const MeshAxes &mesh;
  const DenseMap<Operation *, FactorDecision> *plan = nullptr;
  DenseMap<Operation *, const OpOutcome *> planned;
  DenseMap<ArrayRef<const void *>, const OpOutcome *> index;
  std::deque<OpOutcome> outcomes;
  llvm::BumpPtrAllocator keys;
};

} // namespace mlir::tp

#endif // TP_DIALECT_TP_TRANSFORMS_FACTORDECISION_H
