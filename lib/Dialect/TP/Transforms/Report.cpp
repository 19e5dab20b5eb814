//===- Report.cpp - Print the sharding plan -------------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Per function with a mesh:
//  1. Values: every tensor with its sharding (arguments from `tp.sharding`,
//     op results from `tp.shardings`) and its bytes per device.
//  2. Collectives: in local form the tp collectives themselves; in global
//     form the steps each tp.reshard plans (Resharding.h). Bytes per device
//     by the ring formulas of CostModel.h.
//  3. Memory: argument bytes, and the peak of bytes live at once walking the
//     program in order (findLivePeak: a value lives from its op to its last
//     user's).
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Passes.h"

#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Dialect/TP/Transforms/AutoPlan.h"
#include "tp/Dialect/TP/Transforms/CostModel.h"
#include "tp/Dialect/TP/Transforms/FactorProjection.h"
#include "tp/Dialect/TP/Transforms/Resharding.h"
#include "tp/Dialect/TP/Transforms/Structure.h"

#include "mlir/IR/AsmState.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"
#include <map>

namespace mlir::tp {
#define GEN_PASS_DEF_REPORTPASS
#include "tp/Dialect/TP/Transforms/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

struct CollectiveEntry {
  std::string kind;
  std::string reduction;
  SmallVector<std::string> axes;
  int64_t groupSize;
  std::string type;
  double tensorBytes; // S in the formula
  double bytes;       // sent per device
  std::string formula;
  std::string loc;
};

struct ValueEntry {
  std::string name;
  std::string type;
  std::string sharding;
  double bytes;
};

template <typename T> std::string str(const T &thing) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << thing;
  return text;
}

/// A weight as auto-plan chose it (`tp.plan`).
struct WeightEntry {
  std::string name, type, sharding, split;
  int64_t layers = 1;
  bool hasRunnerUp = false;
  std::string runnerUp, runnerUpSplit;
  double runnerUpSeconds = 0, runnerUpBytes = 0;
  bool overBudget = false;
};

struct PlanEntry {
  /// "auto-plan", or "search" (what the search found beside the fixed
  /// point's plan, and the rule that chose between them).
  std::string mode, costModel;
  double budget = 0, computeSeconds = 0, communicationSeconds = 0,
         argumentBytes = 0, activationBytes = 0;
  double fixedPointComputeSeconds = 0, fixedPointCommunicationSeconds = 0;
  std::optional<SearchRule> rule;
  double margin = 0, peakBytes = 0, fixedPointPeakBytes = 0;
  /// The fastest plan, where it held too much and the search planned again
  /// within the fixed point's bytes.
  bool hasFastest = false;
  double fastestComputeSeconds = 0, fastestCommunicationSeconds = 0,
         fastestPeakBytes = 0;
  SmallVector<WeightEntry> weights;
};

struct FunctionReport {
  std::string name;
  std::string mesh;
  int64_t devices;
  bool local;
  SmallVector<ValueEntry> values;
  SmallVector<CollectiveEntry> collectives;
  double argumentBytes = 0;
  double peakLiveBytes = 0;
  SmallVector<ValueEntry> largest;
  std::optional<PlanEntry> plan;
};

/// A weight's split in Megatron-LM's words: a [in, out] matrix split by
/// columns is column-parallel, by rows row-parallel.
std::string splitName(ShardingAttr s) {
  TensorSharding t = TensorSharding::fromAttr(s);
  SmallVector<unsigned> split;
  for (auto [d, axes] : llvm::enumerate(t.dims))
    if (!axes.empty())
      split.push_back(d);
  if (split.empty())
    return "replicated";
  if (t.dims.size() == 2 && split.size() == 1)
    return split[0] == 1 ? "column-parallel" : "row-parallel";
  std::string text = "split along dimension";
  text += split.size() > 1 ? "s " : " ";
  llvm::raw_string_ostream os(text);
  llvm::interleave(split, os, ", ");
  return text;
}

