//===- PlanMemory.cpp - Bytes at the peak ---------------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The planner's memory (Planner.h): the activations live at the function's
// peak charged to the strategies that make them (the programme's budget
// terms), and the exact peak of a chosen plan (FunctionPlan::peakBytes).
//
//===----------------------------------------------------------------------===//

#include "Planner.h"

using namespace mlir;
using namespace mlir::tp;
using namespace mlir::tp::planner;

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
