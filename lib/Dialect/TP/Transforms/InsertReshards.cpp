//===- InsertReshards.cpp - Make every op's operands what it needs --------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Propagation's fixed point gives every value a sharding, but an op whose
// tensors disagree needs some of its operands in another one. In program
// order, each op with a rule decides its factors (FactorDecision.h) from its
// operands' final shardings and its results' propagated ones; the results
// take the decision, and an operand whose sharding differs gets a
// tp.reshard (one per value and target sharding), or, when it carries no
// data (tensor.empty, fills, splat constants), a clone made in the target
// sharding. A pending sum flows on through an op linear in it; any other use
// reduces it first, or with `sequence-parallel` reduce-scatters it over the
// tokens. Ops without a rule are replicated, with a remark.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Passes.h"

#include "tp/Dialect/TP/IR/TPInterfaces.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Dialect/TP/Transforms/FactorDecision.h"
#include "tp/Dialect/TP/Transforms/Structure.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/StringSaver.h"
#include <deque>
#include <functional>

namespace mlir::tp {
#define GEN_PASS_DEF_INSERTRESHARDSPASS
#include "tp/Dialect/TP/Transforms/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

bool isTensor(Value v) { return isa<RankedTensorType>(v.getType()); }

unsigned rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

} // namespace

class mlir::tp::detail::ReshardInserter {
public:
  ReshardInserter(FunctionOpInterface func, MeshOp mesh,
                  const InsertReshardsPassOptions &options,
                  ShardingRuleCache *sharedRules)
      : func(func), options(options),
        meshRef(FlatSymbolRefAttr::get(mesh.getSymNameAttr())), axes(mesh),
        decisions(decider, axes),
        ruleCache(sharedRules ? *sharedRules : ownRuleCache),
        attrCache(func->getContext(), meshRef),
        shardingsName(StringAttr::get(func->getContext(),
                                      TPDialect::kShardingsAttrName)) {}

  LogicalResult run();
  /// The decisions only: every op's choice recorded, and every operand the
  /// insertion would change (for `insertDecided`), the IR left as it is.
  LogicalResult decide() {
    dryRun = true;
    return failure(failed(checkMesh()) || failed(finalize()));
  }
  /// What `run` does after `decide` on the same IR, without deciding
  /// again: the kept changes made in order, then the same clean-up and
  /// output.
  LogicalResult insertDecided();
  void setPlan(const OpChoices *p, OpChoices *record) {
    plan = p ? &p->decisions : nullptr;
    passes = p ? &p->passes : nullptr;
    decisions.setPlan(plan);
    made = record;
  }

private:
  LogicalResult checkMesh();
  LogicalResult finalize();
  void eraseDeadProducers();
  void write();

  /// The sharding propagation gave `v` (its `tp.sharding` or `tp.shardings`
  /// entry); null when it has none.
  const TensorSharding *given(Value v);
  /// The constraint `v`'s sharding came from, as `record-origins` wrote it.
  StringRef givenOrigin(Value v);
  /// `v`'s final sharding when it has one, else the given one.
  const TensorSharding *current(Value v) {
    auto it = finals.find(v);
    return it != finals.end() ? it->second : given(v);
  }
  const TensorSharding &finalOf(Value v) {
    if (const TensorSharding *s = current(v))
      return *s;
    return replicatedOf(rankOf(v));
  }
  const TensorSharding &replicatedOf(unsigned rank) {
    while (replicatedByRank.size() <= rank)
      replicatedByRank.push_back(
          TensorSharding::replicated(replicatedByRank.size()));
    return replicatedByRank[rank];
  }
  /// Makes `use` read its value in `target`.
  void require(OpOperand &use, const TensorSharding &target);
  Value reshardTo(Value v, const TensorSharding &target);
  Value rematerialize(Value v, const TensorSharding &target);
  /// Sequence parallelism: an op about to reduce a pending sum computes on
  /// tokens split over the sum's axes instead (the reduction becomes a
  /// reduce_scatter; the tokens are gathered where a split weight needs them
  /// whole).
  bool splitTokensOfReduction(Operation *op, const ShardingRule &rule,
                              FactorDecision &decision);
  /// The origin of operand (or numOperands + result) `source` of `op`.
  StringRef originOf(Operation *op, int source);
  const ShardingRule *ruleOf(Operation *op);
  ShardingAttr attrOf(const TensorSharding &s) { return attrCache.get(s); }
  /// `s`, stored once per distinct sharding (with the given ones, keyed by
  /// attribute): pointers to it stay valid.
  const TensorSharding *intern(const TensorSharding &s) {
    return attrCache.intern(s);
  }
  const TensorSharding *intern(ShardingAttr attr, const TensorSharding &s) {
    return attrCache.intern(attr, s);
  }