/// What `tp.plan` on `func` says, if it has one.
std::optional<PlanEntry> planOf(FunctionOpInterface func) {
  auto dict = func->getAttrOfType<DictionaryAttr>(TPDialect::kPlanAttrName);
  if (!dict)
    return std::nullopt;
  auto number = [](DictionaryAttr d, StringRef key) {
    auto f = d.getAs<FloatAttr>(key);
    return f ? f.getValueAsDouble() : 0.0;
  };
  PlanEntry p;
  auto mode = dict.getAs<StringAttr>("mode");
  p.mode = mode ? mode.str() : "auto-plan";
  if (auto name = dict.getAs<StringAttr>("cost_model"))
    p.costModel = name.str();
  p.fixedPointComputeSeconds = number(dict, "fixed_point_compute_seconds");
  p.fixedPointCommunicationSeconds =
      number(dict, "fixed_point_communication_seconds");
  p.budget = number(dict, "memory_per_device");
  if (auto rule = dict.getAs<StringAttr>("rule"))
    p.rule = symbolizeSearchRule(rule.getValue());
  p.margin = number(dict, "margin");
  p.peakBytes = number(dict, "peak_bytes");
  p.fixedPointPeakBytes = number(dict, "fixed_point_peak_bytes");
  p.hasFastest = dict.contains("fastest_peak_bytes");
  p.fastestComputeSeconds = number(dict, "fastest_compute_seconds");
  p.fastestCommunicationSeconds = number(dict, "fastest_communication_seconds");
  p.fastestPeakBytes = number(dict, "fastest_peak_bytes");
  p.computeSeconds = number(dict, "compute_seconds");
  p.communicationSeconds = number(dict, "communication_seconds");
  p.argumentBytes = number(dict, "argument_bytes");
  p.activationBytes = number(dict, "activation_bytes");
  auto weights = dict.getAs<ArrayAttr>("weights");
  for (Attribute a : weights ? weights.getValue() : ArrayRef<Attribute>()) {
    auto w = dyn_cast<DictionaryAttr>(a);
    auto argument = w ? w.getAs<IntegerAttr>("argument") : IntegerAttr();
    auto sharding = w ? w.getAs<ShardingAttr>("sharding") : ShardingAttr();
    if (!argument || !sharding ||
        argument.getInt() >= static_cast<int64_t>(func.getNumArguments()))
      continue;
    WeightEntry e;
    e.name = "%arg" + std::to_string(argument.getInt());
    // The global type, as planned (in local form the argument is a shard).
    auto type = w.getAs<TypeAttr>("type");
    e.type = str(type ? type.getValue()
                      : func.getArgument(argument.getInt()).getType());
    e.sharding = str(sharding);
    e.split = splitName(sharding);
    if (auto layers = w.getAs<IntegerAttr>("layers"))
      e.layers = layers.getInt();
    if (auto runnerUp = w.getAs<ShardingAttr>("runner_up")) {
      e.hasRunnerUp = true;
      e.runnerUp = str(runnerUp);
      e.runnerUpSplit = splitName(runnerUp);
      e.runnerUpSeconds = number(w, "runner_up_seconds");
      e.runnerUpBytes = number(w, "runner_up_bytes");
      e.overBudget = p.budget > 0 && e.runnerUpBytes > p.budget;
    }
    p.weights.push_back(std::move(e));
  }
  return p;
}

double typeBytes(ShapedType type) { return shapedTypeBytes(type); }

CollectiveKind kindOf(ReshardStep::Kind kind) {
  switch (kind) {
  case ReshardStep::Kind::AllReduce:
    return CollectiveKind::AllReduce;
  case ReshardStep::Kind::ReduceScatter:
    return CollectiveKind::ReduceScatter;
  case ReshardStep::Kind::AllGather:
    return CollectiveKind::AllGather;
  case ReshardStep::Kind::AllToAll:
    return CollectiveKind::AllToAll;
  case ReshardStep::Kind::AllSlice:
  case ReshardStep::Kind::ZeroOthers:
    return CollectiveKind::AllSlice;
  }
  llvm_unreachable("unknown step");
}

