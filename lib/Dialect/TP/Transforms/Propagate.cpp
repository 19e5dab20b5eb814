//===- Propagate.cpp - Complete the shardings of a module -----------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Gives every tensor value a sharding, from the few that constraints fix.
//
// Algorithm, per function:
//  1. Mesh. The function's constraints name its mesh (one per function; a
//     second one is an error naming both places).
//  2. Seeds. Constrained arguments and the results of tp.annotate / tp.reshard
//     are fixed; result constraints of the function act on what is returned.
//  3. Fixed point. A worklist visits ops (first in program order). For an op
//     with a sharding rule, every tensor's current sharding is projected onto
//     the rule's factors; each factor gets, among the axis lists proposed for
//     it, the one of least communication cost (CostModel.h), the decision is
//     trimmed until every tensor can express it as block splits, and every
//     open tensor that the decision extends is updated. Updates only add axes,
//     so the worklist empties. Splitting a reduction factor makes the op's
//     results partial.
//  4. Finalization, in program order: each op's results take the op's
//     decision; an operand whose sharding differs from what the op needs gets
//     a tp.reshard (one per value and target sharding). An op without a rule
//     is replicated, with a remark.
//  5. Output: `tp.shardings` on ops, `tp.sharding` on open function
//     arguments and results, and with `record-origins`, the constraint each
//     sharding came from.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Passes.h"

#include "tp/Dialect/TP/IR/TPInterfaces.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Dialect/TP/Transforms/CostModel.h"
#include "tp/Dialect/TP/Transforms/Structure.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/Inliner.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/StringSaver.h"
#include <deque>
#include <map>
#include <vector>

#define DEBUG_TYPE "tp-propagate"

namespace mlir::tp {
#define GEN_PASS_DEF_PROPAGATEPASS
#include "tp/Dialect/TP/Transforms/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

using AxisList = SmallVector<StringRef, 2>;

/// A sharding under construction: per dimension the splitting axes, and the
/// axes of a pending sum. The mesh is the function's.
struct Sharding {
  SmallVector<AxisList> dims;
  AxisList partial;

  bool operator==(const Sharding &other) const {
    return dims == other.dims && partial == other.partial;
  }
  bool operator!=(const Sharding &other) const { return !(*this == other); }
  bool hasAxes() const {
    return !partial.empty() ||
           llvm::any_of(dims, [](const AxisList &d) { return !d.empty(); });
  }
  static Sharding replicated(unsigned rank) {
    Sharding s;
    s.dims.resize(rank);
    return s;
  }
  static Sharding fromAttr(ShardingAttr attr) {
    Sharding s;
    for (unsigned d = 0; d < attr.getRank(); ++d)
      s.dims.push_back(AxisList(attr.getDimAxes(d)));
    s.partial = AxisList(attr.getPartialAxes());
    return s;
  }
  ShardingAttr toAttr(MLIRContext *ctx, FlatSymbolRefAttr mesh) const {
    SmallVector<SmallVector<StringRef>> d;
    for (const AxisList &axes : dims)
      d.push_back(SmallVector<StringRef>(axes.begin(), axes.end()));
    return ShardingAttr::get(ctx, mesh, d, partial);
  }
};

struct ValueState {
  Sharding sharding;
  /// Something is known about the value (possibly: it is replicated).
  bool known = false;
  /// Set by a constraint; never changed.
  bool fixed = false;
  /// The constraint the sharding came from (for `record-origins`); owned by
  /// the propagator's string saver.
  StringRef origin;
};

/// Appends `s` to a lookup key: axis names come from uniqued StringAttrs, so
/// their data pointers identify them; each dimension's axes end with
/// `kKeyDimEnd`, the partial axes with null.
const char kKeyMarkers[4] = {};
const void *const kKeyDimEnd = &kKeyMarkers[0];
void appendKey(const Sharding &s, SmallVectorImpl<const void *> &key) {
  for (const AxisList &axes : s.dims) {
    for (StringRef a : axes)
      key.push_back(a.data());
    key.push_back(kKeyDimEnd);
  }
  for (StringRef a : s.partial)
    key.push_back(a.data());
  key.push_back(nullptr);
}

bool isTensor(Value v) { return isa<RankedTensorType>(v.getType()); }

/// Values that carry no data worth moving: tensor.empty, a fill of one, a
/// splat constant. Any sharding of them is made in place by cloning their
/// producers, so they neither propose shardings nor cost a reshard.
bool isRematerializable(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !isTensor(v))
    return false;
  if (isa<tensor::EmptyOp>(def))
    return true;
  if (auto fill = dyn_cast<linalg::FillOp>(def))
    return fill.hasPureTensorSemantics() &&
           isRematerializable(fill.getOutputs().front());
  if (auto constant = dyn_cast<arith::ConstantOp>(def))
    return isa<SplatElementsAttr>(constant.getValue());
  return false;
}

class FunctionPropagator {
public:
  FunctionPropagator(FunctionOpInterface func, MeshOp mesh,
                     const PropagatePassOptions &options)
      : func(func), mesh(mesh), options(options),
        meshRef(FlatSymbolRefAttr::get(mesh.getSymNameAttr())) {}

  LogicalResult run();

private:
  // Steps.
  void seed();
  void propagate();
  LogicalResult finalize();
  void write();

