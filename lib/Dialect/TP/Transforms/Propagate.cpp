//===- Propagate.cpp - Complete the shardings of a module -----------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Gives every tensor value a sharding, from the few that constraints fix.
//
// Per function:
//  1. Mesh. The function's constraints name its mesh (one per function; a
//     second one is an error naming both places).
//  2. Seeds. Constrained arguments and the results of tp.annotate / tp.reshard
//     are fixed; result constraints of the function act on what is returned.
//  3. Fixed point. A worklist visits ops (first in program order). At an op
//     with a sharding rule, OpDecisions (FactorDecision.h) projects every
//     tensor's current sharding onto the rule's factors, lets the decider
//     choose each factor's axes, trims the choice to block splits, and every
//     open tensor that the outcome extends is updated. Updates only add axes,
//     so the worklist empties. Splitting a reduction factor makes the op's
//     results partial.
//  With `auto-plan`, steps 3's fixed point is replaced by the planner
//  (AutoPlan.h): it chooses every open argument's sharding and every op's
//  factor split at once, and those are what is written; reshard insertion
//  follows the plan's decisions.
//  With `search`, the planner then plans the ops (arguments and results as
//  the fixed point left them), and its plan replaces the fixed point's where
//  the model says it is clearly faster, the fixed point's plan costed as
//  reshard insertion would complete it (decideReshards: its decisions, no
//  reshards made).
//  4. The fixed point is written (`tp.shardings` on ops, `tp.sharding` on
//     arguments, with `record-origins` the constraint each came from), and
//     reshard insertion (InsertReshards.cpp) makes every op's operands agree
//     with what its decision needs.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Passes.h"

#include "CoinSolvers.h"

#include "tp/Dialect/TP/IR/TPInterfaces.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Dialect/TP/Transforms/AutoPlan.h"
#include "tp/Dialect/TP/Transforms/FactorDecision.h"
#include "tp/Dialect/TP/Transforms/Structure.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/Inliner.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/ThreadPool.h"
#include <deque>
#include <future>

#define DEBUG_TYPE "tp-propagate"

namespace mlir::tp {
#define GEN_PASS_DEF_PROPAGATEPASS
#include "tp/Dialect/TP/Transforms/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

struct ValueState {
  /// Stored once per distinct sharding (FunctionPropagator::intern); null
  /// until something is known.
  const TensorSharding *sharding = nullptr;
  /// Something is known about the value (possibly: it is replicated).
  bool known = false;
  /// Set by a constraint; never changed.
  bool fixed = false;
  /// The constraint the sharding came from (for `record-origins`); owned by
  /// the propagator's string saver.
  StringRef origin;
};

bool isTensor(Value v) { return isa<RankedTensorType>(v.getType()); }

class FunctionPropagator {
public:
  /// `ruleCache` answers for the ops' rules; the search and reshard insertion
  /// after this share it.
  FunctionPropagator(FunctionOpInterface func, MeshOp mesh,
                     const PropagatePassOptions &options,
                     ShardingRuleCache &ruleCache)
      : func(func), options(options),
        meshRef(FlatSymbolRefAttr::get(mesh.getSymNameAttr())), axes(mesh),
        decisions(decider, axes), ruleCache(ruleCache),
        attrCache(func->getContext(), meshRef) {}

