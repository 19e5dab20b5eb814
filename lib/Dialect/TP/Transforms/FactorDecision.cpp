//===- FactorDecision.cpp - Choosing how an op's factors split ------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/FactorDecision.h"

#include "tp/Dialect/TP/Transforms/CostModel.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::tp;

int FactorDecision::firstSource() const {
  for (auto [axesOfFactor, source] : llvm::zip(axes, sources))
    if (!axesOfFactor.empty())
      return source;
  return -1;
}

FactorDecider::~FactorDecider() = default;

//===----------------------------------------------------------------------===//
// CommunicationCostDecider
//===----------------------------------------------------------------------===//

double CommunicationCostDecider::cost(const ShardingRule &rule,
                                      ArrayRef<FactorTensor> tensors,
                                      const MeshAxes &mesh, unsigned f,
                                      ArrayRef<StringRef> axes) const {
  double total = 0;
  // Gathering the axes a tensor loses (slicing is free).
  for (const FactorTensor &t : tensors) {
    if (!t.sharding)
      continue;
    ArrayRef<StringRef> have = t.projection.factors[f];
    size_t common = 0;
    while (common < have.size() && common < axes.size() &&
           have[common] == axes[common])
      ++common;
    ArrayRef<StringRef> lost = have.drop_front(common);
    if (lost.empty())
      continue;
    int64_t n = mesh.groupSize(lost);
    total += collectiveBytes(CollectiveKind::AllGather, n,
                             localBytes(t.type, *t.sharding, mesh) * n);
  }
  // Repeating work that is not split.
  double iterationPoints = 1;
  for (unsigned g = 0; g < rule.getNumFactors(); ++g)
    if (!ShapedType::isDynamic(rule.getFactorSize(g)))
      iterationPoints *= static_cast<double>(rule.getFactorSize(g));
  total += kBytesPerIterationPoint * iterationPoints /
           static_cast<double>(mesh.groupSize(axes));
  // Reducing the partial results of a split reduction.
  if (rule.getFactorKind(f) == FactorKind::Reduction && !axes.empty())
    for (const FactorTensor &t : tensors)
      if (t.isResult)
        total += collectiveBytes(
            CollectiveKind::AllReduce, mesh.groupSize(axes),
            localBytes(t.type,
                       t.sharding ? *t.sharding : TensorSharding::replicated(0),
                       mesh));
  return total;
}

FactorDecision CommunicationCostDecider::decide(const ShardingRule &rule,
                                                ArrayRef<FactorTensor> tensors,
                                                const MeshAxes &mesh) const {
  unsigned numFactors = rule.getNumFactors();
  struct Candidate {
    ArrayRef<StringRef> axes;
    int source = -1;
  };
  // Proposals for f: every distinct non-empty list a tensor puts on it
  // (without axes already `used`), and nothing.
  auto proposals = [&](unsigned f, const llvm::StringSet<> &used) {
    SmallVector<Candidate, 4> candidates = {{}};
    for (const FactorTensor &t : tensors) {
      if (!t.sharding || t.projection.factors[f].empty())
        continue;
      ArrayRef<StringRef> axes = t.projection.factors[f];
      if (llvm::any_of(axes, [&](StringRef a) { return used.contains(a); }))
        continue;
      if (llvm::none_of(candidates,
                        [&](const Candidate &c) { return c.axes == axes; }))
        candidates.push_back({axes, t.index});
    }
    return candidates;
  };
  auto pick = [&](unsigned f, ArrayRef<Candidate> candidates,
                  double &bestCost) {
    const Candidate *best = &candidates.front();
    bestCost = cost(rule, tensors, mesh, f, best->axes);
    for (const Candidate &c : candidates.drop_front()) {
      double c0 = cost(rule, tensors, mesh, f, c.axes);
      // Ties go to more parallelism.
      if (c0 < bestCost - 1e-9 ||
          (c0 <= bestCost + 1e-9 && c.axes.size() > best->axes.size())) {
        best = &c;
        bestCost = c0;
      }
    }
    return *best;
  };

  // A mesh axis can split one factor only: factors that would lose most by
  // not getting their best proposal choose first.
  SmallVector<unsigned> order;
  SmallVector<double> regret(numFactors, 0);
  llvm::StringSet<> none;
  for (unsigned f = 0; f < numFactors; ++f) {
    if (rule.getFactorKind(f) == FactorKind::NeedReplication)
      continue;
    SmallVector<Candidate, 4> candidates = proposals(f, none);
    double bestCost;
    pick(f, candidates, bestCost);
    regret[f] = cost(rule, tensors, mesh, f, {}) - bestCost;
    order.push_back(f);
  }
  llvm::stable_sort(
      order, [&](unsigned a, unsigned b) { return regret[a] > regret[b]; });

  FactorDecision decision(numFactors);
  llvm::StringSet<> used;
  for (unsigned f : order) {
    SmallVector<Candidate, 4> candidates = proposals(f, used);
    double bestCost;
    const Candidate &chosen = pick(f, candidates, bestCost);
    decision.axes[f].assign(chosen.axes.begin(), chosen.axes.end());
    decision.sources[f] = chosen.source;
    for (StringRef a : chosen.axes)
      used.insert(a);
  }
  return decision;
}