  // Factor machinery.
  struct Candidate {
    AxisList axes;
    StringRef origin;
    /// The operand (or numOperands + result) that proposed the axes.
    int source = -1;
  };
  using Decision = SmallVector<Candidate>;
  /// Per factor, the axes `s` puts on it; false when some split of `s` is not
  /// a block split of the rule's factors (that part is left out).
  bool project(const Sharding &s, const ShardingRule::TensorFactors &tf,
               const ShardingRule &rule, SmallVectorImpl<AxisList> &out);
  /// The sharding of a tensor with factors `tf` under `decision`, or failure
  /// if some dimension cannot express it.
  FailureOr<Sharding> compose(const ShardingRule::TensorFactors &tf,
                              const ShardingRule &rule,
                              ArrayRef<Candidate> decision, bool isResult);
  /// A decision and what it implies: each operand's and result's sharding
  /// (none for a non-tensor, or where the decision is inexpressible), and
  /// which operand (or numOperands + result) proposed the first split axes.
  struct Outcome {
    Decision decision;
    SmallVector<std::optional<Sharding>> operands, results;
    int originSource = -1;
  };
  /// The op's outcome, memoized per rule and current shardings of its
  /// tensors (the layers of a stack repeat the same decisions); computed by
  /// `decideNew`. Stays valid for the propagator's lifetime.
  const Outcome &decide(Operation *op, const ShardingRule &rule, bool final);
  Decision decideNew(Operation *op, const ShardingRule &rule, bool final);
  Outcome makeOutcome(Operation *op, const ShardingRule &rule,
                      Decision decision);
  /// The origin recorded for operand (or numOperands + result) `source`.
  StringRef originOf(Operation *op, int source);
  DenseMap<ArrayRef<const void *>, const Outcome *> outcomeIndex;
  std::deque<Outcome> outcomes;
  double localBytes(Value v, const Sharding &s);
  int64_t groupSize(ArrayRef<StringRef> axes);
  int64_t axisSize(StringRef axis);
  SmallVector<std::pair<StringRef, int64_t>, 4> axisSizes;

  /// The sharding `v` has now (during propagation) or finally.
  const Sharding *current(Value v, bool final);
  bool extend(Value v, const Sharding &s, StringRef origin);
  /// The rule of `op`, computed once; null when it has none.
  const ShardingRule *ruleOf(Operation *op);
  StringRef save(const Twine &text) { return saver.save(text); }
  /// A copy of `key` that lives as long as the propagator (map keys).
  ArrayRef<const void *> persist(ArrayRef<const void *> key) {
    const void **stored = allocator.Allocate<const void *>(key.size());
    llvm::copy(key, stored);
    return ArrayRef<const void *>(stored, key.size());
  }
  void enqueueNeighbours(Value v);

  Value reshardTo(Value v, const Sharding &target);
  /// The attribute of `s`, built once per distinct sharding (uniquing every
  /// op's attribute in the context is the costly part of writing results).
  ShardingAttr attrOf(const Sharding &s);
  /// Sequence parallelism: an op about to reduce a pending sum computes on
  /// tokens split over the sum's axes instead (the reduction becomes a
  /// reduce_scatter; the tokens are gathered where a split weight needs
  /// them whole).
  bool splitTokensOfReduction(Operation *op, const ShardingRule &rule,
                              Decision &decision,
                              function_ref<const Sharding &(Value)> finalOf);
  Value rematerialize(Value v, const Sharding &target);
  /// The replicated sharding of rank `rank`, built once.
  const Sharding &replicatedOf(unsigned rank) {
    while (replicatedByRank.size() <= rank)
      replicatedByRank.push_back(Sharding::replicated(replicatedByRank.size()));
    return replicatedByRank[rank];
  }
  std::deque<Sharding> replicatedByRank;

  FunctionOpInterface func;
  MeshOp mesh;
  const PropagatePassOptions &options;
  FlatSymbolRefAttr meshRef;

  DenseMap<Value, ValueState> states;
  DenseMap<Value, Sharding> finals;
  DenseMap<Operation *, StringRef> resultOrigins;
  /// Origin given to producers cloned for the op being finalized.
  StringRef rematerializedFor;
  SmallVector<std::optional<Sharding>> resultConstraints;
  SmallVector<StringRef> resultConstraintOrigins;
  DenseMap<Operation *, const ShardingRule *> rules;
  ShardingRuleCache ruleCache;
  DenseMap<ArrayRef<const void *>, ShardingAttr> attrs;
  /// The single-result tp.shardings array of each distinct sharding.
  DenseMap<ShardingAttr, ArrayAttr> singleResultArrays;
  llvm::BumpPtrAllocator allocator;
  llvm::StringSaver saver{allocator};
  /// FIFO of ops to visit; `queued` says which are in it.
  std::deque<Operation *> worklist;
  DenseSet<Operation *> queued;
  void enqueue(Operation *op) {
    if (queued.insert(op).second)
      worklist.push_back(op);
  }
  llvm::MapVector<std::pair<Value, ShardingAttr>, Value> reshards;
};

int64_t FunctionPropagator::axisSize(StringRef axis) {
  // Meshes have a handful of axes: a linear scan over cached names.
  if (axisSizes.empty())
    for (auto [name, size] :
         llvm::zip(mesh.getAxisNames(), mesh.getAxisSizes()))
      axisSizes.push_back({cast<StringAttr>(name).getValue(), size});
  for (auto &[name, size] : axisSizes)
    if (name == axis)
      return size;
  return mesh.getAxisSize(axis);
}

int64_t FunctionPropagator::groupSize(ArrayRef<StringRef> axes) {
  int64_t n = 1;
  for (StringRef axis : axes)
    n *= axisSize(axis);
  return n;
}

double FunctionPropagator::localBytes(Value v, const Sharding &s) {
  auto type = cast<RankedTensorType>(v.getType());
  double bytes = elementBytes(type.getElementType());
  for (auto [d, size] : llvm::enumerate(type.getShape())) {
    double dim = ShapedType::isDynamic(size) ? 1.0 : static_cast<double>(size);
    if (d < s.dims.size())
      dim /= static_cast<double>(groupSize(s.dims[d]));
    bytes *= dim;
  }
  return bytes;
}

const Sharding *FunctionPropagator::current(Value v, bool final) {
  if (final) {
    auto it = finals.find(v);
    if (it != finals.end())
      return &it->second;
  }
  auto it = states.find(v);
  if (it == states.end() || !it->second.known)
    return nullptr;
  return &it->second.sharding;
}

//===----------------------------------------------------------------------===//
// Seeds
//===----------------------------------------------------------------------===//

