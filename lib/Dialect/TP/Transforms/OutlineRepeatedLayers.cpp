//===- OutlineRepeatedLayers.cpp - One function per repeated layer --------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Finds runs of structurally identical op sequences in a function's body (a
// model's layers) and outlines one repeat into a function that every repeat
// calls, so that code generation sees each distinct layer once.
//
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
// 4. The candidate that saves the most ops is outlined; then the search runs
//    again on what is left.
//
// The work is linear in the function's size per candidate period, and a
// handful of periods are tried.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Passes.h"

#include "tp/Dialect/TP/IR/TPDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace mlir::tp {
#define GEN_PASS_DEF_OUTLINEREPEATEDLAYERSPASS
#include "tp/Dialect/TP/Transforms/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// The most candidate periods tried per search.
constexpr unsigned kPeriodsTried = 8;

/// A leaf is rebuilt wherever it is needed instead of being passed around:
/// no operands, no regions, one result, no side effects.
bool isLeaf(Operation *op) {
  return op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         op->getNumResults() == 1 && isMemoryEffectFree(op);
}

/// The leaf of `body` that defines `v`, or null.
Operation *leafOf(Value v, Block *body) {
  Operation *def = v.getDefiningOp();
  return def && def->getBlock() == body && isLeaf(def) ? def : nullptr;
}

size_t hashLeaf(Operation *leaf) {
  return llvm::hash_combine(leaf->getName().getAsOpaquePointer(),
                            leaf->hashProperties(),
                            leaf->getRawDictionaryAttrs().getAsOpaquePointer(),
                            leaf->getResult(0).getType().getAsOpaquePointer());
}

/// A hash of `op`'s structure that equal ops share whatever their operands
/// are (their types and leaves count, not their identity).
size_t hashOp(Operation *op, Block *body) {
  llvm::hash_code hash = llvm::hash_combine(
      op->getName().getAsOpaquePointer(), op->hashProperties(),
      op->getRawDictionaryAttrs().getAsOpaquePointer(), op->getNumRegions());
  for (Type t : op->getResultTypes())
    hash = llvm::hash_combine(hash, t.getAsOpaquePointer());
  for (Value v : op->getOperands()) {
    hash = llvm::hash_combine(hash, v.getType().getAsOpaquePointer());
    if (Operation *leaf = leafOf(v, body))
      hash = llvm::hash_combine(hash, hashLeaf(leaf));
  }
  for (Region &region : op->getRegions())
    for (Block &block : region) {
      hash = llvm::hash_combine(hash, block.getNumArguments());
      for (Type t : block.getArgumentTypes())
        hash = llvm::hash_combine(hash, t.getAsOpaquePointer());
      for (Operation &nested : block)
        hash = llvm::hash_combine(hash, hashOp(&nested, body));
    }
  return hash;
}

/// One function's body as the search sees it.
class LayerFinder {
public:
  LayerFinder(Block *body) : body(body) {}

  /// The ops of the body the search is about (no leaves, no terminator),
  /// recomputed after each outlining.
  void collect() {
    ops.clear();
    for (Operation &op : body->without_terminator())
      if (!isLeaf(&op))
        ops.push_back(&op);
  }

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
  /// order of first use; they become the layer function's arguments.
  void collectExternals(ArrayRef<Operation *> first,
                        const llvm::DenseSet<Operation *> &inFirst,
                        SmallVectorImpl<Value> &externals,
                        DenseMap<Value, unsigned> &index) const {
    for (Operation *top : first)
      top->walk<WalkOrder::PreOrder>([&](Operation *op) {
        for (Value v : op->getOperands()) {
          if (inFirst.contains(topLevelDef(v)) || leafOf(v, body))
            continue;
          if (index.try_emplace(v, externals.size()).second)
            externals.push_back(v);
        }
      });
  }

  /// Whether repeat `other` computes what `first` does, op for op. On
  /// success `externals` holds the values it reads in place of the first's
  /// (`firstIndex` numbers those).
  bool sameRepeat(ArrayRef<Operation *> first, ArrayRef<Operation *> other,
                  const llvm::DenseSet<Operation *> &inOther,
                  const DenseMap<Value, unsigned> &firstIndex,
                  SmallVectorImpl<Value> &externals) const {
    externals.assign(firstIndex.size(), Value());
    DenseMap<Value, unsigned> otherIndex;
    DenseMap<Value, Value> inner;
    for (auto [a, b] : llvm::zip_equal(first, other))
      if (!sameOp(a, b, inOther, firstIndex, otherIndex, inner, externals))
        return false;
    return llvm::all_of(externals, [](Value v) { return bool(v); });
  }