  /// Runs the fixed point (or, with `machine`, the planner) and writes the
  /// result on the function. With `search` (no auto-plan), the planner then
  /// chooses every op's split and where each pending sum is reduced, the
  /// arguments and results kept as the fixed point left them.
  /// With `rulesReady`, the rule cache is being filled on another thread
  /// (primeRules) until that future is ready: the fixed point waits for it.
  LogicalResult run(MeshOp mesh, const AutoPlanOptions *autoPlan,
                    const AutoPlanOptions *search = nullptr,
                    std::shared_future<void> *rulesReady = nullptr);
  /// The plan, after run with auto-plan.
  const FunctionPlan *getPlan() const { return plan ? &*plan : nullptr; }
  /// After a search that kept the fixed point: its reshards, decided, for
  /// the insertion (empty otherwise).
  DecidedReshards takeDecidedReshards() {
    return std::move(fixedPointReshards);
  }

private:
  void seed();
  void propagate();
  /// Sets every value's state from the planner's choice.
  LogicalResult applyPlan(MeshOp mesh, const AutoPlanOptions &autoPlan);
  /// The annotated path's search: plans the ops with the fixed point's
  /// arguments and results as constraints.
  LogicalResult searchOps(MeshOp mesh, const AutoPlanOptions &options);
  /// Gives each planned op's results the planned shardings.
  void adoptDecisions(StringRef origin);
  /// Records what the search found (`tp.plan`, mode "search"): the rule
  /// that decided, its plan's modelled step and peak, and the fixed
  /// point's.
  void writeSearchRecord(const FunctionPlan &searched,
                         const AutoPlanOptions &options, SearchRule rule);
  /// Records the plan's figures and each weight's runner-up on the function
  /// (`tp.plan`, what --tp-report explains).
  void writePlanRecord(MeshOp mesh, const AutoPlanOptions &autoPlan);
  void write();

  /// Gives `v` the sharding `s` if it only adds axes to what `v` has.
  bool extend(Value v, const TensorSharding &s, StringRef origin);
  void enqueue(Operation *op) {
    if (queued.insert(op).second)
      worklist.push_back(op);
  }
  /// The rule of `op`, computed once; null when it has none.
  const ShardingRule *ruleOf(Operation *op);
  /// The attribute of `s`, built once per distinct sharding.
  ShardingAttr attrOf(const TensorSharding &s) { return attrCache.get(s); }
  /// `s`, stored once per distinct sharding: the states hold pointers, not
  /// copies (a deep model's map of copies is megabytes of cache misses).
  const TensorSharding *intern(const TensorSharding &s) {
    return attrCache.intern(s);
  }
  StringRef save(const Twine &text) { return saver.save(text); }

  FunctionOpInterface func;
  const PropagatePassOptions &options;
  FlatSymbolRefAttr meshRef;
  MeshAxes axes;
  CommunicationCostDecider decider;
  OpDecisions decisions;

  DenseMap<Value, ValueState> states;
  SmallVector<std::optional<TensorSharding>> resultConstraints;
  SmallVector<StringRef> resultConstraintOrigins;
  ShardingRuleCache &ruleCache;
  ShardingAttrCache attrCache;
  llvm::BumpPtrAllocator allocator;
  llvm::StringSaver saver{allocator};
  /// FIFO of ops to visit; `queued` says which are in it.
  std::deque<Operation *> worklist;
  DenseSet<Operation *> queued;
  std::optional<FunctionPlan> plan;
  DecidedReshards fixedPointReshards;
};

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
      state = {intern(TensorSharding::fromAttr(attr)), true, true,
               save("argument #" + Twine(index) + " of " + funcName)};
    } else if (options.replicateOpenBoundaries) {
      state = {intern(TensorSharding::replicated(rank)), true, true,
               save("argument #" + Twine(index) + " of " + funcName +
                    " (replicate-open-boundaries)")};
    }
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto type = dyn_cast<RankedTensorType>(func.getResultTypes()[i]);
    std::string origin = "result #" + std::to_string(i) + " of " + funcName;
    if (auto attr = func.getResultAttrOfType<ShardingAttr>(
            i, TPDialect::kShardingAttrName)) {
      resultConstraints.push_back(TensorSharding::fromAttr(attr));
    } else if (type && options.replicateOpenBoundaries) {
      resultConstraints.push_back(TensorSharding::replicated(type.getRank()));
      origin += " (replicate-open-boundaries)";
    } else {
      resultConstraints.push_back(std::nullopt);
    }
    resultConstraintOrigins.push_back(save(origin));
  }
  size_t numResults = 0;
  func.getFunctionBody().walk([&](Operation *op) {
    numResults += llvm::count_if(op->getResults(), isTensor);
    ShardingAttr sharding = getOwnSharding(op);
    if (!sharding)
      return;
    states[op->getResult(0)] = {intern(TensorSharding::fromAttr(sharding)),
                                true, true,
                                save(op->getName().getStringRef() + " at " +
                                     formatLocation(op->getLoc()))};
  });
  // Sized once: growing would move every state (a sharding's nested
  // vectors) each time.
  states.reserve(states.size() + numResults);
}