void FunctionPropagator::seed() {
  std::string funcName = ("@" + func.getName()).str();
  for (auto [index, arg] : llvm::enumerate(func.getArguments())) {
    if (!isTensor(arg))
      continue;
    ValueState &state = states[arg];
    unsigned rank = cast<RankedTensorType>(arg.getType()).getRank();
    if (auto attr = func.getArgAttrOfType<ShardingAttr>(
            index, TPDialect::kShardingAttrName)) {
      state = {Sharding::fromAttr(attr), true, true,
               save("argument #" + Twine(index) + " of " + funcName)};
    } else if (options.replicateOpenBoundaries) {
      state = {Sharding::replicated(rank), true, true,
               save("argument #" + Twine(index) + " of " + funcName +
                    " (replicate-open-boundaries)")};
    }
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto type = dyn_cast<RankedTensorType>(func.getResultTypes()[i]);
    std::string origin = "result #" + std::to_string(i) + " of " + funcName;
    if (auto attr = func.getResultAttrOfType<ShardingAttr>(
            i, TPDialect::kShardingAttrName)) {
      resultConstraints.push_back(Sharding::fromAttr(attr));
    } else if (type && options.replicateOpenBoundaries) {
      resultConstraints.push_back(Sharding::replicated(type.getRank()));
      origin += " (replicate-open-boundaries)";
    } else {
      resultConstraints.push_back(std::nullopt);
    }
    resultConstraintOrigins.push_back(save(origin));
  }
  func.getFunctionBody().walk([&](Operation *op) {
    ShardingAttr sharding = getOwnSharding(op);
    if (!sharding)
      return;
    states[op->getResult(0)] = {Sharding::fromAttr(sharding), true, true,
                                save(op->getName().getStringRef() + " at " +
                                     formatLocation(op->getLoc()))};
  });
}

//===----------------------------------------------------------------------===//
// Factors
//===----------------------------------------------------------------------===//

bool FunctionPropagator::project(const Sharding &s,
                                 const ShardingRule::TensorFactors &tf,
                                 const ShardingRule &rule,
                                 SmallVectorImpl<AxisList> &out) {
  out.assign(rule.getNumFactors(), {});
  bool complete = true;
  for (auto [dim, factors] : llvm::enumerate(tf)) {
    if (dim >= s.dims.size())
      break;
    ArrayRef<StringRef> axes = s.dims[dim];
    size_t next = 0;
    for (int64_t f : factors) {
      int64_t local = rule.getFactorSize(f);
      // A dynamic factor keeps what the tensor says; its divisibility is
      // checked when sizes are known.
      if (ShapedType::isDynamic(local)) {
        out[f].append(axes.begin() + next, axes.end());
        next = axes.size();
        break;
      }
      while (next < axes.size() && local % axisSize(axes[next]) == 0 &&
             local > 1) {
        local /= axisSize(axes[next]);
        out[f].push_back(axes[next++]);
      }
      // Axes may move on to the next factor only once this one is split
      // down to single elements: otherwise the blocks would be strided.
      if (local != 1)
        break;
    }
    if (next != axes.size())
      complete = false;
  }
  return complete;
}

FailureOr<Sharding>
FunctionPropagator::compose(const ShardingRule::TensorFactors &tf,
                            const ShardingRule &rule,
                            ArrayRef<Candidate> decision, bool isResult) {
  Sharding s;
  for (const ShardingRule::DimFactors &factors : tf) {
    AxisList axes;
    bool previousFull = true;
    for (int64_t f : factors) {
      ArrayRef<StringRef> fAxes = decision[f].axes;
      if (!fAxes.empty() && !previousFull)
        return failure();
      llvm::append_range(axes, fAxes);
      int64_t size = rule.getFactorSize(f);
      previousFull =
          !ShapedType::isDynamic(size) && size / groupSize(fAxes) == 1;
    }
    s.dims.push_back(axes);
  }
  if (isResult)
    for (unsigned f = 0; f < rule.getNumFactors(); ++f)
      if (rule.getFactorKind(f) == FactorKind::Reduction)
        llvm::append_range(s.partial, decision[f].axes);
  return s;
}

const FunctionPropagator::Outcome &
FunctionPropagator::decide(Operation *op, const ShardingRule &rule,
                           bool final) {
  // A decision depends on the rule (which fixes the types) and on what each
  // tensor has now; only the origins of the chosen axes are per op.
  const void *kNoTensor = &kKeyMarkers[1], *kRematerializable = &kKeyMarkers[2],
             *kUnknown = &kKeyMarkers[3];
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
    const Sharding *s = isResult ? current(v, false) : current(v, final);
    if (!s) {
      key.push_back(kUnknown);
      return;
    }
    appendKey(*s, key);
  };
  for (Value v : op->getOperands())
    addKey(v, false);
  for (Value v : op->getResults())
    addKey(v, true);
  auto it = outcomeIndex.find(ArrayRef<const void *>(key));
  if (it != outcomeIndex.end())
    return *it->second;
  outcomes.push_back(makeOutcome(op, rule, decideNew(op, rule, final)));
  outcomeIndex[persist(key)] = &outcomes.back();
  return outcomes.back();
}

FunctionPropagator::Outcome
FunctionPropagator::makeOutcome(Operation *op, const ShardingRule &rule,
                                Decision decision) {
  Outcome outcome;
  outcome.decision = std::move(decision);
  auto implied = [&](Value v, const ShardingRule::TensorFactors &tf,
                     bool isResult) -> std::optional<Sharding> {
    if (!isTensor(v))
      return std::nullopt;
    FailureOr<Sharding> s = compose(tf, rule, outcome.decision, isResult);
    if (failed(s))
      return std::nullopt;
    return std::move(*s);
  };
  for (auto [operand, tf] : llvm::zip(op->getOperands(), rule.getOperands()))
    outcome.operands.push_back(implied(operand, tf, false));
  for (auto [result, tf] : llvm::zip(op->getResults(), rule.getResults()))
    outcome.results.push_back(implied(result, tf, true));
  for (const Candidate &c : outcome.decision)
    if (!c.axes.empty()) {
      outcome.originSource = c.source;
      break;
    }
  return outcome;
}

