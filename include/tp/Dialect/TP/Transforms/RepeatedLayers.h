//===- RepeatedLayers.h - Finding a model's repeated layers -----*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Runs of structurally identical op sequences in a function's body (a
// model's layers), as --tp-outline-repeated-layers outlines them and the
// automatic planner gives them one plan:
// 1. Every op of the body but the terminator and the leaves (ops without
//    operands, regions or side effects: constants, tensor.empty) gets a
//    structural hash that ignores which values its operands are: only their
//    types count, and for an operand made by a leaf, the leaf.
// 2. Candidate periods are the distances between consecutive ops of equal
//    hash, the most frequent first. For a period L, a run of positions i with
//    hash[i] == hash[i + L] at least L long holds N >= 2 repeats of L ops.
// 3. Each repeat is checked against the first, op for op: structure, and
//    dataflow (an operand comes from the same op of the same repeat, from an
//    equal leaf, or from outside the repeat in the same places as in the
//    first); the candidate ends at the first repeat that differs.
// The work is linear in the body's size per candidate period, and a handful
// of periods are tried.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_TRANSFORMS_REPEATEDLAYERS_H
#define TP_DIALECT_TP_TRANSFORMS_REPEATEDLAYERS_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <vector>

namespace mlir::tp {

/// A leaf is rebuilt wherever it is needed instead of being passed around:
/// no operands, no regions, one result, no side effects.
bool isLeaf(Operation *op);
/// The leaf of `body` that defines `v`, or null.
Operation *leafOf(Value v, Block *body);

/// `repeats` runs of `period` ops from position `start` of the searched ops.
struct LayerRepeats {
  unsigned start = 0, period = 0, repeats = 0;
  unsigned saved() const { return repeats > 1 ? (repeats - 1) * period : 0; }
};

/// What checking a candidate's repeats found: the values the first repeat
/// reads from outside itself (see LayerFinder::collectExternals), and per
/// later repeat that computes the same, the values it reads in their place.
struct RepeatExternals {
  SmallVector<Value> first;
  std::vector<SmallVector<Value>> others;
};

/// One function's body as the search sees it.
class LayerFinder {
public:
  /// With `ignored`, ops that differ only in that discardable attribute
  /// (provenance, such as tp.origins) count as the same.
  explicit LayerFinder(Block *body, StringAttr ignored = {})
      : body(body), ignored(ignored) {}

  /// The ops of the body the search is about (no leaves, no terminator),
  /// recomputed after each change of the body.
  void collect() {
    ops.clear();
    leaves.clear();
    for (Operation &op : body->without_terminator()) {
      if (isLeaf(&op))
        leaves.insert(&op);
      else
        ops.push_back(&op);
    }
  }

  /// The leaf of the body that defines `v`, or null (leafOf, from what
  /// `collect` found: asking an op whether it is free of effects is an
  /// interface query, and the search asks about every operand).
  Operation *leafDef(Value v) const {
    Operation *def = v.getDefiningOp();
    return def && leaves.contains(def) ? def : nullptr;
  }

  /// The repeats that save the most ops (none: `saved()` is 0), with at
  /// least `minPeriod` ops each. With `externals`, also what checking them
  /// found, so that a caller need not compare the repeats again.
  LayerRepeats search(unsigned minPeriod,
                      RepeatExternals *externals = nullptr) const;
  /// How many of `c`'s repeats, from the first, compute the same; with
  /// `externals`, what each of them reads from outside.
  unsigned checkedRepeats(const LayerRepeats &c,
                          RepeatExternals *externals = nullptr) const;

  ArrayRef<Operation *> repeat(unsigned start, unsigned period,
                               unsigned index) const {
    return ArrayRef<Operation *>(ops).slice(start + index * period, period);
  }

  /// The top-level op of the body that holds (or is) `owner`; null for the
  /// body's own arguments.
  Operation *topLevel(Operation *owner) const {
    return owner ? body->findAncestorOpInBlock(*owner) : nullptr;
  }
  Operation *topLevelDef(Value v) const {
    if (Operation *def = v.getDefiningOp())
      return topLevel(def);
    Block *block = cast<BlockArgument>(v).getOwner();
    return block == body ? nullptr : topLevel(block->getParentOp());
  }

  /// The values the first repeat reads from outside itself (not leaves), in
  /// order of first use.
  void collectExternals(ArrayRef<Operation *> first,
                        const llvm::DenseSet<Operation *> &inFirst,
                        SmallVectorImpl<Value> &externals,
                        DenseMap<Value, unsigned> &index) const;

  /// Whether repeat `other` computes what `first` does, op for op. On
  /// success `externals` holds the values it reads in place of the first's
  /// (`firstIndex` numbers those).
  bool sameRepeat(ArrayRef<Operation *> first, ArrayRef<Operation *> other,
                  const llvm::DenseSet<Operation *> &inOther,
                  const DenseMap<Value, unsigned> &firstIndex,
                  SmallVectorImpl<Value> &externals) const;

  /// Whether `a` and `b` carry the same discardable attributes, `ignored`
  /// aside.
  bool sameAttrs(DictionaryAttr a, DictionaryAttr b) const;
  /// A hash of `attrs` that sameAttrs's equal dictionaries share.
  llvm::hash_code hashAttrs(DictionaryAttr attrs) const;

  Block *body;
  StringAttr ignored;
  SmallVector<Operation *> ops;
  llvm::DenseSet<Operation *> leaves;

private:
  bool sameOp(Operation *a, Operation *b,
              const llvm::DenseSet<Operation *> &inOther,
              const DenseMap<Value, unsigned> &firstIndex,
              DenseMap<Value, unsigned> &otherIndex,
              DenseMap<Value, Value> &inner,
              SmallVectorImpl<Value> &externals) const;

  /// sameRepeat's maps, kept between calls: every repeat of a candidate is
  /// compared with the first, and the maps keep their size.
  mutable DenseMap<Value, unsigned> otherIndex;
  mutable DenseMap<Value, Value> inner;
};

} // namespace mlir::tp

#endif // TP_DIALECT_TP_TRANSFORMS_REPEATEDLAYERS_H