/// The per-device entry of one collective over a group of `n`: `in` is the
/// local operand type, `s` the tensor of its cost formula in bytes.
CollectiveEntry makeEntry(CollectiveKind kind,
                          std::optional<ReductionKind> reduction,
                          ArrayRef<StringRef> axes, int64_t n, ShapedType in,
                          double s, Location loc) {
  CollectiveEntry e;
  e.kind = stringifyCollectiveKind(kind).str();
  if (reduction)
    e.reduction = stringifyReductionKind(*reduction).str();
  for (StringRef a : axes)
    e.axes.push_back(a.str());
  e.groupSize = n;
  e.type = str(in);
  e.tensorBytes = s;
  e.bytes = collectiveBytes(kind, n, s);
  e.formula = collectiveFormula(kind).str();
  e.loc = formatLocation(loc);
  return e;
}

FunctionReport reportFunction(FunctionOpInterface func, MeshOp mesh) {
  FunctionReport r;
  r.name = func.getName().str();
  r.mesh = str(mesh.getSymName());
  r.devices = mesh.getNumDevices();
  r.local = func->hasAttr(TPDialect::kSpmdAttrName);
  r.plan = planOf(func);

  // Per-device type of a value: its own type in local form, its shard type
  // under its sharding in global form.
  DenseMap<Value, ShardingAttr> shardings;
  for (auto [i, arg] : llvm::enumerate(func.getArguments()))
    if (auto s = func.getArgAttrOfType<ShardingAttr>(
            i, TPDialect::kShardingAttrName))
      shardings[arg] = s;
  func.getFunctionBody().walk([&](Operation *op) {
    ShardingAttr own = getOwnSharding(op);
    auto list = op->getAttrOfType<ArrayAttr>(TPDialect::kShardingsAttrName);
    for (auto [i, res] : llvm::enumerate(op->getResults())) {
      ShardingAttr s = own;
      if (!s && list && i < list.size())
        s = dyn_cast<ShardingAttr>(list[i]);
      if (s)
        shardings[res] = s;
    }
  });
  auto localType = [&](Value v) -> RankedTensorType {
    auto type = cast<RankedTensorType>(v.getType());
    auto it = shardings.find(v);
    if (r.local || it == shardings.end() ||
        it->second.getRank() != static_cast<unsigned>(type.getRank()))
      return type;
    return type.clone(getShardShape(type.getShape(), it->second, mesh));
  };

  AsmState state(func);
  // An argument with a name where it came from (tp.name: a parameter's
  // fully qualified name) is reported with it: `%arg3 (h.0.mlp.c_fc.weight)`.
  auto nameOf = [&](Value v) {
    std::string text;
    llvm::raw_string_ostream os(text);
    v.printAsOperand(os, state);
    if (auto arg = dyn_cast<BlockArgument>(v);
        arg && arg.getOwner()->isEntryBlock() &&
        arg.getOwner()->getParentOp() == func.getOperation())
      if (auto name = func.getArgAttrOfType<StringAttr>(
              arg.getArgNumber(), TPDialect::kNameAttrName))
        os << " (" << name.getValue() << ")";
    return text;
  };
  // A value without a recorded sharding: in global form, one nothing
  // annotated or propagated to (counted whole); in local form, a collective's
  // result (its type is the local one) or a value kept whole on every device.
  auto unrecorded = [&](Value v) -> std::string {
    if (!r.local)
      return "(open: not annotated or propagated; counted whole)";
    Operation *def = v.getDefiningOp();
    if (def && isa<CollectiveOpInterface>(def))
      return "(" + def->getName().getStringRef().str() + " result)";
    return "(no sharding recorded: whole on every device)";
  };
  auto addValue = [&](Value v) {
    if (!isa<RankedTensorType>(v.getType()))
      return;
    auto it = shardings.find(v);
    r.values.push_back({nameOf(v), str(v.getType()),
                        it != shardings.end() ? str(it->second) : unrecorded(v),
                        typeBytes(localType(v))});
  };
  for (BlockArgument arg : func.getArguments()) {
    addValue(arg);
    if (isa<RankedTensorType>(arg.getType()))
      r.argumentBytes += typeBytes(localType(arg));
  }

  // Collectives.
  SmallVector<Operation *> order;
  func.getFunctionBody().walk<WalkOrder::PreOrder>(
      [&](Operation *op) { order.push_back(op); });
  for (Operation *op : order) {
    for (Value v : op->getResults())
      addValue(v);
    Location loc = op->getLoc();
    auto tensor = [](Value v) { return cast<RankedTensorType>(v.getType()); };
    if (auto c = dyn_cast<CollectiveOpInterface>(op)) {
      int64_t n = mesh.getGroupSize(c.getGroupAxes());
      r.collectives.push_back(makeEntry(c.getCollectiveKind(), c.getReduction(),
                                        c.getGroupAxes(), n, c.getInputType(),
                                        c.getFormulaTensorBytes(n), loc));
    } else if (auto rs = dyn_cast<ReshardOp>(op)) {
      auto from = shardings.lookup(rs.getInput());
      if (!from)
        continue;
      // Walk the planned steps on shard types.
      auto globalType = tensor(rs.getInput());
      SmallVector<int64_t> shape =
          getShardShape(globalType.getShape(), from, mesh);
      for (const ReshardStep &step : planReshard(from, rs.getSharding())) {
        RankedTensorType in = globalType.clone(shape);
        int64_t n = mesh.getGroupSize(step.axes);
        switch (step.kind) {
        case ReshardStep::Kind::AllGather:
          shape[step.dim] *= n;
          break;
        case ReshardStep::Kind::ReduceScatter:
        case ReshardStep::Kind::AllSlice:
          shape[step.dim] /= n;
          break;
        case ReshardStep::Kind::AllToAll:
          shape[step.dim] /= n;
          shape[step.concatDim] *= n;
          break;
        default:
          break;
        }
        if (step.kind == ReshardStep::Kind::ZeroOthers)
          continue;
        CollectiveKind kind = kindOf(step.kind);
        std::optional<ReductionKind> reduction;
        if (step.kind == ReshardStep::Kind::AllReduce ||
            step.kind == ReshardStep::Kind::ReduceScatter)
          reduction = ReductionKind::Sum;
        double s = collectiveFormulaTensorBytes(
            kind, n, typeBytes(in), typeBytes(globalType.clone(shape)));
        r.collectives.push_back(
            makeEntry(kind, reduction, step.axes, n, in, s, loc));
      }
    }
  }

  // Peak of bytes live at once: the arguments throughout, and the op
  // results' peak.
  r.peakLiveBytes =
      r.argumentBytes +
      findLivePeak(func.getFunctionBody().front(), [&](Value v) -> double {
        return isa<RankedTensorType>(v.getType()) ? typeBytes(localType(v)) : 0;
      }).bytes;
  r.largest = r.values;
  llvm::stable_sort(r.largest, [](const ValueEntry &a, const ValueEntry &b) {
    return a.bytes > b.bytes;
  });
  if (r.largest.size() > 3)
    r.largest.resize(3);
  return r;
}

