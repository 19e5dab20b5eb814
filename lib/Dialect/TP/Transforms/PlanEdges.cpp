//===- PlanEdges.cpp - Reshard seconds between strategies -----------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Step 2 of the planner (Planner.h): every tensor read from another node,
// with the seconds of resharding per pair of strategies (cached per type
// and pair of shardings); a value read by several readers pays each
// sharding they need once (shared reads).
//
//===----------------------------------------------------------------------===//

#include "Planner.h"

using namespace mlir;
using namespace mlir::tp;
using namespace mlir::tp::planner;

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
  // Walk the steps, keeping the sharding between them for the bytes: each
  // collective's formula names its tensor (Collectives.h) from the bytes
  // before and after it.
  TensorSharding cur = from;
  double seconds = 0;
  for (const ReshardStep &step : planReshard(fromAttr, toAttr)) {
    int64_t n = axes.groupSize(step.axes);
    auto drop = [&](AxisList &list) {
      for (StringRef a : step.axes)
        llvm::erase(list, a);
    };
    double before = localBytes(type, cur, axes);
    std::optional<CollectiveKind> kind;
    switch (step.kind) {
    case ReshardStep::Kind::AllReduce:
      kind = CollectiveKind::AllReduce;
      drop(cur.partial);
      break;
    case ReshardStep::Kind::ReduceScatter:
      kind = CollectiveKind::ReduceScatter;
      drop(cur.partial);
      cur.dims[step.dim].append(step.axes.begin(), step.axes.end());
      break;
    case ReshardStep::Kind::AllGather:
      kind = CollectiveKind::AllGather;
      drop(cur.dims[step.dim]);
      break;
    case ReshardStep::Kind::AllToAll:
      kind = CollectiveKind::AllToAll;
      drop(cur.dims[step.concatDim]);
      cur.dims[step.dim].append(step.axes.begin(), step.axes.end());
      break;
    case ReshardStep::Kind::AllSlice:
      cur.dims[step.dim].append(step.axes.begin(), step.axes.end());
      break;
    case ReshardStep::Kind::ZeroOthers:
      break;
    }
    if (kind)
      seconds += options.machine->collectiveSeconds(
          *kind, n,
          collectiveFormulaTensorBytes(*kind, n, before,
                                       localBytes(type, cur, axes)));
  }
  it->second = seconds;
  return seconds;
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