StringRef FunctionPropagator::originOf(Operation *op, int source) {
  if (source < 0)
    return StringRef();
  unsigned numOperands = op->getNumOperands();
  Value v = static_cast<unsigned>(source) < numOperands
                ? op->getOperand(source)
                : op->getResult(source - numOperands);
  auto state = states.find(v);
  return state != states.end() ? state->second.origin : StringRef();
}

FunctionPropagator::Decision
FunctionPropagator::decideNew(Operation *op, const ShardingRule &rule,
                              bool final) {
  unsigned numFactors = rule.getNumFactors();
  // Nothing proposes a split: every factor stays whole (the common case in
  // replicated regions), without building proposals.
  auto proposesSplit = [&](Value v, bool isResult) {
    if (!isTensor(v))
      return false;
    const Sharding *s = isResult ? current(v, false) : current(v, final);
    return s &&
           llvm::any_of(s->dims, [](const AxisList &d) { return !d.empty(); });
  };
  if (llvm::none_of(op->getOperands(),
                    [&](Value v) { return proposesSplit(v, false); }) &&
      llvm::none_of(op->getResults(),
                    [&](Value v) { return proposesSplit(v, true); }))
    return Decision(numFactors);
  // Every tensor of the op with its factors and current sharding.
  struct Entry {
    int index;
    Value value;
    const ShardingRule::TensorFactors *factors;
    const Sharding *sharding;
    SmallVector<AxisList> projected;
    bool isResult;
    StringRef origin;
  };
  SmallVector<Entry> entries;
  auto addEntry = [&](int index, Value v, const ShardingRule::TensorFactors &tf,
                      bool isResult) {
    if (!isTensor(v) || (!isResult && isRematerializable(v)))
      return;
    Entry e{
        index, v,        &tf, isResult ? current(v, false) : current(v, final),
        {},    isResult, ""};
    if (e.sharding) {
      project(*e.sharding, tf, rule, e.projected);
      auto it = states.find(v);
      if (it != states.end())
        e.origin = it->second.origin;
    }
    entries.push_back(std::move(e));
  };
  int index = 0;
  for (auto [operand, tf] : llvm::zip(op->getOperands(), rule.getOperands()))
    addEntry(index++, operand, tf, false);
  index = op->getNumOperands();
  for (auto [result, tf] : llvm::zip(op->getResults(), rule.getResults()))
    addEntry(index++, result, tf, true);

  double iterationPoints = 1;
  for (unsigned f = 0; f < numFactors; ++f)
    if (!ShapedType::isDynamic(rule.getFactorSize(f)))
      iterationPoints *= static_cast<double>(rule.getFactorSize(f));

  // Cost of giving factor f the axes of `c`: gathering the axes a tensor
  // loses (slicing is free), repeating work that is not split, and for a
  // reduction factor, reducing the partial results afterwards.
  auto cost = [&](unsigned f, ArrayRef<StringRef> axes) {
    double total = 0;
    for (const Entry &e : entries) {
      if (!e.sharding)
        continue;
      ArrayRef<StringRef> have = e.projected[f];
      size_t common = 0;
      while (common < have.size() && common < axes.size() &&
             have[common] == axes[common])
        ++common;
      ArrayRef<StringRef> lost = have.drop_front(common);
      if (lost.empty())
        continue;
      int64_t n = groupSize(lost);
      total += collectiveBytes(CollectiveKind::AllGather, n,
                               localBytes(e.value, *e.sharding) * n);
    }
    total += kBytesPerIterationPoint * iterationPoints /
             static_cast<double>(groupSize(axes));
    if (rule.getFactorKind(f) == FactorKind::Reduction && !axes.empty())
      for (const Entry &e : entries)
        if (e.isResult)
          total += collectiveBytes(
              CollectiveKind::AllReduce, groupSize(axes),
              localBytes(e.value,
                         e.sharding ? *e.sharding : Sharding::replicated(0)));
    return total;
  };
  // Proposals for f: every distinct non-empty list a tensor puts on it, and
  // nothing.
  auto proposals = [&](unsigned f, const llvm::StringSet<> &used) {
    SmallVector<Candidate> candidates = {{}};
    for (const Entry &e : entries) {
      if (!e.sharding || e.projected[f].empty())
        continue;
      if (llvm::any_of(e.projected[f],
                       [&](StringRef a) { return used.contains(a); }))
        continue;
      if (llvm::none_of(candidates, [&](const Candidate &c) {
            return c.axes == e.projected[f];
          }))
        candidates.push_back({e.projected[f], e.origin, e.index});
    }
    return candidates;
  };
  auto pick = [&](unsigned f, ArrayRef<Candidate> candidates,
                  double &bestCost) {
    const Candidate *best = &candidates.front();
    bestCost = cost(f, best->axes);
    for (const Candidate &c : candidates.drop_front()) {
      double c0 = cost(f, c.axes);
      // Ties go to more parallelism.
      if (c0 < bestCost - 1e-9 ||
          (c0 <= bestCost + 1e-9 && c.axes.size() > best->axes.size())) {
        best = &c;
        bestCost = c0;
      }
    }
    return *best;
  };

  // A mesh axis can split one factor only. Factors that would lose most by
  // not getting their best proposal choose first (a column-split weight
  // keeps its axis; a cheaply gathered activation gives it up).
  SmallVector<unsigned> order;
  SmallVector<double> regret(numFactors, 0);
  llvm::StringSet<> none;
  for (unsigned f = 0; f < numFactors; ++f) {
    if (rule.getFactorKind(f) == FactorKind::NeedReplication)
      continue;
    SmallVector<Candidate> candidates = proposals(f, none);
    double bestCost;
    pick(f, candidates, bestCost);
    regret[f] = cost(f, {}) - bestCost;
    order.push_back(f);
  }
  llvm::stable_sort(
      order, [&](unsigned a, unsigned b) { return regret[a] > regret[b]; });

  Decision decision(numFactors);
  llvm::StringSet<> used;
  for (unsigned f : order) {
    SmallVector<Candidate> candidates = proposals(f, used);
    double bestCost;
    decision[f] = pick(f, candidates, bestCost);
    for (StringRef a : decision[f].axes)
      used.insert(a);
  }

  // Trim until every tensor can express the decision as block splits.
  bool changed = true;
  while (changed) {
    changed = false;
    for (const Entry &e : entries) {
      for (const ShardingRule::DimFactors &factors : *e.factors) {
        bool previousFull = true;
        for (int64_t f : factors) {
          if (!decision[f].axes.empty() && !previousFull) {
            decision[f] = {};
            changed = true;
          }
          int64_t size = rule.getFactorSize(f);
          previousFull = !ShapedType::isDynamic(size) &&
                         size / groupSize(decision[f].axes) == 1;
        }
      }
    }
  }
  return decision;
}

