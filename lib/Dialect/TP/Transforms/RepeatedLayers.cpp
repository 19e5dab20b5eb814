//===- RepeatedLayers.cpp - Finding a model's repeated layers -------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/RepeatedLayers.h"

#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tp;

/// The most candidate periods tried per search.
static constexpr unsigned kPeriodsTried = 8;

/// A leaf is rebuilt wherever it is needed instead of being passed around:
/// no operands, no regions, one result, no side effects.
bool mlir::tp::isLeaf(Operation *op) {
  return op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         op->getNumResults() == 1 && isMemoryEffectFree(op);
}

/// The leaf of `body` that defines `v`, or null.
Operation *mlir::tp::leafOf(Value v, Block *body) {
  Operation *def = v.getDefiningOp();
  return def && def->getBlock() == body && isLeaf(def) ? def : nullptr;
}

bool LayerFinder::sameAttrs(DictionaryAttr a, DictionaryAttr b) const {
  if (a == b)
    return true;
  if (!ignored)
    return false;
  // Both are sorted by name.
  auto kept = [&](NamedAttribute attr) { return attr.getName() != ignored; };
  auto x = llvm::make_filter_range(a.getValue(), kept);
  auto y = llvm::make_filter_range(b.getValue(), kept);
  return llvm::equal(x, y);
}

llvm::hash_code LayerFinder::hashAttrs(DictionaryAttr attrs) const {
  if (!ignored)
    return llvm::hash_value(attrs.getAsOpaquePointer());
  llvm::hash_code hash = 0;
  for (NamedAttribute attr : attrs)
    if (attr.getName() != ignored)
      hash = llvm::hash_combine(hash, attr.getName().getAsOpaquePointer(),
                                attr.getValue().getAsOpaquePointer());
  return hash;
}

static size_t hashLeaf(Operation *leaf, const LayerFinder &finder) {
  return llvm::hash_combine(leaf->getName().getAsOpaquePointer(),
                            leaf->hashProperties(),
                            finder.hashAttrs(leaf->getRawDictionaryAttrs()),
                            leaf->getResult(0).getType().getAsOpaquePointer());
}

/// Whether leaves `a` and `b` make the same value (no operands, no regions,
/// one result).
static bool sameLeaf(Operation *a, Operation *b, const LayerFinder &finder) {
  return a == b || (a->getName() == b->getName() &&
                    a->getResult(0).getType() == b->getResult(0).getType() &&
                    finder.sameAttrs(a->getRawDictionaryAttrs(),
                                     b->getRawDictionaryAttrs()) &&
                    a->getName().compareOpProperties(
                        a->getPropertiesStorage(), b->getPropertiesStorage()));
}

/// A hash of `op`'s structure that equal ops share whatever their operands
/// are (their types and leaves count, not their identity).
static size_t hashOp(Operation *op, const LayerFinder &finder) {
  llvm::hash_code hash = llvm::hash_combine(
      op->getName().getAsOpaquePointer(), op->hashProperties(),
      finder.hashAttrs(op->getRawDictionaryAttrs()), op->getNumRegions());
  for (Type t : op->getResultTypes())
    hash = llvm::hash_combine(hash, t.getAsOpaquePointer());
  for (Value v : op->getOperands()) {
    hash = llvm::hash_combine(hash, v.getType().getAsOpaquePointer());
    if (Operation *leaf = finder.leafDef(v))
      hash = llvm::hash_combine(hash, hashLeaf(leaf, finder));
  }
  for (Region &region : op->getRegions())
    for (Block &block : region) {
      hash = llvm::hash_combine(hash, block.getNumArguments());
      for (Type t : block.getArgumentTypes())
        hash = llvm::hash_combine(hash, t.getAsOpaquePointer());
      for (Operation &nested : block)
        hash = llvm::hash_combine(hash, hashOp(&nested, finder));
    }
  return hash;
}