//===----------------------------------------------------------------------===//
// Fixed point
//===----------------------------------------------------------------------===//

bool FunctionPropagator::extend(Value v, const TensorSharding &s,
                                StringRef origin) {
  if (isRematerializable(v))
    return false;
  ValueState &state = states[v];
  if (state.fixed || !s.hasAxes())
    return false;
  if (state.known && !extendsSharding(*state.sharding, s))
    return false;
  state.sharding = intern(s);
  state.known = true;
  state.origin = origin;
  if (Operation *def = v.getDefiningOp())
    enqueue(def);
  for (Operation *user : v.getUsers())
    enqueue(user);
  return true;
}

void FunctionPropagator::propagate() {
  func.getFunctionBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    enqueue(op);
    // Ops inside a ruled op (linalg bodies) work on scalars.
    return ruleOf(op) ? WalkResult::skip() : WalkResult::advance();
  });
  auto current = [&](Value v, bool) -> const TensorSharding * {
    auto it = states.find(v);
    return it == states.end() || !it->second.known ? nullptr
                                                   : it->second.sharding;
  };
  auto originOf = [&](Operation *op, int source) -> StringRef {
    if (source < 0)
      return StringRef();
    unsigned numOperands = op->getNumOperands();
    Value v = static_cast<unsigned>(source) < numOperands
                  ? op->getOperand(source)
                  : op->getResult(source - numOperands);
    auto state = states.find(v);
    return state != states.end() ? state->second.origin : StringRef();
  };
  while (!worklist.empty()) {
    Operation *op = worklist.front();
    worklist.pop_front();
    queued.erase(op);

    if (auto annotate = dyn_cast<AnnotateOp>(op)) {
      // The constraint also tells the producer what it should make.
      // Copied out first: extending may grow the map.
      const ValueState out = states[annotate.getResult()];
      if (out.sharding)
        extend(annotate.getInput(), *out.sharding, out.origin);
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
    const OpOutcome &outcome = decisions.decide(op, *rule, current);
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
// Output
//===----------------------------------------------------------------------===//

void FunctionPropagator::write() {
  MLIRContext *ctx = func->getContext();
  Builder b(ctx);
  DiscardableAttrWriter shardingsWriter(
      b.getStringAttr(TPDialect::kShardingsAttrName));
  DiscardableAttrWriter originsWriter(
      b.getStringAttr(TPDialect::kOriginsAttrName));
  StringAttr noOrigin = b.getStringAttr("");
  auto stateOf = [&](Value v) -> const ValueState * {
    auto it = states.find(v);
    return it != states.end() && it->second.known ? &it->second : nullptr;
  };
  func.getFunctionBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    WalkResult next = ruleOf(op) ? WalkResult::skip() : WalkResult::advance();
    if (isa<AnnotateOp, ReshardOp>(op) ||
        llvm::none_of(op->getResults(), isTensor))
      return next;
    SmallVector<Attribute> shardings, origins;
    for (Value r : op->getResults()) {
      const ValueState *state = stateOf(r);
      if (!isTensor(r))
        shardings.push_back(attrOf(TensorSharding()));
      else if (state && state->sharding->dims.size() ==
                            static_cast<size_t>(
                                cast<RankedTensorType>(r.getType()).getRank()))
        shardings.push_back(attrOf(*state->sharding));
      else
        shardings.push_back(attrOf(TensorSharding::replicated(
            cast<RankedTensorType>(r.getType()).getRank())));
      // Unknown values have no origin yet: reshard insertion gives them the
      // op's.
      if (options.recordOrigins)
        origins.push_back(state ? b.getStringAttr(state->origin) : noOrigin);
    }
    shardingsWriter.set(op, attrCache.getResultsArray(shardings));
    if (options.recordOrigins)
      originsWriter.set(op, b.getArrayAttr(origins));
    return next;
  });

  // All argument attributes at once: setting them one by one rebuilds the
  // whole list each time (quadratic in the argument count).
  SmallVector<DictionaryAttr> argAttrs;
  bool argsChanged = false;
  for (auto [index, arg] : llvm::enumerate(func.getArguments())) {
    NamedAttrList attrs(func.getArgAttrDict(index));
    if (isTensor(arg)) {
      const ValueState *state = stateOf(arg);
      if (!attrs.get(TPDialect::kShardingAttrName)) {
        attrs.set(
            TPDialect::kShardingAttrName,
            attrOf(state
                       ? *state->sharding
                       : TensorSharding::replicated(
                             cast<RankedTensorType>(arg.getType()).getRank())));
        argsChanged = true;
      }
      if (options.recordOrigins) {
        StringRef origin = state ? state->origin : StringRef();
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
  // Results that start replicated are constraints from now on.
  if (options.replicateOpenBoundaries || options.autoPlan || options.search)
    for (auto [i, constraint] : llvm::enumerate(resultConstraints))
      if (constraint && !func.getResultAttr(i, TPDialect::kShardingAttrName))
        func.setResultAttr(i, TPDialect::kShardingAttrName,
                           attrOf(*constraint));
}

const ShardingRule *FunctionPropagator::ruleOf(Operation *op) {
  return ruleCache.get(op);
}

LogicalResult FunctionPropagator::applyPlan(MeshOp mesh,
                                            const AutoPlanOptions &autoPlan) {
  PlanConstraints constraints;
  for (BlockArgument arg : func.getArguments()) {
    auto it = states.find(arg);
    constraints.arguments.push_back(
        it != states.end() && it->second.fixed
            ? std::optional<TensorSharding>(*it->second.sharding)
            : std::nullopt);
  }
  // An open result named "grad.X" of X's type, for an argument named X, is
  // laid out as X (the importer names a training step's gradients so: the
  // optimizer updates each parameter where it lives). Other open results are
  // returned replicated: from now on a constraint.
  llvm::StringMap<unsigned> argumentNamed;
  for (BlockArgument arg : func.getArguments())
    if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      TPDialect::kNameAttrName))
      argumentNamed.try_emplace(name.getValue(), arg.getArgNumber());
  constraints.resultTies.assign(resultConstraints.size(), -1);
  for (auto [i, constraint] : llvm::enumerate(resultConstraints)) {
    if (constraint)
      continue;
    auto name =
        func.getResultAttrOfType<StringAttr>(i, TPDialect::kNameAttrName);
    if (name && name.getValue().starts_with("grad.")) {
      auto it = argumentNamed.find(name.getValue().drop_front(5));
      if (it != argumentNamed.end() &&
          func.getArgument(it->second).getType() == func.getResultTypes()[i] &&
          isTensor(func.getArgument(it->second))) {
        constraints.resultTies[i] = it->second;
        continue;
      }
    }
    if (auto type = dyn_cast<RankedTensorType>(func.getResultTypes()[i])) {
      constraint = TensorSharding::replicated(type.getRank());
      resultConstraintOrigins[i] =
          save(resultConstraintOrigins[i] + " (auto-plan: replicated)");
    }
  }
  constraints.results.assign(resultConstraints.begin(),
                             resultConstraints.end());
  FailureOr<FunctionPlan> planned =
      planFunction(func, mesh, constraints, autoPlan, nullptr, &ruleCache);
  if (failed(planned))
    return failure();
  plan = std::move(*planned);
  for (auto [i, tie] : llvm::enumerate(constraints.resultTies))
    if (tie >= 0 && plan->arguments[tie]) {
      resultConstraints[i] = *plan->arguments[tie];
      resultConstraintOrigins[i] =
          save(resultConstraintOrigins[i] +
               " (auto-plan: laid out as argument #" + Twine(tie) + ")");
    }
  writePlanRecord(mesh, autoPlan);
  StringRef origin = save("auto-plan");
  for (auto [arg, s] : llvm::zip(func.getArguments(), plan->arguments)) {
    ValueState &state = states[arg];
    if (s && !state.fixed)
      state = {intern(*s), true, true, origin};
  }
  adoptDecisions(origin);
  return success();
}

LogicalResult FunctionPropagator::searchOps(MeshOp mesh,
                                            const AutoPlanOptions &options) {
  auto settled = [&](Value v) {
    auto it = states.find(v);
    return it != states.end() && it->second.known
               ? *it->second.sharding
               : TensorSharding::replicated(
                     cast<RankedTensorType>(v.getType()).getRank());
  };
  PlanConstraints constraints;
  for (BlockArgument arg : func.getArguments())
    constraints.arguments.push_back(
        isTensor(arg) ? std::optional<TensorSharding>(settled(arg))
                      : std::nullopt);
  // Open results keep what the fixed point returns.
  Operation *ret = func.getFunctionBody().back().getTerminator();
  constraints.results.assign(resultConstraints.begin(),
                             resultConstraints.end());
  for (auto [i, constraint] : llvm::enumerate(constraints.results))
    if (!constraint && i < ret->getNumOperands() &&
        isTensor(ret->getOperand(i)))
      constraint = settled(ret->getOperand(i));

  // The fixed point's own plan, as reshard insertion completes it (where
  // each pending sum is reduced), decided without touching the IR: the plan
  // to beat. Kept, with its remarks, for the insertion when it stays; a
  // failure is the insertion's to report.
  write();
  // What the planner takes from the function's structure (the layers it
  // folds, the live ranges it weighs) depends only on the IR as written now,
  // which deciding the reshards reads without changing: it is found
  // meanwhile, on another thread (a 1,024-layer MLP stack: 20 of the
  // search's 45 ms).
  PlanStructure structure;
  MLIRContext *ctx = func->getContext();
  std::shared_future<void> found;
  if (ctx->isMultithreadingEnabled())
    found = ctx->getThreadPool().async(
        [&structure, f = func] { structure = findPlanStructure(f); });
  else
    structure = findPlanStructure(func);
  OpChoices fixedPoint;
  InsertReshardsPassOptions reshardOptions{this->options.recordOrigins,
                                           this->options.sequenceParallel};
  LogicalResult decided = decideReshards(func, mesh, reshardOptions, fixedPoint,
                                         fixedPointReshards, &ruleCache);
  if (found.valid())
    found.wait();
  if (failed(decided))
    return success();

  FailureOr<FunctionPlan> planned = planFunction(
      func, mesh, constraints, options, &fixedPoint, &ruleCache, &structure);
  if (failed(planned))
    return failure();
  // The search's plan replaces the fixed point's only where judgeSearch
  // says so: the fixed point's is what the annotations say, op by op; the
  // user's split is their memory budget, and what the model does not see
  // (its error against measured steps) favours the annotations.
  // No plan beats the fixed point's: nothing to decide or record.
  if (planned->noneFaster)
    return success();
  SearchRule rule = judgeSearch(*planned, options.memoryPerDevice);
  writeSearchRecord(*planned, options, rule);
  if (rule != SearchRule::Adopted)
    return success();
  // The IR changes: what was decided for the fixed point no longer holds.
  fixedPointReshards = DecidedReshards();
  for (auto [i, constraint] : llvm::enumerate(resultConstraints))
    if (!constraint && constraints.results[i]) {
      constraint = constraints.results[i];
      resultConstraintOrigins[i] = save("what propagation returns");
    }
  plan = std::move(*planned);
  adoptDecisions(save("search"));
  write();
  return success();
}

void FunctionPropagator::writeSearchRecord(const FunctionPlan &searched,
                                           const AutoPlanOptions &options,
                                           SearchRule rule) {
  Builder b(func->getContext());
  const MachineModel &machine = *options.machine;
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("mode", b.getStringAttr("search")),
      b.getNamedAttr("rule", b.getStringAttr(stringifySearchRule(rule))),
      b.getNamedAttr("margin", b.getF64FloatAttr(kSearchAdoptionMargin)),
      b.getNamedAttr("cost_model", b.getStringAttr(machine.name)),
      b.getNamedAttr("compute_seconds",
                     b.getF64FloatAttr(searched.computeSeconds)),
      b.getNamedAttr("communication_seconds",
                     b.getF64FloatAttr(searched.communicationSeconds)),
      b.getNamedAttr("peak_bytes", b.getF64FloatAttr(searched.peakBytes))};
  if (options.memoryPerDevice > 0)
    fields.push_back(b.getNamedAttr(
        "memory_per_device", b.getF64FloatAttr(options.memoryPerDevice)));
  if (const std::optional<FunctionPlan::Costed> &fastest = searched.fastest) {
    fields.push_back(b.getNamedAttr(
        "fastest_compute_seconds", b.getF64FloatAttr(fastest->computeSeconds)));
    fields.push_back(
        b.getNamedAttr("fastest_communication_seconds",
                       b.getF64FloatAttr(fastest->communicationSeconds)));
    fields.push_back(b.getNamedAttr("fastest_peak_bytes",
                                    b.getF64FloatAttr(fastest->peakBytes)));
  }
  if (const std::optional<FunctionPlan::Costed> &fixed = searched.incumbent) {
    fields.push_back(b.getNamedAttr("fixed_point_compute_seconds",
                                    b.getF64FloatAttr(fixed->computeSeconds)));
    fields.push_back(
        b.getNamedAttr("fixed_point_communication_seconds",
                       b.getF64FloatAttr(fixed->communicationSeconds)));
    fields.push_back(b.getNamedAttr("fixed_point_peak_bytes",
                                    b.getF64FloatAttr(fixed->peakBytes)));
  }
  func->setAttr(TPDialect::kPlanAttrName, b.getDictionaryAttr(fields));
}