//===----------------------------------------------------------------------===//
// Fixed point
//===----------------------------------------------------------------------===//

/// True when `to` only adds axes to `from`: same partial axes (or `from` has
/// none and `to` adds some to a result), and each dimension's axes extend.
static bool extends(const Sharding &from, const Sharding &to) {
  if (from.dims.size() != to.dims.size())
    return false;
  if (!from.partial.empty() && from.partial != to.partial)
    return false;
  for (auto [a, b] : llvm::zip(from.dims, to.dims))
    if (a.size() > b.size() || !std::equal(a.begin(), a.end(), b.begin()))
      return false;
  return from != to;
}

bool FunctionPropagator::extend(Value v, const Sharding &s, StringRef origin) {
  if (isRematerializable(v))
    return false;
  ValueState &state = states[v];
  if (state.fixed || !s.hasAxes())
    return false;
  if (state.known && !extends(state.sharding, s))
    return false;
  state.sharding = s;
  state.known = true;
  state.origin = origin;
  enqueueNeighbours(v);
  return true;
}

void FunctionPropagator::enqueueNeighbours(Value v) {
  if (Operation *def = v.getDefiningOp())
    enqueue(def);
  for (Operation *user : v.getUsers())
    enqueue(user);
}

void FunctionPropagator::propagate() {
  func.getFunctionBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    enqueue(op);
    // Ops inside a ruled op (linalg bodies) work on scalars.
    return ruleOf(op) ? WalkResult::skip() : WalkResult::advance();
  });
  while (!worklist.empty()) {
    Operation *op = worklist.front();
    worklist.pop_front();
    queued.erase(op);

    if (auto annotate = dyn_cast<AnnotateOp>(op)) {
      // The constraint also tells the producer what it should make.
      const ValueState &out = states[annotate.getResult()];
      extend(annotate.getInput(), out.sharding, out.origin);
      continue;
    }
    if (op->hasTrait<OpTrait::IsTerminator>() && op->getParentOp() == func) {
      for (auto [i, operand] : llvm::enumerate(op->getOperands()))
        if (i < resultConstraints.size() && resultConstraints[i] &&
            isTensor(operand))
          extend(operand, *resultConstraints[i], resultConstraintOrigins[i]);
      continue;
    }
    if (isa<ReshardOp>(op))
      continue;
    const ShardingRule *rule = ruleOf(op);
    if (!rule)
      continue;
    const Outcome &outcome = decide(op, *rule, /*final=*/false);
    StringRef origin = originOf(op, outcome.originSource);
    for (auto [operand, s] : llvm::zip(op->getOperands(), outcome.operands))
      if (s)
        extend(operand, *s, origin);
    for (auto [result, s] : llvm::zip(op->getResults(), outcome.results))
      if (s)
        extend(result, *s, origin);
  }
}

//===----------------------------------------------------------------------===//
// Finalization
//===----------------------------------------------------------------------===//

Value FunctionPropagator::reshardTo(Value v, const Sharding &target) {
  ShardingAttr attr = attrOf(target);
  auto key = std::make_pair(v, attr);
  auto it = reshards.find(key);
  if (it != reshards.end())
    return it->second;
  OpBuilder b(func->getContext());
  if (Operation *def = v.getDefiningOp())
    b.setInsertionPointAfter(def);
  else
    b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
  Value r = ReshardOp::create(b, v.getLoc(), v, attr);
  finals[r] = target;
  reshards[key] = r;
  return r;
}

bool FunctionPropagator::splitTokensOfReduction(
    Operation *op, const ShardingRule &rule, Decision &decision,
    function_ref<const Sharding &(Value)> finalOf) {
  llvm::StringSet<> used;
  for (const Candidate &c : decision)
    for (StringRef a : c.axes)
      used.insert(a);
  for (auto [operand, tf] : llvm::zip(op->getOperands(), rule.getOperands())) {
    if (!isTensor(operand))
      continue;
    AxisList pending = finalOf(operand).partial;
    if (pending.empty() ||
        llvm::any_of(pending, [&](StringRef a) { return used.contains(a); }))
      continue;
    // The token dimensions: every dimension but the last (the features).
    int64_t n = groupSize(pending);
    for (size_t d = 0; d + 1 < tf.size(); ++d) {
      if (tf[d].size() != 1)
        continue;
      int64_t f = tf[d].front();
      int64_t size = rule.getFactorSize(f);
      if (rule.getFactorKind(f) != FactorKind::Parallel ||
          !decision[f].axes.empty() || ShapedType::isDynamic(size) ||
          size % n != 0)
        continue;
      decision[f].axes = pending;
      return true;
    }
  }
  return false;
}

/// True when `v` and the rematerializable values it is made of each have one
/// use: the chain belongs to a single user and can simply take its sharding.
static bool soleChain(Value v) {
  if (!v.hasOneUse())
    return false;
  return llvm::all_of(v.getDefiningOp()->getOperands(), [](Value operand) {
    return !isRematerializable(operand) || soleChain(operand);
  });
}