  Block *body;
  SmallVector<Operation *> ops;

private:
  bool sameOp(Operation *a, Operation *b,
              const llvm::DenseSet<Operation *> &inOther,
              const DenseMap<Value, unsigned> &firstIndex,
              DenseMap<Value, unsigned> &otherIndex,
              DenseMap<Value, Value> &inner,
              SmallVectorImpl<Value> &externals) const {
    if (a->getName() != b->getName() ||
        a->getNumOperands() != b->getNumOperands() ||
        a->getNumResults() != b->getNumResults() ||
        a->getNumRegions() != b->getNumRegions() ||
        a->getRawDictionaryAttrs() != b->getRawDictionaryAttrs() ||
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
      Operation *leafX = leafOf(x, body);
      Operation *leafY = leafOf(y, body);
      if (leafX || leafY) {
        if (!leafX || !leafY ||
            !OperationEquivalence::isEquivalentTo(
                leafX, leafY, OperationEquivalence::Flags::IgnoreLocations))
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
};

struct Candidate {
  unsigned start = 0, period = 0, repeats = 0;
  unsigned saved() const { return repeats > 1 ? (repeats - 1) * period : 0; }
};

struct OutlineRepeatedLayersPass
    : public tp::impl::OutlineRepeatedLayersPassBase<
          OutlineRepeatedLayersPass> {
  using OutlineRepeatedLayersPassBase::OutlineRepeatedLayersPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (func::FuncOp func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal() || !func.getBody().hasOneBlock())
        continue;
      LayerFinder finder(&func.getBody().front());
      for (unsigned made = 0; made < maxLayers; ++made) {
        finder.collect();
        Candidate best = search(finder);
        if (!best.saved())
          break;
        outline(func, finder, best, symbols, "_layer");
      }
    }
    if (maxFunctionOps == 0)
      return;
    // What is left long (a model without repeats, a long layer) is cut into
    // parts of at most maxFunctionOps ops, each called once.
    for (func::FuncOp func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal() || !func.getBody().hasOneBlock())
        continue;
      LayerFinder finder(&func.getBody().front());
      finder.collect();
      unsigned n = finder.ops.size();
      if (n <= maxFunctionOps)
        continue;
      // Equal parts, the last first: the positions of those before it stay.
      unsigned parts = llvm::divideCeil(n, unsigned(maxFunctionOps));
      unsigned size = llvm::divideCeil(n, parts);
      for (unsigned part = parts; part-- > 0;) {
        unsigned start = part * size;
        if (start >= n)
          continue;
        finder.collect();
        outline(func, finder, Candidate{start, std::min(size, n - start), 1},
                symbols, "_part", part);
      }
    }
  }