/// Bytes as a whole number (ring formulas give fractions for odd groups).
int64_t whole(double bytes) {
  return static_cast<int64_t>(std::llround(bytes));
}

void printText(llvm::raw_ostream &os, const FunctionReport &r, MeshOp mesh) {
  os << "tp-report @" << r.name << " on @" << r.mesh << " [";
  llvm::interleaveComma(llvm::zip(mesh.getAxisNames(), mesh.getAxisSizes()), os,
                        [&](auto pair) {
                          os << std::get<0>(pair) << " = " << std::get<1>(pair);
                        });
  os << "] (" << r.devices << " devices, " << (r.local ? "local" : "global")
     << " form)\n";
  os << "  values:\n";
  for (const ValueEntry &v : r.values)
    os << llvm::formatv("    {0} : {1} {2} ({3} B per device)\n", v.name,
                        v.type, v.sharding, whole(v.bytes));
  os << "  collectives:\n";
  if (r.collectives.empty())
    os << "    (none)\n";
  std::map<std::string, std::pair<int, double>> totals;
  double all = 0;
  for (const CollectiveEntry &c : r.collectives) {
    os << "    " << c.kind << (c.reduction.empty() ? "" : " " + c.reduction)
       << " over [";
    llvm::interleaveComma(c.axes, os,
                          [&](const std::string &a) { os << '"' << a << '"'; });
    os << llvm::formatv("] (n={0}) {1}: {2} B = {3}, S = {4} B  at {5}\n",
                        c.groupSize, c.type, whole(c.bytes), c.formula,
                        whole(c.tensorBytes), c.loc);
    totals[c.kind].first += 1;
    totals[c.kind].second += c.bytes;
    all += c.bytes;
  }
  os << "  totals:\n";
  for (auto &[kind, t] : totals)
    os << llvm::formatv("    {0}: {1}, {2} B\n", kind, t.first,
                        whole(t.second));
  os << llvm::formatv("    all: {0}, {1} B per device\n", r.collectives.size(),
                      whole(all));
  os << "  memory per device:\n";
  os << llvm::formatv("    arguments: {0} B\n", whole(r.argumentBytes));
  os << llvm::formatv("    peak live tensors: {0} B\n", whole(r.peakLiveBytes));
  for (const ValueEntry &v : r.largest)
    os << llvm::formatv("    largest: {0} : {1} ({2} B)\n", v.name, v.type,
                        whole(v.bytes));
  if (!r.plan)
    return;
  const PlanEntry &p = *r.plan;
  double total = p.computeSeconds + p.communicationSeconds;
  if (p.mode == "search") {
    bool adopted = p.rule == SearchRule::Adopted;
    os << "  plan (search, cost model " << p.costModel
       << (adopted ? "; adopted over the fixed point's):\n"
                   : "; the fixed point's kept):\n");
    if (p.hasFastest)
      os << llvm::formatv(
          "    the fastest plan: {0:f2} us (compute {1:f2} us, communication "
          "{2:f2} us), peak {3} B; planned again within the fixed point's "
          "bytes:\n",
          (p.fastestComputeSeconds + p.fastestCommunicationSeconds) * 1e6,
          p.fastestComputeSeconds * 1e6, p.fastestCommunicationSeconds * 1e6,
          whole(p.fastestPeakBytes));
    os << llvm::formatv("    {0}: {1:f2} us (compute {2:f2} us, "
                        "communication {3:f2} us), peak {4} B\n",
                        adopted ? "modelled step per device"
                                : "the search's plan",
                        total * 1e6, p.computeSeconds * 1e6,
                        p.communicationSeconds * 1e6, whole(p.peakBytes));
    if (p.rule == SearchRule::Inexpressible) {
      os << "    rule: the model cannot express the fixed point's plan\n";
      return;
    }
    double fixed =
        p.fixedPointComputeSeconds + p.fixedPointCommunicationSeconds;
    os << llvm::formatv(
        "    the fixed point's plan: {0:f2} us (compute {1:f2} us, "
        "communication {2:f2} us), peak {3} B\n",
        fixed * 1e6, p.fixedPointComputeSeconds * 1e6,
        p.fixedPointCommunicationSeconds * 1e6, whole(p.fixedPointPeakBytes));
    double gain = fixed > 0 ? 1 - total / fixed : 0;
    std::string budget =
        llvm::formatv("memory-per-device={0} B", whole(p.budget)).str();
    if (p.rule == SearchRule::Memory)
      os << llvm::formatv(
          "    rule: memory: the {0} plan holds more per device than the "
          "annotations' ({1} > {2} B), {3}\n",
          p.hasFastest ? "fastest" : "search's",
          whole(p.hasFastest ? p.fastestPeakBytes : p.peakBytes),
          whole(p.fixedPointPeakBytes),
          p.budget > 0 ? "and over " + budget
                       : std::string("and no memory-per-device allows it"));
    else if (p.rule == SearchRule::Margin && p.hasFastest)
      os << llvm::formatv(
          "    rule: margin: the fastest plan is modelled {0:f1}% faster and "
          "the search's {1:f1}%, neither more than the model's error margin "
          "({2:f0}%)\n",
          (fixed > 0
               ? 1 - (p.fastestComputeSeconds + p.fastestCommunicationSeconds) /
                         fixed
               : 0) *
              100,
          gain * 100, p.margin * 100);
    else if (p.rule == SearchRule::Margin)
      os << llvm::formatv("    rule: margin: modelled {0:f1}% faster, not more "
                          "than the model's error margin ({1:f0}%)\n",
                          gain * 100, p.margin * 100);
    else if (p.rule == SearchRule::Adopted)
      os << llvm::formatv(
          "    rule: adopted: modelled {0:f1}% faster, more than the model's "
          "error margin ({1:f0}%), {2}\n",
          gain * 100, p.margin * 100,
          p.peakBytes <= p.fixedPointPeakBytes
              ? std::string("holding no more per device")
              : "within " + budget);
    return;
  }
  os << "  plan (auto-plan, cost model " << p.costModel << ", "
     << (p.budget > 0 ? llvm::formatv("{0} B per device", whole(p.budget)).str()
                      : std::string("no memory budget"))
     << "):\n";
  os << llvm::formatv("    modelled step per device: {0:f2} us (compute "
                      "{1:f2} us, communication {2:f2} us); arguments {3} B, "
                      "activations at the peak {4} B\n",
                      total * 1e6, p.computeSeconds * 1e6,
                      p.communicationSeconds * 1e6, whole(p.argumentBytes),
                      whole(p.activationBytes));
  for (const WeightEntry &w : p.weights) {
    os << "    " << w.name << " : " << w.type << " " << w.split << " "
       << w.sharding;
    if (w.layers > 1)
      os << " (layer x" << w.layers << ")";
    os << "\n";
    if (!w.hasRunnerUp)
      continue;
    os << llvm::formatv(
        "      runner-up {0} {1}: {2:f2} us modelled ({3}{4:f2} "
        "us), {5} B per device{6}\n",
        w.runnerUpSplit, w.runnerUp, w.runnerUpSeconds * 1e6,
        w.runnerUpSeconds >= total ? "+" : "-",
        std::abs(w.runnerUpSeconds - total) * 1e6, whole(w.runnerUpBytes),
        w.overBudget ? " (over budget)" : "");
  }
}