Value FunctionPropagator::rematerialize(Value v, const Sharding &target) {
  ShardingAttr attr = attrOf(target);
  auto key = std::make_pair(v, attr);
  auto it = reshards.find(key);
  if (it != reshards.end())
    return it->second;
  Operation *def = v.getDefiningOp();
  // A chain with this single user takes the sharding in place: no clone.
  if (soleChain(v)) {
    std::function<void(Value, const Sharding &)> retarget =
        [&](Value value, const Sharding &s) {
          finals[value] = s;
          Operation *producer = value.getDefiningOp();
          resultOrigins[producer] = rematerializedFor;
          Sharding operandTarget = s;
          operandTarget.partial.clear();
          for (Value operand : producer->getOperands())
            if (isRematerializable(operand))
              retarget(operand, operandTarget);
        };
    retarget(v, target);
    reshards[key] = v;
    return v;
  }
  OpBuilder b(def);
  Operation *clone = b.clone(*def);
  Sharding operandTarget = target;
  operandTarget.partial.clear();
  for (OpOperand &use : clone->getOpOperands())
    if (isRematerializable(use.get()))
      use.set(rematerialize(use.get(), operandTarget));
  Value r = clone->getResult(cast<OpResult>(v).getResultNumber());
  finals[r] = target;
  resultOrigins[clone] = rematerializedFor;
  reshards[key] = r;
  return r;
}

LogicalResult FunctionPropagator::finalize() {
  for (BlockArgument arg : func.getArguments())
    if (isTensor(arg)) {
      const Sharding *s = current(arg, false);
      finals[arg] = s ? *s
                      : Sharding::replicated(
                            cast<RankedTensorType>(arg.getType()).getRank());
    }
  auto finalOf = [&](Value v) -> const Sharding & {
    if (const Sharding *s = current(v, true))
      return *s;
    return replicatedOf(cast<RankedTensorType>(v.getType()).getRank());
  };
  auto require = [&](OpOperand &use, const Sharding &target) {
    if (finalOf(use.get()) == target)
      return;
    use.set(isRematerializable(use.get()) ? rematerialize(use.get(), target)
                                          : reshardTo(use.get(), target));
  };

  SmallVector<Operation *> ops;
  func.getFunctionBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    ops.push_back(op);
    return ruleOf(op) ? WalkResult::skip() : WalkResult::advance();
  });
  for (Operation *op : ops) {
    if (auto annotate = dyn_cast<AnnotateOp>(op)) {
      Sharding target = Sharding::fromAttr(annotate.getSharding());
      rematerializedFor = states[annotate.getResult()].origin;
      require(annotate->getOpOperand(0), target);
      finals[annotate.getResult()] = target;
      continue;
    }
    if (auto reshard = dyn_cast<ReshardOp>(op)) {
      finals[reshard.getResult()] = Sharding::fromAttr(reshard.getSharding());
      continue;
    }
    if (op->hasTrait<OpTrait::IsTerminator>() && op->getParentOp() == func) {
      for (OpOperand &use : op->getOpOperands()) {
        unsigned i = use.getOperandNumber();
        if (!isTensor(use.get()))
          continue;
        if (i < resultConstraints.size() && resultConstraints[i]) {
          rematerializedFor = resultConstraintOrigins[i];
          require(use, *resultConstraints[i]);
        }
      }
      continue;
    }
    // A size query reads shape, not data: any sharding will do (partitioning
    // turns a split dimension's local size back into the global one).
    if (isa<tensor::DimOp>(op))
      continue;
    const ShardingRule *rule = ruleOf(op);
    if (!rule) {
      bool touches = llvm::any_of(op->getOperands(), isTensor) ||
                     llvm::any_of(op->getResults(), isTensor);
      if (!touches)
        continue;
      if (!isa<TPDialect>(op->getDialect()) &&
          !op->hasTrait<OpTrait::IsTerminator>())
        op->emitRemark() << "no sharding rule for '" << op->getName()
                         << "'; its tensors are replicated";
      for (OpOperand &use : op->getOpOperands())
        if (isTensor(use.get()))
          require(use,
                  Sharding::replicated(
                      cast<RankedTensorType>(use.get().getType()).getRank()));
      for (Value r : op->getResults())
        if (isTensor(r))
          finals[r] = Sharding::replicated(
              cast<RankedTensorType>(r.getType()).getRank());
      continue;
    }
    const Outcome *outcome = &decide(op, *rule, /*final=*/true);
    if (outcome->originSource >= 0)
      resultOrigins[op] = originOf(op, outcome->originSource);
    rematerializedFor = resultOrigins.lookup(op);
    // Sequence parallelism may change the decision.
    Outcome adjusted;
    // Pending sums flow on through ops linear in them (same split, same
    // pending axes); any other use reduces them first.
    SmallVector<bool> partialIn;
    AxisList passedPartial;
    auto analyze = [&]() -> LogicalResult {
      partialIn.assign(op->getNumOperands(), false);
      passedPartial.clear();
      std::optional<AxisList> pending;
      bool samePending = true;
      for (auto [use, s] : llvm::zip(op->getOpOperands(), outcome->operands)) {
        if (!isTensor(use.get()))
          continue;
        if (!s)
          return op->emitOpError(
              "internal error: inexpressible operand sharding");
        const Sharding &have = finalOf(use.get());
        if (have.partial.empty() || have.dims != s->dims)
          continue;
        partialIn[use.getOperandNumber()] = true;
        if (pending && *pending != have.partial)
          samePending = false;
        pending = have.partial;
      }
      if (pending && samePending && isLinearIn(op, partialIn))
        passedPartial = *pending;
      else
        partialIn.assign(partialIn.size(), false);
      return success();
    };
    if (failed(analyze()))
      return failure();
    // With sequence parallelism, a sum that this op must reduce is
    // reduce-scattered over the tokens instead.
    if (options.sequenceParallel && passedPartial.empty()) {
      Decision decision = outcome->decision;
      if (splitTokensOfReduction(op, *rule, decision, finalOf)) {
        adjusted = makeOutcome(op, *rule, std::move(decision));
        outcome = &adjusted;
        if (failed(analyze()))
          return failure();
      }
    }
    for (auto [use, implied] :
         llvm::zip(op->getOpOperands(), outcome->operands)) {
      if (!isTensor(use.get()))
        continue;
      if (!partialIn[use.getOperandNumber()]) {
        require(use, *implied);
        continue;
      }
      Sharding target = *implied;
      target.partial = passedPartial;
      require(use, target);
    }
    for (auto [result, implied] :
         llvm::zip(op->getResults(), outcome->results)) {
      if (!isTensor(result))
        continue;
      if (!implied)
        return op->emitOpError("internal error: inexpressible result sharding");
      Sharding &s = finals[result];
      s = *implied;
      for (StringRef axis : passedPartial)
        if (!llvm::is_contained(s.partial, axis))
          s.partial.push_back(axis);
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

void FunctionPropagator::write() {
  MLIRContext *ctx = func->getContext();
  Builder b(ctx);
  StringAttr shardingsName = b.getStringAttr(TPDialect::kShardingsAttrName);
  auto originOf = [&](Value v) -> StringRef {
    auto it = states.find(v);
    return it != states.end() && it->second.known ? it->second.origin
                                                  : StringRef();
  };
  func.getFunctionBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    bool ruled = ruleOf(op) != nullptr;
    if (isa<AnnotateOp, ReshardOp>(op) || op->getNumResults() == 0)
      return ruled ? WalkResult::skip() : WalkResult::advance();
    if (llvm::none_of(op->getResults(), isTensor))
      return ruled ? WalkResult::skip() : WalkResult::advance();
    SmallVector<Attribute> shardings, origins;
    for (Value r : op->getResults()) {
      auto it = finals.find(r);
      ShardingAttr attr;
      if (!isTensor(r))
        attr = attrOf(Sharding());
      else if (it != finals.end() &&
               it->second.dims.size() ==
                   static_cast<size_t>(
                       cast<RankedTensorType>(r.getType()).getRank()))
        attr = attrOf(it->second);
      else
        attr = attrOf(Sharding::replicated(
            cast<RankedTensorType>(r.getType()).getRank()));
      shardings.push_back(attr);
      if (!options.recordOrigins)
        continue;
      StringRef origin = originOf(r);
      if (origin.empty())
        origin = resultOrigins.lookup(op);
      origins.push_back(
          b.getStringAttr(origin.empty() ? "default (replicated)" : origin));
    }
    ArrayAttr array;
    if (shardings.size() == 1) {
      auto sharding = cast<ShardingAttr>(shardings.front());
      ArrayAttr &cached = singleResultArrays[sharding];
      if (!cached)
        cached = b.getArrayAttr(shardings);
      array = cached;
    } else {
      array = b.getArrayAttr(shardings);
    }
    op->setAttr(shardingsName, array);
    if (options.recordOrigins)
      op->setAttr(TPDialect::kOriginsAttrName, b.getArrayAttr(origins));
    return ruled ? WalkResult::skip() : WalkResult::advance();
  });

  // All argument attributes at once: setting them one by one rebuilds the
  // whole list each time (quadratic in the argument count).
  SmallVector<DictionaryAttr> argAttrs;
  bool argsChanged = false;
  for (auto [index, arg] : llvm::enumerate(func.getArguments())) {
    NamedAttrList attrs(func.getArgAttrDict(index));
    if (isTensor(arg)) {
      if (!attrs.get(TPDialect::kShardingAttrName)) {
        attrs.set(TPDialect::kShardingAttrName, attrOf(finals[arg]));
        argsChanged = true;
      }
      if (options.recordOrigins) {
        StringRef origin = originOf(arg);
        attrs.set(
            TPDialect::kOriginAttrName,
            b.getStringAttr(origin.empty() ? "default (replicated)" : origin));
        argsChanged = true;
      }
    }
    argAttrs.push_back(attrs.getDictionary(ctx));
  }
  if (argsChanged)
    func.setAllArgAttrs(argAttrs);
  // Open results take what is returned.
  Operation *ret = func.getFunctionBody().back().getTerminator();
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    if (func.getResultAttr(i, TPDialect::kShardingAttrName) ||
        i >= ret->getNumOperands() || !isTensor(ret->getOperand(i)))
      continue;
    Value v = ret->getOperand(i);
    Sharding s = finals.count(v)
                     ? finals[v]
                     : Sharding::replicated(
                           cast<RankedTensorType>(v.getType()).getRank());
    func.setResultAttr(i, TPDialect::kShardingAttrName, attrOf(s));
  }
}

