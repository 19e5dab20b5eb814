//===- RecordManifest.cpp - What the runtime needs of each function -------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Writes the program manifest (format in Passes.td) while functions still
// have tensor types and shardings: for each public function with a body, its
// mesh and each argument's and result's global shape, element type and
// sharding.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/RuntimeCalls.h"
#include "tp/Conversion/Passes.h"
#include "tp/Conversion/Targets.h"

#include "tp/Dialect/TP/IR/TPDialect.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Dialect/TP/IR/UpstreamChecks.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tp {
#define GEN_PASS_DEF_RECORDMANIFESTPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// The runtime's name of an element type (tprt_dtype), or empty.
StringRef dtypeName(Type type) {
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  if (type.isInteger(32))
    return "i32";
  if (type.isInteger(64))
    return "i64";
  return "";
}

/// Axis indices of `axes` on `mesh`, comma-separated. The sharding was
/// checked against `mesh` (checkSharding).
void printAxes(llvm::raw_ostream &os, ArrayRef<StringRef> axes, MeshOp mesh) {
  llvm::interleave(
      axes, os, [&](StringRef a) { os << *mesh.getAxisIndex(a); }, ",");
}

/// A sharding the manifest can describe: on the function's mesh, with one
/// entry per dimension, axes of that mesh.
LogicalResult checkSharding(FunctionOpInterface func, StringRef what,
                            unsigned index, ShardingAttr sharding,
                            RankedTensorType type, MeshOp mesh) {
  if (!sharding)
    return success();
  if (!mesh)
    return func.emitOpError()
           << what << " #" << index << " has a sharding (" << sharding
           << ") but the function is not in local form ('"
           << TPDialect::kSpmdAttrName << "' names no mesh)";
  if (sharding.getMesh().getValue() != mesh.getSymName())
    return func.emitOpError()
           << what << " #" << index << " is sharded over @"
           << sharding.getMesh().getValue() << "; the function runs on @"
           << mesh.getSymName();
  if (static_cast<int64_t>(sharding.getDims().size()) != type.getRank())
    return func.emitOpError()
           << what << " #" << index << " has a sharding of "
           << sharding.getDims().size() << " dimensions for type " << type;
  for (unsigned d = 0; d <= sharding.getDims().size(); ++d)
    for (StringRef axis : d < sharding.getDims().size()
                              ? sharding.getDimAxes(d)
                              : sharding.getPartialAxes())
      if (!mesh.getAxisIndex(axis))
        return func.emitOpError()
               << what << " #" << index << " names axis '" << axis
               << "', which mesh @" << mesh.getSymName() << " does not have";
  return success();
}

/// One `arg` or `result` line; fails with a located error.
LogicalResult describe(llvm::raw_ostream &os, FunctionOpInterface func,
                       StringRef what, unsigned index, Type type,
                       ShardingAttr sharding, StringAttr name, MeshOp mesh) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return func.emitOpError()
           << what << " #" << index << " has type " << type
           << "; the CPU runtime takes statically shaped ranked tensors";
  if (llvm::is_contained(tensor.getShape(), 0))
    return func.emitOpError()
           << what << " #" << index << " has type " << type
           << ", with a dimension of size 0; the CPU runtime takes tensors "
              "that hold at least one element";
  StringRef dtype = dtypeName(tensor.getElementType());
  if (dtype.empty())
    return func.emitOpError()
           << what << " #" << index << " has element type "
           << tensor.getElementType()
           << "; the CPU runtime takes f32, f64, f16, bf16, i32 or i64";
  if (failed(checkSharding(func, what, index, sharding, tensor, mesh)))
    return failure();
  SmallVector<int64_t> shape(tensor.getShape());
  if (mesh && sharding)
    shape = getGlobalShape(shape, sharding, mesh);
  os << what << " " << index << " " << dtype << " " << shape.size();
  for (int64_t d : shape)
    os << " " << d;
  os << " s=";
  for (unsigned d = 0; d < shape.size(); ++d) {
    if (d)
      os << "/";
    if (mesh && sharding)
      printAxes(os, sharding.getDimAxes(d), mesh);
  }
  os << "|";
  if (mesh && sharding)
    printAxes(os, sharding.getPartialAxes(), mesh);
  if (name) {
    os << " ";
    printManifestName(os, name.getValue());
  }
  os << "\n";
  return success();
}

