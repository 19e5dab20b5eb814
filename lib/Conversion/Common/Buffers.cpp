//===- Buffers.cpp - What the lowerings ask of a buffer -------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/Buffers.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::tp;

std::optional<int64_t> tp::staticByteSize(MemRefType type) {
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  int64_t bits = type.getElementType().getIntOrFloatBitWidth();
  if (bits == 1)
    return type.getNumElements();
  if (bits % 8 != 0)
    return std::nullopt;
  return type.getNumElements() * (bits / 8);
}

BufferExtent tp::extentOf(Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  std::optional<int64_t> size =
      type.getLayout().isIdentity() ? staticByteSize(type) : std::nullopt;
  bool known = size.has_value();
  int64_t shift = 0;
  Value value = buffer;
  while (Operation *def = value.getDefiningOp()) {
    if (auto view = dyn_cast<memref::ViewOp>(def)) {
      std::optional<int64_t> at = getConstantIntValue(view.getByteShift());
      known = known && at.has_value();
      shift += at.value_or(0);
      value = view.getSource();
      continue;
    }
    if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(
            def)) {
      value = def->getOperand(0);
      continue;
    }
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      known = false;
      value = view.getViewSource();
      continue;
    }
    break;
  }
  if (!known)
    return {value, std::nullopt, std::nullopt};
  return {value, shift, shift + *size};
}

bool tp::mayAlias(Value a, Value b, func::FuncOp func) {
  if (a == b)
    return true;
  BufferExtent x = extentOf(a), y = extentOf(b);
  auto global = [](Value root) {
    auto get = root.getDefiningOp<memref::GetGlobalOp>();
    return get ? get.getNameAttr() : FlatSymbolRefAttr();
  };
  bool sameRoot =
      x.root == y.root || (global(x.root) && global(x.root) == global(y.root));
  if (sameRoot)
    return !(x.begin && y.begin && (*x.end <= *y.begin || *y.end <= *x.begin));
  enum Kind { Fresh, Global, EntryArgument, LayerArgument, Unknown };
  auto kind = [&](Value root) {
    if (isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(
            root.getDefiningOp()))
      return Fresh;
    if (global(root))
      return Global;
    auto arg = dyn_cast<BlockArgument>(root);
    if (arg && arg.getOwner() == &func.getBody().front())
      return func.isPrivate() ? LayerArgument : EntryArgument;
    return Unknown;
  };
  Kind kx = kind(x.root), ky = kind(y.root);
  return kx == Unknown || ky == Unknown ||
         (kx == LayerArgument && ky == LayerArgument);
}