  FunctionOpInterface func;
  // A copy: kept decisions (DecidedReshards) outlive the caller's options.
  InsertReshardsPassOptions options;
  FlatSymbolRefAttr meshRef;
  MeshAxes axes;
  CommunicationCostDecider decider;
  OpDecisions decisions;
  const DenseMap<Operation *, FactorDecision> *plan = nullptr;
  const DenseMap<Operation *, PendingPass> *passes = nullptr;
  /// Where to record the choices made, when asked.
  OpChoices *made = nullptr;
  /// Decide only (`decide`): `require` changes nothing. The decisions do not
  /// depend on the reshards made for the ops before: an op reads its
  /// operands' final shardings, which reshards of other uses leave alone.
  bool dryRun = false;
  /// Deciding to insert later (`insertDecided`): what `require` would do, in
  /// order, with the origin it would give.
  struct Required {
    OpOperand *use;
    TensorSharding target;
    StringRef origin;
  };
  std::vector<Required> required;

  /// Each value's final sharding, stored once per distinct sharding
  /// (`intern`): a deep model's map of copies (nested vectors) was a third
  /// of deciding, in cache misses.
  DenseMap<Value, const TensorSharding *> finals;
  DenseMap<Operation *, StringRef> resultOrigins;
  /// Origin given to producers cloned for the op being finalized.
  StringRef rematerializedFor;
  std::deque<TensorSharding> replicatedByRank;
  ShardingRuleCache ownRuleCache;
  ShardingRuleCache &ruleCache;
  ShardingAttrCache attrCache;
  /// `tp.shardings`, looked up among an op's discardable attributes alone
  /// (by name, an op's inherent attributes are searched first).
  StringAttr shardingsName;
  llvm::MapVector<std::pair<Value, ShardingAttr>, Value> reshards;
  llvm::BumpPtrAllocator allocator;
  llvm::StringSaver saver{allocator};
};

using mlir::tp::detail::ReshardInserter;

//===----------------------------------------------------------------------===//
// What propagation gave
//===----------------------------------------------------------------------===//

const TensorSharding *ReshardInserter::given(Value v) {
  ShardingAttr attr;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner()->getParentOp() != func.getOperation())
      return nullptr;
    attr = func.getArgAttrOfType<ShardingAttr>(arg.getArgNumber(),
                                               TPDialect::kShardingAttrName);
  } else {
    Operation *def = v.getDefiningOp();
    attr = getOwnSharding(def);
    if (!attr)
      if (auto shardings = dyn_cast_or_null<ArrayAttr>(
              def->getDiscardableAttr(shardingsName));
          shardings && shardings.size() == def->getNumResults())
        attr = dyn_cast<ShardingAttr>(
            shardings[cast<OpResult>(v).getResultNumber()]);
  }
  if (!attr || !isTensor(v) || attr.getRank() != rankOf(v))
    return nullptr;
  // Converted once per attribute.
  return attrCache.intern(attr);
}

StringRef ReshardInserter::givenOrigin(Value v) {
  if (!options.recordOrigins)
    return StringRef();
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner()->getParentOp() != func.getOperation())
      return StringRef();
    auto origin = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                    TPDialect::kOriginAttrName);
    return origin ? origin.getValue() : StringRef();
  }
  Operation *def = v.getDefiningOp();
  if (getOwnSharding(def))
    return saver.save(def->getName().getStringRef() + " at " +
                      formatLocation(def->getLoc()));
  auto origins = def->getAttrOfType<ArrayAttr>(TPDialect::kOriginsAttrName);
  unsigned i = cast<OpResult>(v).getResultNumber();
  if (!origins || i >= origins.size())
    return StringRef();
  auto origin = dyn_cast<StringAttr>(origins[i]);
  return origin ? origin.getValue() : StringRef();
}