  /// The repeats of `finder`'s ops that save the most ops when outlined.
  Candidate search(const LayerFinder &finder) const {
    unsigned minPeriod = std::max(1u, unsigned(minLayerOps));
    ArrayRef<Operation *> ops = finder.ops;
    unsigned n = ops.size();
    Candidate best;
    if (n < 2 * minPeriod)
      return best;
    SmallVector<size_t> hashes;
    hashes.reserve(n);
    for (Operation *op : ops)
      hashes.push_back(hashOp(op, finder.body));
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
    SmallVector<std::pair<unsigned, unsigned>> periods(gaps.begin(),
                                                       gaps.end());
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
        Candidate c{runStart, period, run / period + 1};
        if (c.saved() <= best.saved())
          continue;
        c.repeats = checkedRepeats(finder, c);
        if (c.saved() > best.saved())
          best = c;
      }
    }
    return best;
  }

  /// How many of `c`'s repeats, from the first, compute the same.
  static unsigned checkedRepeats(const LayerFinder &finder,
                                 const Candidate &c) {
    ArrayRef<Operation *> first = finder.repeat(c.start, c.period, 0);
    llvm::DenseSet<Operation *> inFirst(first.begin(), first.end());
    SmallVector<Value> externals;
    DenseMap<Value, unsigned> index;
    finder.collectExternals(first, inFirst, externals, index);
    SmallVector<Value> others;
    for (unsigned k = 1; k < c.repeats; ++k) {
      ArrayRef<Operation *> other = finder.repeat(c.start, c.period, k);
      llvm::DenseSet<Operation *> inOther(other.begin(), other.end());
      if (!finder.sameRepeat(first, other, inOther, index, others))
        return k;
    }
    return c.repeats;
  }

  void outline(func::FuncOp func, LayerFinder &finder, const Candidate &c,
               SymbolTable &symbols, StringRef suffix,
               unsigned firstNumber = 0) {
    Block *body = finder.body;
    ArrayRef<Operation *> first = finder.repeat(c.start, c.period, 0);
    llvm::DenseSet<Operation *> inFirst(first.begin(), first.end());
    SmallVector<Value> externals;
    DenseMap<Value, unsigned> index;
    finder.collectExternals(first, inFirst, externals, index);

    // Each repeat's operands, and the results anything after a repeat reads
    // (in any repeat: the layer function returns their union).
    SmallVector<SmallVector<Value>> operands(c.repeats);
    SmallVector<llvm::DenseSet<Operation *>> members(c.repeats);
    std::vector<std::pair<unsigned, unsigned>> escaping;
    for (unsigned k = 0; k < c.repeats; ++k) {
      ArrayRef<Operation *> rep = finder.repeat(c.start, c.period, k);
      members[k].insert(rep.begin(), rep.end());
      if (k == 0)
        operands[k] = externals;
      else if (!finder.sameRepeat(first, rep, members[k], index, operands[k]))
        llvm_unreachable("a checked repeat no longer matches");
      for (auto [j, op] : llvm::enumerate(rep))
        for (OpResult result : op->getResults())
          if (llvm::any_of(result.getUses(), [&](OpOperand &use) {
                return !members[k].contains(finder.topLevel(use.getOwner()));
              }))
            escaping.emplace_back(j, result.getResultNumber());
    }
    llvm::sort(escaping);
    escaping.erase(llvm::unique(escaping), escaping.end());

    // The layer function: the first repeat, its leaves cloned in.
    MLIRContext *context = func.getContext();
    SmallVector<Type> argTypes, resultTypes;
    for (Value v : externals)
      argTypes.push_back(v.getType());
    for (auto [j, r] : escaping)
      resultTypes.push_back(first[j]->getResult(r).getType());
    OpBuilder builder(context);
    builder.setInsertionPointAfter(func);
    auto layer =
        func::FuncOp::create(builder, first.front()->getLoc(),
                             freshName(func, suffix, firstNumber, symbols),
                             FunctionType::get(context, argTypes, resultTypes));
    layer.setPrivate();
    // LLVM would inline it back (a part is called once): that is the code
    // size this pass keeps away from each function's optimisation.
    layer->setAttr("passthrough",
                   builder.getArrayAttr({builder.getStringAttr("noinline")}));
    if (Attribute spmd = func->getAttr(TPDialect::kSpmdAttrName))
      layer->setAttr(TPDialect::kSpmdAttrName, spmd);
    symbols.insert(layer);
    Block *entry = layer.addEntryBlock();
    IRMapping mapping;
    for (auto [v, arg] : llvm::zip(externals, entry->getArguments()))
      mapping.map(v, arg);
    builder.setInsertionPointToStart(entry);
    for (Operation *top : first)
      top->walk([&](Operation *op) {
        for (Value v : op->getOperands())
          if (Operation *leaf = leafOf(v, body); leaf && !mapping.contains(v))
            builder.clone(*leaf, mapping);
      });
    for (Operation *op : first)
      builder.clone(*op, mapping);
    SmallVector<Value> returned;
    for (auto [j, r] : escaping)
      returned.push_back(mapping.lookup(first[j]->getResult(r)));
    func::ReturnOp::create(builder, layer.getLoc(), returned);

    // Every repeat becomes a call (reading, where a repeat reads an earlier
    // one, that one's call).
    DenseMap<Value, Value> replaced;
    for (unsigned k = 0; k < c.repeats; ++k) {
      ArrayRef<Operation *> rep = finder.repeat(c.start, c.period, k);
      for (Value &v : operands[k])
        v = replaced.lookup_or(v, v);
      builder.setInsertionPoint(rep.front());
      auto call = func::CallOp::create(builder, rep.front()->getLoc(), layer,
                                       operands[k]);
      for (auto [e, jr] : llvm::enumerate(escaping)) {
        Value old = rep[jr.first]->getResult(jr.second);
        replaced[old] = call.getResult(e);
        old.replaceUsesWithIf(call.getResult(e), [&](OpOperand &use) {
          return !members[k].contains(finder.topLevel(use.getOwner()));
        });
      }
      for (Operation *op : llvm::reverse(rep))
        op->erase();
    }
    for (Operation &op : llvm::make_early_inc_range(*body))
      if (isLeaf(&op) && op.use_empty())
        op.erase();
  }

  /// `<func><suffix><i>`, the first free from i = `first`.
  static std::string freshName(func::FuncOp func, StringRef suffix,
                               unsigned first, SymbolTable &symbols) {
    for (unsigned i = first;; ++i) {
      std::string name = (func.getSymName() + suffix + Twine(i)).str();
      if (!symbols.lookup(name))
        return name;
    }
  }
};

} // namespace
