//===- TPDialect.cpp - The tp dialect -------------------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Dialect registration and the verifiers of the dialect's discardable
// attributes (`tp.sharding`, `tp.shardings`, `tp.spmd`).
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/IR/TPDialect.h"
#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

using namespace mlir;
using namespace mlir::tp;

#include "tp/Dialect/TP/IR/TPDialect.cpp.inc"

void TPDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tp/Dialect/TP/IR/TPOps.cpp.inc"
      >();
  registerAttributes();
}

//===----------------------------------------------------------------------===//
// Discardable attribute verification
//===----------------------------------------------------------------------===//

/// Verifies `tp.donate` on argument `index` of function-like `op`: a result
/// of the same type and, where either has one, the same sharding, donated
/// to by this argument alone.
template <typename EmitError>
static LogicalResult verifyDonation(Operation *op, unsigned index,
                                    Attribute value, EmitError emitError) {
  auto func = dyn_cast<FunctionOpInterface>(op);
  auto result = dyn_cast<IntegerAttr>(value);
  if (!func || !result)
    return emitError() << "'" << TPDialect::kDonateAttrName
                       << "' must be an integer (a result's index) on a "
                          "function argument, got "
                       << value;
  int64_t k = result.getInt();
  ArrayRef<Type> results = func.getResultTypes();
  if (k < 0 || k >= static_cast<int64_t>(results.size()))
    return emitError() << "donated to result #" << k
                       << ", but the function has " << results.size()
                       << " result(s)";
  Type argType = func.getArgumentTypes()[index];
  if (argType != results[k])
    return emitError() << "donated to result #" << k << " of type "
                       << results[k] << ", but the argument is " << argType
                       << "; a donated buffer must have the result's type";
  auto argSharding =
      func.getArgAttrOfType<ShardingAttr>(index, TPDialect::kShardingAttrName);
  auto resultSharding =
      func.getResultAttrOfType<ShardingAttr>(k, TPDialect::kShardingAttrName);
  if (argSharding && resultSharding && argSharding != resultSharding)
    return emitError() << "donated to result #" << k << " sharded "
                       << resultSharding << ", but the argument is sharded "
                       << argSharding
                       << "; a donated buffer must have the result's sharding";
  for (unsigned other = 0; other < func.getNumArguments(); ++other) {
    auto donated =
        func.getArgAttrOfType<IntegerAttr>(other, TPDialect::kDonateAttrName);
    if (other != index && donated && donated.getInt() == k)
      return emitError() << "donated to result #" << k << ", as argument #"
                         << other << " is: a result takes one donated buffer";
  }
  return success();
}

/// Verifies `tp.sharding` on argument or result `index` of function-like `op`.
static LogicalResult verifyFunctionSharding(Operation *op, bool isResult,
                                            unsigned index,
                                            NamedAttribute attr) {
  StringRef what = isResult ? "result" : "argument";
  auto emitError = [&]() {
    return op->emitOpError() << what << " #" << index << ": ";
  };
  if (attr.getName() == TPDialect::kOriginAttrName ||
      attr.getName() == TPDialect::kNameAttrName) {
    if (!isa<StringAttr>(attr.getValue()))
      return emitError() << "'" << attr.getName().getValue()
                         << "' must be a string, got " << attr.getValue();
    return success();
  }
  if (attr.getName() == TPDialect::kDonateAttrName && !isResult)
    return verifyDonation(op, index, attr.getValue(), emitError);
  if (attr.getName() != TPDialect::kShardingAttrName)
    return emitError() << "unknown tp attribute '" << attr.getName().getValue()
                       << "'; expected '" << TPDialect::kShardingAttrName
                       << "', '" << TPDialect::kOriginAttrName << "', '"
                       << TPDialect::kNameAttrName << "' or (on an argument) '"
                       << TPDialect::kDonateAttrName << "'";
  auto sharding = dyn_cast<ShardingAttr>(attr.getValue());
  if (!sharding)
    return emitError() << "'" << TPDialect::kShardingAttrName
                       << "' must be a #tp.sharding, got " << attr.getValue();

  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return emitError() << "'" << TPDialect::kShardingAttrName
                       << "' is only valid on function arguments and results";
  ArrayRef<Type> types =
      isResult ? func.getResultTypes() : func.getArgumentTypes();
  if (index >= types.size())
    return emitError() << "no such " << what;
  bool local = op->hasAttr(TPDialect::kSpmdAttrName);
  // A function in local form runs on one mesh; its arguments and results
  // are sharded over that mesh (the runtime scatters and gathers by it).
  if (auto spmd =
          op->getAttrOfType<FlatSymbolRefAttr>(TPDialect::kSpmdAttrName);
      spmd && sharding.getMesh() != spmd)
    return emitError() << "is sharded over " << sharding.getMesh()
                       << " but the function runs on " << spmd << " ("
                       << TPDialect::kSpmdAttrName << ")";
  return verifyShardingFor(sharding, types[index], op, local, emitError);
}