ShardingAttr FunctionPropagator::attrOf(const Sharding &s) {
  SmallVector<const void *, 16> key;
  appendKey(s, key);
  auto it = attrs.find(ArrayRef<const void *>(key));
  if (it != attrs.end())
    return it->second;
  ShardingAttr attr = s.toAttr(func->getContext(), meshRef);
  attrs[persist(key)] = attr;
  return attr;
}

const ShardingRule *FunctionPropagator::ruleOf(Operation *op) {
  auto [it, inserted] = rules.try_emplace(op, nullptr);
  if (inserted)
    it->second = ruleCache.get(op);
  return it->second;
}

LogicalResult FunctionPropagator::run() {
  seed();
  propagate();
  if (failed(finalize()))
    return failure();
  // Producers whose every use now reads a clone in the right sharding.
  SmallVector<Operation *> dead;
  func.getFunctionBody().walk([&](Operation *op) {
    if (op->getNumResults() == 1 && op->use_empty() &&
        isRematerializable(op->getResult(0)))
      dead.push_back(op);
  });
  while (!dead.empty()) {
    Operation *op = dead.pop_back_val();
    SmallVector<Value> operands(op->getOperands());
    // Nothing may keep the erased op's address: a new op could get it.
    op->walk([&](Operation *nested) { rules.erase(nested); });
    ruleCache.forget(op);
    op->erase();
    for (Value operand : operands)
      if (operand.use_empty() && isRematerializable(operand))
        dead.push_back(operand.getDefiningOp());
  }
  write();
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// The mesh a function's constraints use; an error names two places that
/// disagree. Null when the function names none.
FailureOr<MeshOp> findFunctionMesh(FunctionOpInterface func,
                                   SymbolTableCollection &symbols) {
  FlatSymbolRefAttr found;
  std::optional<Location> foundLoc;
  std::string foundWhat;
  auto consider = [&](ShardingAttr s, Location loc,
                      const std::string &what) -> LogicalResult {
    if (!s)
      return success();
    if (!found) {
      found = s.getMesh();
      foundLoc = loc;
      foundWhat = what;
      return success();
    }
    if (found == s.getMesh())
      return success();
    InFlightDiagnostic diag = emitError(loc)
                              << what << " uses mesh " << s.getMesh() << " but "
                              << foundWhat << " uses " << found
                              << "; a function is partitioned over one mesh";
    diag.attachNote(*foundLoc) << foundWhat << " is here";
    return failure();
  };
  std::string name = ("@" + func.getName()).str();
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (failed(consider(func.getArgAttrOfType<ShardingAttr>(
                            i, TPDialect::kShardingAttrName),
                        func.getArgument(i).getLoc(),
                        "argument #" + std::to_string(i) + " of " + name)))
      return failure();
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (failed(consider(func.getResultAttrOfType<ShardingAttr>(
                            i, TPDialect::kShardingAttrName),
                        func.getLoc(),
                        "result #" + std::to_string(i) + " of " + name)))
      return failure();
  WalkResult walk = func.getFunctionBody().walk([&](Operation *op) {
    return failed(consider(getOwnSharding(op), op->getLoc(),
                           "'" + op->getName().getStringRef().str() + "'"))
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (!found)
    return MeshOp();
  return symbols.lookupNearestSymbolFrom<MeshOp>(func, found.getAttr());
}

/// Inlines every call to a function defined in the module, so that shardings
/// flow through callees; a callee's argument and result constraints become
/// tp.annotate ops at the call. A call cycle is an error.
LogicalResult inlineCalls(ModuleOp module, SymbolTableCollection &symbols) {
  // A call cycle cannot be inlined: find one first (depth-first search over
  // the defined functions, 1 = on the stack, 2 = done).
  DenseMap<Operation *, int> state;
  std::function<LogicalResult(FunctionOpInterface)> visit =
      [&](FunctionOpInterface func) -> LogicalResult {
    state[func] = 1;
    WalkResult walk = func->walk([&](CallOpInterface call) {
      auto callee = dyn_cast_or_null<FunctionOpInterface>(
          call.resolveCallableInTable(&symbols));
      if (!callee || callee.isExternal())
        return WalkResult::advance();
      int seen = state.lookup(callee);
      if (seen == 1) {
        call->emitOpError()
            << "is part of a call cycle through @" << callee.getName()
            << "; shardings are propagated through calls by "
               "inlining them, which a cycle prevents";
        return WalkResult::interrupt();
      }
      if (seen == 0 && failed(visit(callee)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    state[func] = 2;
    return failure(walk.wasInterrupted());
  };
  for (auto func : module.getOps<FunctionOpInterface>())
    if (!func.isExternal() && state.lookup(func) == 0 && failed(visit(func)))
      return failure();

  InlinerInterface interface(module.getContext());
  InlinerConfig config;
  // Each round inlines one level of calls.
  for (;;) {
    SmallVector<CallOpInterface> calls;
    module.walk([&](CallOpInterface call) {
      auto callee = dyn_cast_or_null<FunctionOpInterface>(
          call.resolveCallableInTable(&symbols));
      if (callee && !callee.isExternal())
        calls.push_back(call);
    });
    if (calls.empty())
      return success();
    for (CallOpInterface call : calls) {
      auto callee =
          cast<FunctionOpInterface>(call.resolveCallableInTable(&symbols));
      OpBuilder b(call);
      // Keep the callee's constraints as annotations of the inlined values.
      SmallVector<Value> operands(call.getArgOperands());
      for (auto [i, operand] : llvm::enumerate(operands))
        if (auto s = callee.getArgAttrOfType<ShardingAttr>(
                i, TPDialect::kShardingAttrName);
            s && isTensor(operand))
          call->setOperand(i, AnnotateOp::create(b, call.getLoc(), operand, s));
      b.setInsertionPointAfter(call);
      for (auto [i, result] : llvm::enumerate(call->getResults())) {
        auto s = callee.getResultAttrOfType<ShardingAttr>(
            i, TPDialect::kShardingAttrName);
        if (!s || !isTensor(result))
          continue;
        auto annotate = AnnotateOp::create(b, call.getLoc(), result, s);
        result.replaceAllUsesExcept(annotate.getResult(), annotate);
      }
      Operation *callOp = call;
      if (failed(inlineCall(interface, config.getCloneCallback(), call,
                            cast<CallableOpInterface>(callee.getOperation()),
                            callee.getCallableRegion())))
        return callOp->emitOpError("cannot be inlined to propagate shardings "
                                   "through its callee");
      callOp->erase();
    }
  }
}

struct PropagatePass : public tp::impl::PropagatePassBase<PropagatePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    if (failed(inlineCalls(module, symbols)))
      return signalPassFailure();
    // A module with one mesh gives it to functions that name none.
    SmallVector<MeshOp> meshes(module.getOps<MeshOp>());
    for (auto func : module.getOps<FunctionOpInterface>()) {
      if (func.isExternal() || func->hasAttr(TPDialect::kSpmdAttrName))
        continue;
      FailureOr<MeshOp> mesh = findFunctionMesh(func, symbols);
      if (failed(mesh))
        return signalPassFailure();
      if (!*mesh) {
        if (meshes.size() != 1)
          continue;
        *mesh = meshes.front();
      }
      if (failed(checkSingleBlock(func)))
        return signalPassFailure();
      PropagatePassOptions options{replicateOpenBoundaries, recordOrigins,
                                   sequenceParallel};
      FunctionPropagator propagator(func, *mesh, options);
      if (failed(propagator.run()))
        return signalPassFailure();
    }
  }
};

} // namespace
