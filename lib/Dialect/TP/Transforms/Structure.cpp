//===- Structure.cpp - What propagation and partitioning can split --------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Structure.h"

#include "tp/Dialect/TP/IR/TPAttrs.h"
#include "tp/Dialect/TP/IR/TPDialect.h"
#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

bool isTensor(Value v) { return isa<TensorType>(v.getType()); }

/// True when `op` or anything nested in it uses or defines a tensor.
bool touchesTensors(Operation *op) {
  WalkResult result = op->walk([](Operation *nested) {
    if (llvm::any_of(nested->getOperands(), isTensor) ||
        llvm::any_of(nested->getResults(), isTensor))
      return WalkResult::interrupt();
    for (Region &region : nested->getRegions())
      for (Block &block : region)
        if (llvm::any_of(block.getArguments(), isTensor))
          return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// True when something nested in `op` is a tp op (a constraint, a reshard)
/// or carries a sharding that splits or is pending: `op` is not simply
/// replicated.
bool holdsShardings(Operation *op) {
  WalkResult result = op->walk([&](Operation *nested) {
    if (nested == op)
      return WalkResult::advance();
    if (isa<TPDialect>(nested->getDialect()))
      return WalkResult::interrupt();
    if (auto shardings =
            nested->getAttrOfType<ArrayAttr>(TPDialect::kShardingsAttrName))
      for (Attribute entry : shardings)
        if (auto sharding = dyn_cast<ShardingAttr>(entry);
            sharding && !sharding.isFullyReplicated())
          return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

} // namespace

LogicalResult mlir::tp::checkSingleBlock(FunctionOpInterface func) {
  Region &body = func.getFunctionBody();
  if (body.empty() || body.hasOneBlock())
    return success();
  return func.emitOpError()
         << "has " << body.getBlocks().size()
         << " blocks; sharding handles functions of one block (structured "
            "control flow), not branches between blocks";
}

LogicalResult mlir::tp::checkShardableStructure(FunctionOpInterface func) {
  if (failed(checkSingleBlock(func)))
    return failure();
  WalkResult result =
      func.walk([&](Operation *op) {
        if (op == func.getOperation())
          return WalkResult::advance();
        // Region control flow has regions: most ops are ruled out without
        // an interface query.
        if (op->getNumRegions() > 0 && isa<RegionBranchOpInterface>(op) &&
            touchesTensors(op) && holdsShardings(op)) {
          op->emitOpError()
              << "is control flow over tensors with shardings inside, which "
                 "partitioning does not split yet (it runs such regions "
                 "replicated only); unroll the loop or move the constraint out "
                 "of the region";
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
  return failure(result.wasInterrupted());
}

/// The value whose memory `v` is: a reshape's result is a view of its
/// source (what bufferization makes of it), anything else its own.
static Value storageOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

LiveRanges mlir::tp::findLiveRanges(Block &body) {
  DenseMap<Operation *, unsigned> position;
  position.reserve(body.getOperations().size());
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = i;
  // A view's users keep its storage live; the view holds no bytes of its own.
  DenseMap<Value, unsigned> lastUse;
  lastUse.reserve(body.getOperations().size());
  for (Operation &op : body)
    for (Value r : op.getResults()) {
      std::optional<unsigned> last;
      for (Operation *user : r.getUsers())
        if (Operation *top = body.findAncestorOpInBlock(*user))
          last = std::max(last.value_or(0), position.lookup(top));
      if (!last)
        continue;
      unsigned &storageLast = lastUse[storageOf(r)];
      storageLast = std::max(storageLast, *last);
    }
  LiveRanges live;
  live.numOps = position.size();
  for (auto [i, op] : llvm::enumerate(body))
    for (Value r : op.getResults()) {
      auto last = lastUse.find(r);
      if (storageOf(r) != r || last == lastUse.end())
        continue;
      live.ranges.push_back(
          {r, static_cast<unsigned>(i), std::max<unsigned>(i, last->second)});
    }
  return live;
}

LivePeak mlir::tp::findLivePeak(const LiveRanges &live,
                                function_ref<double(Value)> bytesOf) {
  SmallVector<double> bytes(live.ranges.size(), 0);
  SmallVector<double> delta(live.numOps + 1, 0);
  for (auto [range, b] : llvm::zip(live.ranges, bytes)) {
    b = bytesOf(range.value);
    if (b <= 0)
      continue;
    delta[range.from] += b;
    delta[range.to + 1] -= b;
  }
  LivePeak peak;
  double now = 0;
  unsigned at = 0;
  for (auto [i, d] : llvm::enumerate(delta)) {
    now += d;
    if (now > peak.bytes) {
      peak.bytes = now;
      at = i;
    }
  }
  for (auto [range, b] : llvm::zip(live.ranges, bytes))
    if (b > 0 && peak.bytes > 0 && range.from <= at && at <= range.to)
      peak.values.push_back(range.value);
  return peak;
}

LivePeak mlir::tp::findLivePeak(Block &body,
                                function_ref<double(Value)> bytesOf) {
  return findLivePeak(findLiveRanges(body), bytesOf);
}

FailureOr<MeshOp> mlir::tp::findFunctionMesh(FunctionOpInterface func,
                                             SymbolTableCollection &symbols) {
  FlatSymbolRefAttr found;
  std::optional<Location> foundLoc;
  std::string foundWhat;
  // `what` names the holder, spelled out only for a diagnostic.
  auto consider = [&](ShardingAttr s, Location loc,
                      function_ref<std::string()> what) -> LogicalResult {
    if (!s)
      return success();
    if (!found) {
      found = s.getMesh();
      foundLoc = loc;
      foundWhat = what();
      return success();
    }
    if (found == s.getMesh())
      return success();
    InFlightDiagnostic diag = emitError(loc)
                              << what() << " uses mesh " << s.getMesh()
                              << " but " << foundWhat << " uses " << found
                              << "; a function is partitioned over one mesh";
    diag.attachNote(*foundLoc) << foundWhat << " is here";
    return failure();
  };
  auto name = [&] { return ("@" + func.getName()).str(); };
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (failed(consider(func.getArgAttrOfType<ShardingAttr>(
                            i, TPDialect::kShardingAttrName),
                        func.getArgument(i).getLoc(), [&] {
                          return "argument #" + std::to_string(i) + " of " +
                                 name();
                        })))
      return failure();
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (failed(consider(func.getResultAttrOfType<ShardingAttr>(
                            i, TPDialect::kShardingAttrName),
                        func.getLoc(), [&] {
                          return "result #" + std::to_string(i) + " of " +
                                 name();
                        })))
      return failure();
  WalkResult walk = func.getFunctionBody().walk([&](Operation *op) {
    return failed(consider(
               getOwnSharding(op), op->getLoc(),
               [&] { return "'" + op->getName().getStringRef().str() + "'"; }))
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (!found)
    return MeshOp();
  return symbols.lookupNearestSymbolFrom<MeshOp>(func, found.getAttr());
}

void DiscardableAttrWriter::set(Operation *op, Attribute value) {
  // Without properties, a registered op's inherent attributes share its
  // dictionary: the general path.
  if (!op->getPropertiesStorageSize() &&
      !op->getName().getAttributeNames().empty()) {
    op->setAttr(name, value);
    return;
  }
  DictionaryAttr old = op->getRawDictionaryAttrs();
  auto [it, inserted] = made.try_emplace({old, value}, DictionaryAttr());
  if (inserted) {
    NamedAttrList attrs(old);
    attrs.set(name, value);
    it->second = attrs.getDictionary(op->getContext());
  }
  op->setDiscardableAttrs(it->second);
}