llvm::json::Value toJson(const FunctionReport &r) {
  llvm::json::Array values, collectives, largest;
  for (const ValueEntry &v : r.values)
    values.push_back(llvm::json::Object{{"name", v.name},
                                        {"type", v.type},
                                        {"sharding", v.sharding},
                                        {"bytes_per_device", v.bytes}});
  std::map<std::string, std::pair<int64_t, double>> totals;
  double all = 0;
  for (const CollectiveEntry &c : r.collectives) {
    llvm::json::Array axes;
    for (const std::string &a : c.axes)
      axes.push_back(a);
    collectives.push_back(llvm::json::Object{{"kind", c.kind},
                                             {"reduction", c.reduction},
                                             {"axes", std::move(axes)},
                                             {"group_size", c.groupSize},
                                             {"type", c.type},
                                             {"S", c.tensorBytes},
                                             {"bytes_per_device", c.bytes},
                                             {"formula", c.formula},
                                             {"loc", c.loc}});
    totals[c.kind].first += 1;
    totals[c.kind].second += c.bytes;
    all += c.bytes;
  }
  llvm::json::Object totalsJson;
  for (auto &[kind, t] : totals)
    totalsJson[kind] =
        llvm::json::Object{{"count", t.first}, {"bytes_per_device", t.second}};
  totalsJson["all"] =
      llvm::json::Object{{"count", static_cast<int64_t>(r.collectives.size())},
                         {"bytes_per_device", all}};
  for (const ValueEntry &v : r.largest)
    largest.push_back(llvm::json::Object{
        {"name", v.name}, {"type", v.type}, {"bytes", v.bytes}});
  llvm::json::Object json{
      {"function", r.name},
      {"mesh", r.mesh},
      {"devices", r.devices},
      {"form", r.local ? "local" : "global"},
      {"values", std::move(values)},
      {"collectives", std::move(collectives)},
      {"totals", std::move(totalsJson)},
      {"memory", llvm::json::Object{{"argument_bytes", r.argumentBytes},
                                    {"peak_live_bytes", r.peakLiveBytes},
                                    {"largest", std::move(largest)}}}};
  if (r.plan) {
    llvm::json::Array weights;
    for (const WeightEntry &w : r.plan->weights) {
      llvm::json::Object o{{"name", w.name},
                           {"type", w.type},
                           {"sharding", w.sharding},
                           {"split", w.split},
                           {"layers", w.layers}};
      if (w.hasRunnerUp)
        o["runner_up"] = llvm::json::Object{{"sharding", w.runnerUp},
                                            {"split", w.runnerUpSplit},
                                            {"seconds", w.runnerUpSeconds},
                                            {"argument_bytes", w.runnerUpBytes},
                                            {"over_budget", w.overBudget}};
      weights.push_back(std::move(o));
    }
    json["plan"] = llvm::json::Object{
        {"mode", r.plan->mode},
        {"cost_model", r.plan->costModel},
        {"memory_per_device", r.plan->budget},
        {"compute_seconds", r.plan->computeSeconds},
        {"communication_seconds", r.plan->communicationSeconds},
        {"argument_bytes", r.plan->argumentBytes},
        {"activation_bytes", r.plan->activationBytes},
        {"weights", std::move(weights)}};
    if (r.plan->mode == "search") {
      llvm::json::Object &plan = *json["plan"].getAsObject();
      plan["fixed_point_compute_seconds"] = r.plan->fixedPointComputeSeconds;
      plan["fixed_point_communication_seconds"] =
          r.plan->fixedPointCommunicationSeconds;
      plan["peak_bytes"] = r.plan->peakBytes;
      plan["fixed_point_peak_bytes"] = r.plan->fixedPointPeakBytes;
      plan["margin"] = r.plan->margin;
      if (r.plan->hasFastest)
        plan["fastest"] = llvm::json::Object{
            {"compute_seconds", r.plan->fastestComputeSeconds},
            {"communication_seconds", r.plan->fastestCommunicationSeconds},
            {"peak_bytes", r.plan->fastestPeakBytes}};
      if (r.plan->rule)
        plan["rule"] = stringifySearchRule(*r.plan->rule);
    }
  }
  return json;
}