LogicalResult TPDialect::verifyRegionArgAttribute(Operation *op,
                                                  unsigned /*regionIndex*/,
                                                  unsigned argIndex,
                                                  NamedAttribute attr) {
  return verifyFunctionSharding(op, /*isResult=*/false, argIndex, attr);
}

LogicalResult TPDialect::verifyRegionResultAttribute(Operation *op,
                                                     unsigned /*regionIndex*/,
                                                     unsigned resultIndex,
                                                     NamedAttribute attr) {
  return verifyFunctionSharding(op, /*isResult=*/true, resultIndex, attr);
}

/// Verifies `tp.shardings`: one sharding per result of `op`, or, for a
/// bufferized destination-style op (no results), one per buffer it writes.
static LogicalResult verifyResultShardings(Operation *op, Attribute value) {
  auto array = dyn_cast<ArrayAttr>(value);
  if (!array)
    return op->emitOpError()
           << "'" << TPDialect::kShardingsAttrName
           << "' must be an array of #tp.sharding, got " << value;
  SmallVector<Value> described(op->getResults());
  auto dps = dyn_cast<DestinationStyleOpInterface>(op);
  bool bufferized = dps && op->getNumResults() == 0;
  if (bufferized)
    described.assign(dps.getDpsInits().begin(), dps.getDpsInits().end());
  if (array.size() != described.size())
    return op->emitOpError()
           << "'" << TPDialect::kShardingsAttrName << "' has " << array.size()
           << " entries but the op has " << described.size()
           << (bufferized ? " output buffers" : " results")
           << "; expected one sharding per "
           << (bufferized ? "output buffer" : "result");
  bool local = isInLocalForm(op);
  for (auto [index, entry] : llvm::enumerate(array)) {
    auto emitError = [&, index = index]() {
      return op->emitOpError() << "'" << TPDialect::kShardingsAttrName
                               << "' entry #" << index << ": ";
    };
    auto sharding = dyn_cast<ShardingAttr>(entry);
    if (!sharding)
      return emitError() << "expected a #tp.sharding, got " << entry;
    Type type = described[index].getType();
    if (isa<RankedTensorType, MemRefType>(type)) {
      if (failed(verifyShardingFor(sharding, type, op, local, emitError)))
        return failure();
      continue;
    }
    // A non-tensor result (an index, a scalar) is described by a rank-0
    // sharding: it can only be replicated.
    if (sharding.getRank() != 0 || sharding.isPartial())
      return emitError() << "result of non-tensor type " << type
                         << " must have a rank-0, non-partial sharding, got "
                         << sharding;
    if (failed(verifyShardingFor(sharding, RankedTensorType::get({}, type), op,
                                 local, emitError)))
      return failure();
  }
  return success();
}