/// Refuses function attributes that the LLVM lowering would misread: it
/// copies a function's discardable attributes onto the llvm.func it makes,
/// where an unprefixed name such as `linkage` or `personality` becomes that
/// op's own attribute, whatever its value (a symbol where llvm.func expects
/// a #llvm.linkage crashes its verifier).
LogicalResult checkFunctionAttrs(ModuleOp module) {
  std::optional<RegisteredOperationName> llvmFunc =
      RegisteredOperationName::lookup(LLVM::LLVMFuncOp::getOperationName(),
                                      module.getContext());
  if (!llvmFunc)
    return success();
  ArrayRef<StringAttr> reserved = llvmFunc->getAttributeNames();
  for (auto func : module.getOps<FunctionOpInterface>())
    for (NamedAttribute attr : func->getDiscardableAttrs())
      if (llvm::is_contained(reserved, attr.getName()))
        return func.emitOpError()
               << "has attribute '" << attr.getName().getValue()
               << "' = " << attr.getValue()
               << ", a name the LLVM lowering takes as llvm.func's own '"
               << attr.getName().getValue()
               << "'; remove it or give it a dialect prefix";
  return success();
}

struct RecordManifestPass
    : public tp::impl::RecordManifestPassBase<RecordManifestPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!lookupTarget(target)) {
      module.emitError() << "tp-record-manifest: target '" << target
                         << "' is not one of " << getTargetNames();
      return signalPassFailure();
    }
    if (matmulPrecision != "highest" && matmulPrecision != "high" &&
        matmulPrecision != "medium") {
      module.emitError() << "tp-record-manifest: matmul precision '"
                         << matmulPrecision
                         << "' is not one of highest, high, medium";
      return signalPassFailure();
    }
    std::string text = "tprt-manifest 4\nabi " +
                       std::to_string(kRuntimeAbiVersion) + "\ntarget " +
                       target + "\n";
    if (matmulPrecision != "highest")
      text += "precision " + matmulPrecision + "\n";
    llvm::raw_string_ostream os(text);
    SymbolTableCollection symbols;
    if (failed(checkFunctionAttrs(module)))
      return signalPassFailure();
    // Bufferization would turn it into a memref.expand_shape that does not
    // verify (docs/known-issues.md).
    if (failed(checkExpandShapeSizes(module)) ||
        failed(checkReassociations(module)))
      return signalPassFailure();
    for (auto func : module.getOps<FunctionOpInterface>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      MeshOp mesh;
      if (Attribute spmd = func->getAttr(TPDialect::kSpmdAttrName)) {
        auto ref = dyn_cast<FlatSymbolRefAttr>(spmd);
        if (ref)
          mesh = symbols.lookupNearestSymbolFrom<MeshOp>(func, ref);
        if (!mesh) {
          func.emitOpError() << "'" << TPDialect::kSpmdAttrName << "' is "
                             << spmd << ", which names no tp.mesh";
          return signalPassFailure();
        }
      }
      os << "func ";
      printManifestName(os, func.getName());
      os << " " << func.getNumArguments() << " " << func.getNumResults()
         << "\n";
      if (mesh) {
        os << "mesh ";
        printManifestName(os, mesh.getSymName());
        os << " " << mesh.getRank();
        for (auto [name, size] :
             llvm::zip(mesh.getAxisNames(), mesh.getAxisSizes())) {
          os << " ";
          printManifestName(os, cast<StringAttr>(name).getValue());
          os << " " << size;
        }
        os << "\n";
      } else {
        os << "mesh - 0\n";
      }
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (failed(describe(
                os, func, "arg", i, func.getArgumentTypes()[i],
                func.getArgAttrOfType<ShardingAttr>(
                    i, TPDialect::kShardingAttrName),
                func.getArgAttrOfType<StringAttr>(i, TPDialect::kNameAttrName),
                mesh)))
          return signalPassFailure();
      for (unsigned i = 0; i < func.getNumResults(); ++i)
        if (failed(describe(os, func, "result", i, func.getResultTypes()[i],
                            func.getResultAttrOfType<ShardingAttr>(
                                i, TPDialect::kShardingAttrName),
                            func.getResultAttrOfType<StringAttr>(
                                i, TPDialect::kNameAttrName),
                            mesh)))
          return signalPassFailure();
      // Donated arguments (tp.donate): the result is written in the
      // argument's buffer, which the runtime gives it.
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (auto donated = func.getArgAttrOfType<IntegerAttr>(
                i, TPDialect::kDonateAttrName))
          os << "donate " << donated.getInt() << " " << i << "\n";
      os << "end\n";
    }
    module->setAttr(kManifestAttrName,
                    StringAttr::get(module.getContext(), text));
    // The shardings live on in the manifest; left on the ops, lowering would
    // copy them onto ops they do not describe (scalar ops in linalg bodies).
    // The arguments' and results' stay until tp-convert-collectives-to-runtime
    // (tp-fold-addends-into-gemm reads which inputs every device shares).
    removeDiscardableAttrs(module, [](StringRef name) {
      return name == TPDialect::kShardingsAttrName ||
             name == TPDialect::kOriginAttrName ||
             name == TPDialect::kNameAttrName ||
             name == TPDialect::kOriginsAttrName;
    });
  }
};

} // namespace