StringRef ReshardInserter::originOf(Operation *op, int source) {
  if (source < 0)
    return StringRef();
  unsigned numOperands = op->getNumOperands();
  return givenOrigin(static_cast<unsigned>(source) < numOperands
                         ? op->getOperand(source)
                         : op->getResult(source - numOperands));
}

/// Every sharding the function carries names `mesh`.
LogicalResult ReshardInserter::checkMesh() {
  auto check = [&](Attribute attr, function_ref<InFlightDiagnostic()> emit) {
    auto s = dyn_cast_or_null<ShardingAttr>(attr);
    if (!s || s.getMesh() == meshRef)
      return success();
    emit() << "has a sharding over " << s.getMesh()
           << " in a function partitioned over " << meshRef;
    return failure();
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (failed(check(func.getArgAttr(i, TPDialect::kShardingAttrName), [&] {
          return emitError(func.getArgument(i).getLoc())
                 << "argument #" << i << " ";
        })))
      return failure();
  WalkResult walk = func.getFunctionBody().walk([&](Operation *op) {
    auto shardings =
        dyn_cast_or_null<ArrayAttr>(op->getDiscardableAttr(shardingsName));
    if (!shardings)
      return WalkResult::advance();
    for (Attribute s : shardings)
      if (failed(check(s, [&] { return op->emitOpError(); })))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// Reshards and clones
//===----------------------------------------------------------------------===//

void ReshardInserter::require(OpOperand &use, const TensorSharding &target) {
  if (finalOf(use.get()) == target)
    return;
  if (dryRun) {
    required.push_back({&use, target, rematerializedFor});
    return;
  }
  use.set(isRematerializable(use.get()) ? rematerialize(use.get(), target)
                                        : reshardTo(use.get(), target));
}

Value ReshardInserter::reshardTo(Value v, const TensorSharding &target) {
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
  finals[r] = intern(attr, target);
  reshards[key] = r;
  return r;
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

Value ReshardInserter::rematerialize(Value v, const TensorSharding &target) {
  ShardingAttr attr = attrOf(target);
  auto key = std::make_pair(v, attr);
  auto it = reshards.find(key);
  if (it != reshards.end())
    return it->second;
  Operation *def = v.getDefiningOp();
  // A chain with this single user takes the sharding in place: no clone.
  if (soleChain(v)) {
    std::function<void(Value, const TensorSharding &)> retarget =
        [&](Value value, const TensorSharding &s) {
          finals[value] = intern(s);
          Operation *producer = value.getDefiningOp();
          resultOrigins[producer] = rematerializedFor;
          TensorSharding operandTarget = s;
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
  TensorSharding operandTarget = target;
  operandTarget.partial.clear();
  for (OpOperand &use : clone->getOpOperands())
    if (isRematerializable(use.get()))
      use.set(rematerialize(use.get(), operandTarget));
  Value r = clone->getResult(cast<OpResult>(v).getResultNumber());
  finals[r] = intern(attr, target);
  resultOrigins[clone] = rematerializedFor;
  reshards[key] = r;
  return r;
}

bool ReshardInserter::splitTokensOfReduction(Operation *op,
                                             const ShardingRule &rule,
                                             FactorDecision &decision) {
  llvm::StringSet<> used;
  for (const AxisList &factorAxes : decision.axes)
    for (StringRef a : factorAxes)
      used.insert(a);
  for (auto [operand, tf] : llvm::zip(op->getOperands(), rule.getOperands())) {
    if (!isTensor(operand))
      continue;
    const AxisList &pending = finalOf(operand).partial;
    if (pending.empty() ||
        llvm::any_of(pending, [&](StringRef a) { return used.contains(a); }))
      continue;
    // The token dimensions: every dimension but the last (the features).
    int64_t n = axes.groupSize(pending);
    for (size_t d = 0; d + 1 < tf.size(); ++d) {
      if (tf[d].size() != 1)
        continue;
      int64_t f = tf[d].front();
      int64_t size = rule.getFactorSize(f);
      if (rule.getFactorKind(f) != FactorKind::Parallel ||
          !decision.axes[f].empty() || ShapedType::isDynamic(size) ||
          size % n != 0)
        continue;
      decision.axes[f] = pending;
      return true;
    }
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Finalization
//===----------------------------------------------------------------------===//

LogicalResult ReshardInserter::finalize() {
  for (BlockArgument arg : func.getArguments())
    if (isTensor(arg))
      finals[arg] = &finalOf(arg);
  std::string funcName = ("@" + func.getName()).str();
  Operation *ret = func.getFunctionBody().back().getTerminator();
  // The function's result constraints.
  SmallVector<std::optional<TensorSharding>> resultConstraints;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto attr =
        func.getResultAttrOfType<ShardingAttr>(i, TPDialect::kShardingAttrName);
    if (attr && i < ret->getNumOperands() && isTensor(ret->getOperand(i)) &&
        attr.getRank() == rankOf(ret->getOperand(i)))
      resultConstraints.push_back(TensorSharding::fromAttr(attr));
    else
      resultConstraints.push_back(std::nullopt);
  }

  SmallVector<Operation *> ops;
  size_t numResults = 0;
  func.getFunctionBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    ops.push_back(op);
    numResults += op->getNumResults();
    return ruleOf(op) ? WalkResult::skip() : WalkResult::advance();
  });
  // Sized once: growing moves every sharding (nested vectors) each time, a
  // tenth of the pass on a deep model.
  finals.reserve(finals.size() + numResults);
  if (made)
    made->decisions.reserve(made->decisions.size() + ops.size());
  auto decisionInput = [&](Value v, bool isResult) {
    return isResult ? given(v) : current(v);
  };
  for (Operation *op : ops) {
    if (auto annotate = dyn_cast<AnnotateOp>(op)) {
      TensorSharding target = TensorSharding::fromAttr(annotate.getSharding());
      rematerializedFor = givenOrigin(annotate.getResult());
      require(annotate->getOpOperand(0), target);
      finals[annotate.getResult()] = intern(annotate.getSharding(), target);
      continue;
    }
    if (auto reshard = dyn_cast<ReshardOp>(op)) {
      finals[reshard.getResult()] =
          intern(reshard.getSharding(),
                 TensorSharding::fromAttr(reshard.getSharding()));
      continue;
    }
    if (op == ret) {
      for (OpOperand &use : op->getOpOperands()) {
        unsigned i = use.getOperandNumber();
        if (i < resultConstraints.size() && resultConstraints[i]) {
          if (options.recordOrigins)
            rematerializedFor =
                saver.save("result #" + Twine(i) + " of " + funcName);
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
          require(use, replicatedOf(rankOf(use.get())));
      for (Value r : op->getResults())
        if (isTensor(r))
          finals[r] = &replicatedOf(rankOf(r));
      continue;
    }
    const OpOutcome *outcome = &decisions.decide(op, *rule, decisionInput);
    if (outcome->originSource >= 0)
      resultOrigins[op] = originOf(op, outcome->originSource);
    rematerializedFor = resultOrigins.lookup(op);
    // Sequence parallelism may change the decision.
    OpOutcome adjusted;
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
        const TensorSharding &have = finalOf(use.get());
        if (have.partial.empty() || have.dims != s->dims)
          continue;
        // A pending sum read by several ops is reduced once, where it is
        // made, not once per reader (LayerNorm's backward reads its output
        // gradient three times: one all-reduce instead of three).
        if (!llvm::all_equal(llvm::map_range(
                use.get().getUsers(), [](Operation *user) { return user; })))
          continue;
        partialIn[use.getOperandNumber()] = true;
        if (pending && *pending != have.partial)
          samePending = false;
        pending = have.partial;
      }
      // A pending axis may not also split (or be pending in) what the op
      // computes: x pending over "tp" times a weight split over "tp" is no
      // term of any sum. Such operands are reduced first.
      auto usesPendingAxis = [&](const std::optional<TensorSharding> &s) {
        if (!s)
          return false;
        for (const AxisList &axes : s->dims)
          for (StringRef axis : axes)
            if (llvm::is_contained(*pending, axis))
              return true;
        return llvm::any_of(s->partial, [&](StringRef axis) {
          return llvm::is_contained(*pending, axis);
        });
      };
      if (pending && samePending && isLinearIn(op, partialIn) &&
          llvm::none_of(outcome->operands, usesPendingAxis) &&
          llvm::none_of(outcome->results, usesPendingAxis))
        passedPartial = *pending;
      else
        partialIn.assign(partialIn.size(), false);
      return success();
    };
    // A planned op carries on the pending sums the plan says, and reduces
    // every other.
    bool planned = plan && plan->count(op);
    if (planned) {
      partialIn.assign(op->getNumOperands(), false);
      passedPartial.clear();
      if (passes)
        if (auto it = passes->find(op); it != passes->end()) {
          partialIn.assign(it->second.operands.begin(),
                           it->second.operands.end());
          passedPartial = it->second.axes;
        }
    } else if (failed(analyze())) {
      return failure();
    }
    // With sequence parallelism, a sum that this op must reduce is
    // reduce-scattered over the tokens instead.
    if (!planned && options.sequenceParallel && passedPartial.empty()) {
      FactorDecision decision = outcome->decision;
      if (splitTokensOfReduction(op, *rule, decision)) {
        adjusted = decisions.makeOutcome(op, *rule, std::move(decision));
        outcome = &adjusted;
        if (failed(analyze()))
          return failure();
      }
    }
    if (made) {
      made->decisions[op] = outcome->decision;
      if (!passedPartial.empty())
        made->passes[op] = {partialIn, passedPartial};
    }
    for (auto [use, implied] :
         llvm::zip(op->getOpOperands(), outcome->operands)) {
      if (!isTensor(use.get()))
        continue;
      if (!partialIn[use.getOperandNumber()]) {
        require(use, *implied);
        continue;
      }
      TensorSharding target = *implied;
      target.partial = passedPartial;
      require(use, target);
    }
    for (auto [result, implied] :
         llvm::zip(op->getResults(), outcome->results)) {
      if (!isTensor(result))
        continue;
      if (!implied)
        return op->emitOpError("internal error: inexpressible result sharding");
      if (passedPartial.empty()) {
        finals[result] = intern(*implied);
        continue;
      }
      TensorSharding s = *implied;
      for (StringRef axis : passedPartial)
        if (!llvm::is_contained(s.partial, axis))
          s.partial.push_back(axis);
      finals[result] = intern(s);
    }
  }
  return success();
}

void ReshardInserter::eraseDeadProducers() {
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
    ruleCache.forget(op);
    op->erase();
    for (Value operand : operands)
      if (operand.use_empty() && isRematerializable(operand))
        dead.push_back(operand.getDefiningOp());
  }
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

void ReshardInserter::write() {
  MLIRContext *ctx = func->getContext();
  Builder b(ctx);
  DiscardableAttrWriter shardingsWriter(
      b.getStringAttr(TPDialect::kShardingsAttrName));
  DiscardableAttrWriter originsWriter(
      b.getStringAttr(TPDialect::kOriginsAttrName));
  func.getFunctionBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    WalkResult next = ruleOf(op) ? WalkResult::skip() : WalkResult::advance();
    if (isa<AnnotateOp, ReshardOp>(op) ||
        llvm::none_of(op->getResults(), isTensor))
      return next;
    SmallVector<Attribute> shardings, origins;
    for (Value r : op->getResults()) {
      ShardingAttr attr;
      if (!isTensor(r)) {
        attr = attrOf(TensorSharding());
      } else {
        auto it = finals.find(r);
        attr = attrOf(it != finals.end() && it->second->dims.size() == rankOf(r)
                          ? *it->second
                          : replicatedOf(rankOf(r)));
      }
      shardings.push_back(attr);
      if (!options.recordOrigins)
        continue;
      StringRef origin = givenOrigin(r);
      if (origin.empty())
        origin = resultOrigins.lookup(op);
      origins.push_back(
          b.getStringAttr(origin.empty() ? "default (replicated)" : origin));
    }
    shardingsWriter.set(op, attrCache.getResultsArray(shardings));
    if (options.recordOrigins)
      originsWriter.set(op, b.getArrayAttr(origins));
    return next;
  });

  // Arguments without a sharding (when this pass runs alone) get theirs, all
  // at once: setting them one by one rebuilds the list each time.
  SmallVector<DictionaryAttr> argAttrs;
  bool argsChanged = false;
  for (auto [index, arg] : llvm::enumerate(func.getArguments())) {
    NamedAttrList attrList(func.getArgAttrDict(index));
    if (isTensor(arg) && !attrList.get(TPDialect::kShardingAttrName)) {
      attrList.set(TPDialect::kShardingAttrName, attrOf(finalOf(arg)));
      argsChanged = true;
    }
    argAttrs.push_back(attrList.getDictionary(ctx));
  }
  if (argsChanged)
    func.setAllArgAttrs(argAttrs);
  // Open results take what is returned.
  Operation *ret = func.getFunctionBody().back().getTerminator();
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    if (func.getResultAttr(i, TPDialect::kShardingAttrName) ||
        i >= ret->getNumOperands() || !isTensor(ret->getOperand(i)))
      continue;
    func.setResultAttr(i, TPDialect::kShardingAttrName,
                       attrOf(finalOf(ret->getOperand(i))));
  }
}

const ShardingRule *ReshardInserter::ruleOf(Operation *op) {
  return ruleCache.get(op);
}

LogicalResult ReshardInserter::run() {
  if (failed(checkMesh()) || failed(finalize()))
    return failure();
  eraseDeadProducers();
  write();
  return success();
}

LogicalResult ReshardInserter::insertDecided() {
  // Every final sharding is known; each change reads only its operand's,
  // made before it in program order, as during the walk.
  dryRun = false;
  for (Required &r : required) {
    rematerializedFor = r.origin;
    require(*r.use, r.target);
  }
  required.clear();
  eraseDeadProducers();
  write();
  return success();
}

namespace {

struct InsertReshardsPass
    : public tp::impl::InsertReshardsPassBase<InsertReshardsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
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
      InsertReshardsPassOptions options{recordOrigins, sequenceParallel};
      if (failed(insertReshards(func, *mesh, options)))
        return signalPassFailure();
    }
  }
};

} // namespace