//===----------------------------------------------------------------------===//
// OpDecisions
//===----------------------------------------------------------------------===//

static bool isTensor(Value v) { return isa<RankedTensorType>(v.getType()); }

const OpOutcome &OpDecisions::decide(Operation *op, const ShardingRule &rule,
                                     ShardingLookup shardingOf) {
  if (plan) {
    auto it = plan->find(op);
    if (it != plan->end()) {
      const OpOutcome *&outcome = planned[op];
      if (!outcome) {
        outcomes.push_back(makeOutcome(op, rule, it->second));
        outcome = &outcomes.back();
      }
      return *outcome;
    }
  }
  // A decision depends on the rule (which fixes the types) and on what each
  // tensor has now; only the origins of the chosen axes are per op.
  static const char kMarkers[3] = {};
  const void *kNoTensor = &kMarkers[0], *kRematerializable = &kMarkers[1],
             *kUnknown = &kMarkers[2];
  SmallVector<const void *, 32> key;
  key.push_back(&rule);
  auto addKey = [&](Value v, bool isResult) {
    if (!isTensor(v)) {
      key.push_back(kNoTensor);
      return;
    }
    if (!isResult && isRematerializable(v)) {
      key.push_back(kRematerializable);
      return;
    }
    const TensorSharding *s = shardingOf(v, isResult);
    if (!s) {
      key.push_back(kUnknown);
      return;
    }
    s->appendKey(key);
  };
  for (Value v : op->getOperands())
    addKey(v, false);
  for (Value v : op->getResults())
    addKey(v, true);
  auto it = index.find(ArrayRef<const void *>(key));
  if (it != index.end())
    return *it->second;
  outcomes.push_back(makeOutcome(op, rule, decideNew(op, rule, shardingOf)));
  const void **stored = keys.Allocate<const void *>(key.size());
  llvm::copy(key, stored);
  index[ArrayRef<const void *>(stored, key.size())] = &outcomes.back();
  return outcomes.back();
}

FactorDecision OpDecisions::decideNew(Operation *op, const ShardingRule &rule,
                                      ShardingLookup shardingOf) const {
  // Every tensor of the op with its factors and current sharding.
  SmallVector<FactorTensor, 4> tensors;
  bool anySplit = false;
  auto add = [&](int index, Value v, const ShardingRule::TensorFactors &tf,
                 bool isResult) {
    if (!isTensor(v) || (!isResult && isRematerializable(v)))
      return;
    FactorTensor t;
    t.index = index;
    t.type = cast<RankedTensorType>(v.getType());
    t.factors = &tf;
    t.sharding = shardingOf(v, isResult);
    t.isResult = isResult;
    anySplit |= t.sharding && t.sharding->isSplit();
    tensors.push_back(std::move(t));
  };
  int index = 0;
  for (auto [operand, tf] : llvm::zip(op->getOperands(), rule.getOperands()))
    add(index++, operand, tf, false);
  index = op->getNumOperands();
  for (auto [result, tf] : llvm::zip(op->getResults(), rule.getResults()))
    add(index++, result, tf, true);
  // Nothing proposes a split: every factor stays whole (the common case in
  // replicated regions), without projecting.
  if (!anySplit)
    return FactorDecision(rule.getNumFactors());
  for (FactorTensor &t : tensors)
    if (t.sharding)
      t.projection = projectSharding(*t.sharding, *t.factors, rule, mesh);

  FactorDecision decision = decider.decide(rule, tensors, mesh);
  SmallVector<const ShardingRule::TensorFactors *, 4> factors;
  for (const FactorTensor &t : tensors)
    factors.push_back(t.factors);
  trimToBlockSplits(factors, rule, decision.axes, mesh);
  for (auto [axes, source] : llvm::zip(decision.axes, decision.sources))
    if (axes.empty())
      source = -1;
  return decision;
}

OpOutcome OpDecisions::makeOutcome(Operation *op, const ShardingRule &rule,
                                   FactorDecision decision) const {
  OpOutcome outcome;
  outcome.decision = std::move(decision);
  auto implied = [&](Value v, const ShardingRule::TensorFactors &tf,
                     bool isResult) -> std::optional<TensorSharding> {
    if (!isTensor(v))
      return std::nullopt;
    FailureOr<TensorSharding> s =
        composeSharding(tf, rule, outcome.decision.axes, isResult, mesh);
    if (failed(s))
      return std::nullopt;
    return std::move(*s);
  };
  for (auto [operand, tf] : llvm::zip(op->getOperands(), rule.getOperands()))
    outcome.operands.push_back(implied(operand, tf, false));
  for (auto [result, tf] : llvm::zip(op->getResults(), rule.getResults()))
    outcome.results.push_back(implied(result, tf, true));
  outcome.originSource = outcome.decision.firstSource();
  return outcome;
}