void LayerFinder::collectExternals(ArrayRef<Operation *> first,
                                   const llvm::DenseSet<Operation *> &inFirst,
                                   SmallVectorImpl<Value> &externals,
                                   DenseMap<Value, unsigned> &index) const {
  for (Operation *top : first)
    top->walk<WalkOrder::PreOrder>([&](Operation *op) {
      for (Value v : op->getOperands()) {
        if (inFirst.contains(topLevelDef(v)) || leafDef(v))
          continue;
        if (index.try_emplace(v, externals.size()).second)
          externals.push_back(v);
      }
    });
}
bool LayerFinder::sameRepeat(ArrayRef<Operation *> first,
                             ArrayRef<Operation *> other,
                             const llvm::DenseSet<Operation *> &inOther,
                             const DenseMap<Value, unsigned> &firstIndex,
                             SmallVectorImpl<Value> &externals) const {
  externals.assign(firstIndex.size(), Value());
  otherIndex.clear();
  inner.clear();
  for (auto [a, b] : llvm::zip_equal(first, other))
    if (!sameOp(a, b, inOther, firstIndex, otherIndex, inner, externals))
      return false;
  return llvm::all_of(externals, [](Value v) { return bool(v); });
}
bool LayerFinder::sameOp(Operation *a, Operation *b,
                         const llvm::DenseSet<Operation *> &inOther,
                         const DenseMap<Value, unsigned> &firstIndex,
                         DenseMap<Value, unsigned> &otherIndex,
                         DenseMap<Value, Value> &inner,
                         SmallVectorImpl<Value> &externals) const {
  if (a->getName() != b->getName() ||
      a->getNumOperands() != b->getNumOperands() ||
      a->getNumResults() != b->getNumResults() ||
      a->getNumRegions() != b->getNumRegions() ||
      !sameAttrs(a->getRawDictionaryAttrs(), b->getRawDictionaryAttrs()) ||
      !a->getName().compareOpProperties(a->getPropertiesStorage(),
                                        b->getPropertiesStorage()))
    return false;
  for (auto [x, y] : llvm::zip(a->getOperands(), b->getOperands())) {
    if (x.getType() != y.getType())
      return false;
    if (auto it = inner.find(x); it != inner.end()) {
      if (it->second != y)
        return false;
      continue;
    }
    Operation *leafX = leafDef(x);
    Operation *leafY = leafDef(y);
    if (leafX || leafY) {
      if (!leafX || !leafY || !sameLeaf(leafX, leafY, *this))
        return false;
      continue;
    }
    // From outside both repeats, used in the same places.
    auto it = firstIndex.find(x);
    if (it == firstIndex.end() || inOther.contains(topLevelDef(y)))
      return false;
    Value &slot = externals[it->second];
    if (slot) {
      if (slot != y)
        return false;
      continue;
    }
    if (!otherIndex.try_emplace(y, it->second).second)
      return false;
    slot = y;
  }
  for (auto [x, y] : llvm::zip(a->getResults(), b->getResults())) {
    if (x.getType() != y.getType())
      return false;
    inner[x] = y;
  }
  for (auto [ra, rb] : llvm::zip(a->getRegions(), b->getRegions())) {
    if (ra.getBlocks().size() != rb.getBlocks().size())
      return false;
    for (auto [ba, bb] : llvm::zip(ra, rb)) {
      if (ba.getNumArguments() != bb.getNumArguments() ||
          ba.getOperations().size() != bb.getOperations().size())
        return false;
      for (auto [x, y] : llvm::zip(ba.getArguments(), bb.getArguments())) {
        if (x.getType() != y.getType())
          return false;
        inner[x] = y;
      }
      for (auto [oa, ob] : llvm::zip(ba, bb))
        if (!sameOp(&oa, &ob, inOther, firstIndex, otherIndex, inner,
                    externals))
          return false;
    }
  }
  return true;
}

LayerRepeats LayerFinder::search(unsigned minPeriod,
                                 RepeatExternals *externals) const {
  ArrayRef<Operation *> ops = this->ops;
  unsigned n = ops.size();
  LayerRepeats best;
  if (n < 2 * minPeriod)
    return best;
  SmallVector<size_t> hashes;
  hashes.reserve(n);
  for (Operation *op : ops)
    hashes.push_back(hashOp(op, *this));
  DenseMap<size_t, unsigned> last;
  DenseMap<unsigned, unsigned> gaps;
  for (unsigned i = 0; i < n; ++i) {
    auto [it, fresh] = last.try_emplace(hashes[i], i);
    if (!fresh) {
      unsigned gap = i - it->second;
      if (gap >= minPeriod)
        ++gaps[gap];
      it->second = i;
    }
  }
  SmallVector<std::pair<unsigned, unsigned>> periods(gaps.begin(), gaps.end());
  llvm::sort(periods, [](auto x, auto y) {
    return x.second != y.second ? x.second > y.second : x.first > y.first;
  });
  if (periods.size() > kPeriodsTried)
    periods.resize(kPeriodsTried);
  for (auto [period, count] : periods) {
    (void)count;
    // Maximal runs of i with hash[i] == hash[i + period].
    for (unsigned i = 0; i + period < n;) {
      if (hashes[i] != hashes[i + period]) {
        ++i;
        continue;
      }
      unsigned runStart = i;
      while (i + period < n && hashes[i] == hashes[i + period])
        ++i;
      unsigned run = i - runStart;
      if (run < period)
        continue;
      LayerRepeats c{runStart, period, run / period + 1};
      if (c.saved() <= best.saved())
        continue;
      RepeatExternals found;
      c.repeats = checkedRepeats(c, externals ? &found : nullptr);
      if (c.saved() > best.saved()) {
        best = c;
        if (externals)
          *externals = std::move(found);
      }
    }
  }
  return best;
}

unsigned LayerFinder::checkedRepeats(const LayerRepeats &c,
                                     RepeatExternals *found) const {
  ArrayRef<Operation *> first = repeat(c.start, c.period, 0);
  llvm::DenseSet<Operation *> inFirst(first.begin(), first.end());
  SmallVector<Value> externals;
  DenseMap<Value, unsigned> index;
  collectExternals(first, inFirst, externals, index);
  if (found) {
    found->first = externals;
    found->others.clear();
  }
  SmallVector<Value> others;
  llvm::DenseSet<Operation *> inOther;
  for (unsigned k = 1; k < c.repeats; ++k) {
    ArrayRef<Operation *> other = repeat(c.start, c.period, k);
    inOther.clear();
    inOther.insert(other.begin(), other.end());
    if (!sameRepeat(first, other, inOther, index, others))
      return k;
    if (found)
      found->others.push_back(others);
  }
  return c.repeats;
}