void FunctionPropagator::adoptDecisions(StringRef origin) {
  func.getFunctionBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    const ShardingRule *rule = ruleOf(op);
    auto it = plan->ops.decisions.find(op);
    if (rule && it != plan->ops.decisions.end()) {
      OpOutcome outcome = decisions.makeOutcome(op, *rule, it->second);
      auto pass = plan->ops.passes.find(op);
      for (auto [result, s] : llvm::zip(op->getResults(), outcome.results)) {
        if (!s || isRematerializable(result))
          continue;
        TensorSharding sharding = *s;
        if (pass != plan->ops.passes.end())
          for (StringRef axis : pass->second.axes)
            if (!llvm::is_contained(sharding.partial, axis))
              sharding.partial.push_back(axis);
        states[result] = {intern(sharding), true, false, origin};
      }
    }
    return rule ? WalkResult::skip() : WalkResult::advance();
  });
}

void FunctionPropagator::writePlanRecord(MeshOp mesh,
                                         const AutoPlanOptions &autoPlan) {
  Builder b(func->getContext());
  SmallVector<Attribute> weights;
  for (const WeightChoice &w : plan->weights) {
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("argument", b.getI64IntegerAttr(w.argument)),
        b.getNamedAttr("layers", b.getI64IntegerAttr(w.layers)),
        b.getNamedAttr("type",
                       TypeAttr::get(func.getArgument(w.argument).getType())),
        b.getNamedAttr("sharding", attrOf(w.chosen))};
    if (w.runnerUp) {
      fields.push_back(b.getNamedAttr("runner_up", attrOf(*w.runnerUp)));
      fields.push_back(b.getNamedAttr("runner_up_seconds",
                                      b.getF64FloatAttr(w.runnerUpSeconds)));
      fields.push_back(b.getNamedAttr("runner_up_bytes",
                                      b.getF64FloatAttr(w.runnerUpBytes)));
    }
    weights.push_back(b.getDictionaryAttr(fields));
  }
  func->setAttr(
      TPDialect::kPlanAttrName,
      b.getDictionaryAttr(
          {b.getNamedAttr("cost_model",
                          b.getStringAttr(autoPlan.machine->name)),
           b.getNamedAttr("memory_per_device",
                          b.getF64FloatAttr(autoPlan.memoryPerDevice)),
           b.getNamedAttr("compute_seconds",
                          b.getF64FloatAttr(plan->computeSeconds)),
           b.getNamedAttr("communication_seconds",
                          b.getF64FloatAttr(plan->communicationSeconds)),
           b.getNamedAttr("argument_bytes",
                          b.getF64FloatAttr(plan->argumentBytes)),
           b.getNamedAttr("activation_bytes",
                          b.getF64FloatAttr(plan->activationBytes)),
           b.getNamedAttr("weights", b.getArrayAttr(weights))}));
  (void)mesh;
}