LogicalResult mlir::tp::insertReshards(FunctionOpInterface func, MeshOp mesh,
                                       const InsertReshardsPassOptions &options,
                                       const OpChoices *plan, OpChoices *made,
                                       ShardingRuleCache *rules) {
  ReshardInserter inserter(func, mesh, options, rules);
  inserter.setPlan(plan, made);
  return inserter.run();
}

LogicalResult mlir::tp::decideReshards(FunctionOpInterface func, MeshOp mesh,
                                       const InsertReshardsPassOptions &options,
                                       OpChoices &made, DecidedReshards &kept,
                                       ShardingRuleCache *rules) {
  // Its diagnostics are held back for the insertion.
  auto inserter = std::make_unique<ReshardInserter>(func, mesh, options, rules);
  inserter->setPlan(nullptr, &made);
  std::vector<Diagnostic> diagnostics;
  LogicalResult decided = success();
  {
    ScopedDiagnosticHandler hold(func->getContext(), [&](Diagnostic &diag) {
      diagnostics.push_back(std::move(diag));
      return success();
    });
    decided = inserter->decide();
  }
  if (failed(decided)) {
    // The failure is the insertion's to report, when it runs.
    kept = DecidedReshards();
    return failure();
  }
  kept.inserter = std::move(inserter);
  kept.diagnostics = std::move(diagnostics);
  return success();
}

DecidedReshards::DecidedReshards() = default;
DecidedReshards::DecidedReshards(DecidedReshards &&) = default;
DecidedReshards &DecidedReshards::operator=(DecidedReshards &&) = default;
DecidedReshards::~DecidedReshards() = default;

LogicalResult DecidedReshards::insert() {
  assert(inserter && "nothing decided");
  if (!diagnostics.empty()) {
    DiagnosticEngine &engine =
        diagnostics.front().getLocation().getContext()->getDiagEngine();
    for (Diagnostic &diag : diagnostics)
      engine.emit(std::move(diag));
    diagnostics.clear();
  }
  std::unique_ptr<detail::ReshardInserter> taken = std::move(inserter);
  return taken->insertDecided();
}