struct ReportPass : public tp::impl::ReportPassBase<ReportPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (format != "text" && format != "json") {
      module.emitError() << "tp-report: unknown format '" << format
                         << "'; expected 'text' or 'json'";
      return signalPassFailure();
    }
    SymbolTableCollection symbols;
    std::vector<std::pair<FunctionReport, MeshOp>> reports;
    for (auto func : module.getOps<FunctionOpInterface>()) {
      if (func.isExternal())
        continue;
      // The function's mesh: tp.spmd, else the first sharding's.
      FlatSymbolRefAttr ref =
          func->getAttrOfType<FlatSymbolRefAttr>(TPDialect::kSpmdAttrName);
      for (unsigned i = 0; i < func.getNumArguments() && !ref; ++i)
        if (auto s = func.getArgAttrOfType<ShardingAttr>(
                i, TPDialect::kShardingAttrName))
          ref = s.getMesh();
      if (!ref)
        continue;
      auto mesh = symbols.lookupNearestSymbolFrom<MeshOp>(func, ref.getAttr());
      if (!mesh)
        continue;
      reports.push_back({reportFunction(func, mesh), mesh});
    }

    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file;
    llvm::raw_ostream *os = &llvm::errs();
    if (!output.empty()) {
      file = openOutputFile(output, &error);
      if (!file) {
        module.emitError() << "tp-report: cannot write '" << output
                           << "': " << error;
        return signalPassFailure();
      }
      os = &file->os();
    }
    if (format == "json") {
      llvm::json::Array functions;
      for (auto &[r, mesh] : reports)
        functions.push_back(toJson(r));
      *os << llvm::formatv("{0:2}\n",
                           llvm::json::Value(llvm::json::Object{
                               {"functions", std::move(functions)}}));
    } else {
      for (auto &[r, mesh] : reports)
        printText(*os, r, mesh);
    }
    if (file)
      file->keep();
    markAllAnalysesPreserved();
  }
};

} // namespace
