//===- PlanRepeats.cpp - Repeated layers planned once ---------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Step 0 of the planner (Planner.h): the ops and weights of every repeat of
// the body's repeated layers but the first map to the first's, so a layer
// is one set of nodes however deep the stack.
//
//===----------------------------------------------------------------------===//

#include "Planner.h"

using namespace mlir;
using namespace mlir::tp;
using namespace mlir::tp::planner;

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