LogicalResult FunctionPropagator::run(MeshOp mesh,
                                      const AutoPlanOptions *autoPlan,
                                      const AutoPlanOptions *search,
                                      std::shared_future<void> *rulesReady) {
  seed();
  if (rulesReady && rulesReady->valid())
    rulesReady->wait();
  // A plan solves its programme with Clp after the fixed point (and,
  // searching, the fixed point's reshards): Clp loads meanwhile.
  if ((autoPlan || search) && func->getContext()->isMultithreadingEnabled())
    CoinSolvers::loadInBackground();
  if (autoPlan) {
    if (failed(applyPlan(mesh, *autoPlan)))
      return failure();
  } else {
    propagate();
    // The search writes the fixed point (to cost it), and the plan it
    // adopts.
    if (search)
      return searchOps(mesh, *search);
  }
  write();
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Inlines every call to a function defined in the module, so that shardings
/// flow through callees; a callee's argument and result constraints become
/// tp.annotate ops at the call. A call cycle is an error.
LogicalResult inlineCalls(ModuleOp module, SymbolTableCollection &symbols) {
  // A call cycle cannot be inlined: find one first (depth-first search over
  // the defined functions, 1 = on the stack, 2 = done).
  DenseMap<Operation *, int> state;
  // Whether any call has a body to inline: most modules have none, and the
  // rounds below would walk every op once more to find that out.
  bool anyDefinedCallee = false;
  std::function<LogicalResult(FunctionOpInterface)> visit =
      [&](FunctionOpInterface func) -> LogicalResult {
    state[func] = 1;
    WalkResult walk = func->walk([&](CallOpInterface call) {
      auto callee = dyn_cast_or_null<FunctionOpInterface>(
          call.resolveCallableInTable(&symbols));
      if (!callee || callee.isExternal())
        return WalkResult::advance();
      anyDefinedCallee = true;
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
  if (!anyDefinedCallee)
    return success();

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

/// Asks `rules` for the rule of every op of `func` that propagation visits,
/// in its order (ops inside a ruled op work on scalars).
void primeRules(FunctionOpInterface func, ShardingRuleCache &rules) {
  func.getFunctionBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    return rules.get(op) ? WalkResult::skip() : WalkResult::advance();
  });
}

struct PropagatePass : public tp::impl::PropagatePassBase<PropagatePass> {
  using Base::Base;

  /// The options as they stand (given or defaulted); `given` receives the
  /// names of those set by the option text.
  PropagatePassOptions current(llvm::StringSet<> *given) const {
    PropagatePassOptions o;
    o.replicateOpenBoundaries = replicateOpenBoundaries;
    o.recordOrigins = recordOrigins;
    o.sequenceParallel = sequenceParallel;
    o.autoPlan = autoPlan;
    o.memoryPerDevice = memoryPerDevice;
    o.costModel = costModel;
    o.explain = explain;
    o.search = search;
    if (given)
      for (const llvm::cl::Option *option :
           std::initializer_list<const llvm::cl::Option *>{
               &replicateOpenBoundaries, &recordOrigins, &sequenceParallel,
               &autoPlan, &memoryPerDevice, &costModel, &explain, &search})
        if (option->getNumOccurrences())
          given->insert(option->ArgStr);
    return o;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The planner's inputs, checked before anything changes.
    std::optional<MachineModel> machine;
    AutoPlanOptions autoPlanOptions;
    if (!autoPlan && !search && !memoryPerDevice.empty()) {
      module.emitError() << "tp-propagate: memory-per-device applies to "
                            "auto-plan and search, which are off";
      return signalPassFailure();
    }
    if (!autoPlan && !search && costModel != "h200") {
      module.emitError() << "tp-propagate: cost-model applies to auto-plan "
                            "and search, which are off";
      return signalPassFailure();
    }
    if (search && sequenceParallel && !autoPlan) {
      module.emitError() << "tp-propagate: search does not plan "
                            "sequence-parallel's reduce-scatters: give one "
                            "of them";
      return signalPassFailure();
    }
    if (autoPlan || search) {
      std::string error;
      machine = MachineModel::load(costModel, error);
      if (!machine) {
        module.emitError() << "tp-propagate: cost-model: " << error;
        return signalPassFailure();
      }
      autoPlanOptions.machine = &*machine;
      // Runner-ups explain an auto-plan's weights; search fixes them.
      autoPlanOptions.explain = autoPlan && explain;
    }
    if ((autoPlan || search) && !memoryPerDevice.empty()) {
      std::optional<double> bytes = parseByteSize(memoryPerDevice);
      if (!bytes) {
        module.emitError()
            << "tp-propagate: memory-per-device='" << memoryPerDevice
            << "' is not a size: expected a positive number of bytes with "
               "an optional unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), "
               "e.g. 80GB";
        return signalPassFailure();
      }
      autoPlanOptions.memoryPerDevice = *bytes;
    }
    SymbolTableCollection symbols;
    if (failed(inlineCalls(module, symbols)))
      return signalPassFailure();
    // A module with one mesh gives it to functions that name none.
    SmallVector<MeshOp> meshes(module.getOps<MeshOp>());
    for (auto func : module.getOps<FunctionOpInterface>()) {
      if (func.isExternal() || func->hasAttr(TPDialect::kSpmdAttrName))
        continue;
      // Every op's rule, asked on another thread in the order propagation
      // walks (the first op of each structure answers for the others, so
      // the answers are the same) while this one checks the function's mesh
      // and seeds the constraints, which read no op's attributes: asking
      // for a rule reads the IR, except that upstream's YAML-generated
      // linalg ops memoize their indexing maps as an attribute of the op on
      // the first query. The cache is this thread's again once the fixed
      // point has waited for it; the later readers of those attributes
      // (the layer search among them) come after.
      ShardingRuleCache rules;
      std::shared_future<void> rulesReady;
      if (getContext().isMultithreadingEnabled())
        rulesReady = getContext().getThreadPool().async(
            [&rules, func] { primeRules(func, rules); });
      llvm::scope_exit joinRules([&] {
        if (rulesReady.valid())
          rulesReady.wait();
      });
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
      PropagatePassOptions options{
          replicateOpenBoundaries, recordOrigins, sequenceParallel, autoPlan,
          memoryPerDevice,         costModel,     explain,          search};
      FunctionPropagator propagator(func, *mesh, options, rules);
      if (failed(propagator.run(
              *mesh, autoPlan ? &autoPlanOptions : nullptr,
              !autoPlan && search ? &autoPlanOptions : nullptr, &rulesReady)))
        return signalPassFailure();
      InsertReshardsPassOptions reshardOptions{recordOrigins, sequenceParallel};
      const FunctionPlan *plan = propagator.getPlan();
      // The search kept the fixed point: its reshards are decided already.
      if (DecidedReshards decided = propagator.takeDecidedReshards()) {
        if (failed(decided.insert()))
          return signalPassFailure();
        continue;
      }
      if (failed(insertReshards(func, *mesh, reshardOptions,
                                plan ? &plan->ops : nullptr, nullptr, &rules)))
        return signalPassFailure();
    }
  }
};

} // namespace

LogicalResult mlir::tp::parsePropagateOptions(StringRef text,
                                              PropagatePassOptions &options,
                                              llvm::StringSet<> *given,
                                              std::string &error) {
  PropagatePass pass(options);
  if (failed(pass.initializeOptions(text, [&](const Twine &message) {
        error = message.str();
        return failure();
      })))
    return failure();
  options = pass.current(given);
  return success();
}