LogicalResult TPDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kShardingsAttrName)
    return verifyResultShardings(op, attr.getValue());
  if (name == kSpmdAttrName) {
    if (!isa<FunctionOpInterface>(op))
      return op->emitOpError()
             << "'" << kSpmdAttrName << "' is only valid on functions";
    auto ref = dyn_cast<FlatSymbolRefAttr>(attr.getValue());
    if (!ref)
      return op->emitOpError()
             << "'" << kSpmdAttrName
             << "' must be a flat symbol reference to a tp.mesh, got "
             << attr.getValue();
    Operation *symbol = SymbolTable::lookupNearestSymbolFrom(op, ref);
    if (!symbol)
      return op->emitOpError()
             << "'" << kSpmdAttrName << "' names unknown mesh " << ref;
    if (!isa<MeshOp>(symbol))
      return op->emitOpError()
             << "'" << kSpmdAttrName << "' names " << ref << ", which is a '"
             << symbol->getName() << "', not a tp.mesh";
    return success();
  }
  if (name == kOriginsAttrName) {
    auto array = dyn_cast<ArrayAttr>(attr.getValue());
    if (!array || array.size() != op->getNumResults() ||
        !llvm::all_of(array, [](Attribute a) { return isa<StringAttr>(a); }))
      return op->emitOpError()
             << "'" << kOriginsAttrName
             << "' must be an array of one string per result, got "
             << attr.getValue();
    return success();
  }
  if (name == kManifestAttrName) {
    if (!isa<ModuleOp>(op) || !isa<StringAttr>(attr.getValue()))
      return op->emitOpError()
             << "'" << kManifestAttrName
             << "' must be a string on a module, got " << attr.getValue();
    return success();
  }
  if (name == kPlanAttrName) {
    if (!isa<FunctionOpInterface>(op) || !isa<DictionaryAttr>(attr.getValue()))
      return op->emitOpError()
             << "'" << kPlanAttrName
             << "' must be a dictionary on a function (what auto-plan "
                "or the search chose and why), got "
             << attr.getValue();
    return success();
  }
  if (name == kCostAttrName) {
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    auto isCount = [&](StringRef key) {
      auto value = dict ? dict.getAs<IntegerAttr>(key) : IntegerAttr();
      return value && value.getType().isInteger(64) &&
             !value.getValue().isNegative();
    };
    // tensor_flops (the flops on tensor cores, part of flops) is optional.
    bool tensor = dict && dict.contains("tensor_flops");
    if (!dict || dict.size() != 3u + tensor || !isCount("bytes") ||
        !isCount("flops") || !isCount("ops") ||
        (tensor && !isCount("tensor_flops")))
      return op->emitOpError()
             << "'" << kCostAttrName
             << "' must be a dictionary of three non-negative i64 counts, "
                "{bytes, flops, ops}, and optionally tensor_flops, got "
             << attr.getValue();
    return success();
  }
  if (name == kParallelAttrName) {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<LoopLikeOpInterface>(op))
      return op->emitOpError()
             << "'" << kParallelAttrName
             << "' must be a unit attribute on a loop, got " << attr.getValue();
    return success();
  }
  if (name == kParallelBodyAttrName) {
    auto func = dyn_cast<FunctionOpInterface>(op);
    if (!isa<UnitAttr>(attr.getValue()) || !func ||
        func.getNumArguments() < 2 || func.getNumResults() != 0)
      return op->emitOpError()
             << "'" << kParallelBodyAttrName
             << "' must be a unit attribute on a function of at least two "
                "arguments (the range it runs) and no results, got "
             << attr.getValue();
    return success();
  }
  if (name == kShardingAttrName)
    return op->emitOpError()
           << "'" << kShardingAttrName
           << "' is only valid on function arguments and results; use "
              "tp.annotate to constrain an intermediate value";
  return op->emitOpError() << "unknown tp attribute '" << name
                           << "'; expected one of '" << kShardingsAttrName
                           << "', '" << kSpmdAttrName << "', '"
                           << kOriginsAttrName << "', '" << kManifestAttrName
                           << "', '" << kPlanAttrName << "', '" << kCostAttrName
                           << "', '" << kParallelAttrName << "', '"
                           << kParallelBodyAttrName << "'";
}
