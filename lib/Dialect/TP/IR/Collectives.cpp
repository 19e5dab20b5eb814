//===- Collectives.cpp - The collectives and what each kind costs ---------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/IR/Collectives.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tp;

#include "tp/Dialect/TP/IR/CollectiveOpInterface.cpp.inc"

double mlir::tp::collectiveBytes(CollectiveKind kind, int64_t groupSize,
                                 double bytes) {
  if (groupSize <= 1)
    return 0;
  double n = static_cast<double>(groupSize);
  switch (kind) {
  case CollectiveKind::AllReduce:
    return 2 * (n - 1) / n * bytes;
  case CollectiveKind::AllGather:
  case CollectiveKind::ReduceScatter:
    return (n - 1) / n * bytes;
  case CollectiveKind::AllToAll:
    return (n - 1) / (n * n) * bytes;
  case CollectiveKind::AllSlice:
    return 0;
  }
  llvm_unreachable("unknown collective kind");
}

StringRef mlir::tp::collectiveFormula(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllReduce:
    return "2(n-1)/n*S";
  case CollectiveKind::AllGather:
  case CollectiveKind::ReduceScatter:
    return "(n-1)/n*S";
  case CollectiveKind::AllToAll:
    return "(n-1)/n^2*S";
  case CollectiveKind::AllSlice:
    return "0";
  }
  llvm_unreachable("unknown collective kind");
}

double mlir::tp::collectiveFormulaTensorBytes(CollectiveKind kind,
                                              int64_t groupSize,
                                              double inputBytes,
                                              double outputBytes) {
  switch (kind) {
  case CollectiveKind::AllReduce:
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllSlice:
    return inputBytes;
  case CollectiveKind::AllGather:
    return outputBytes;
  case CollectiveKind::AllToAll:
    // The whole group's tensor: each device sends (n-1)/n of its share.
    return inputBytes * static_cast<double>(groupSize);
  }
  llvm_unreachable("unknown collective kind");
}

bool mlir::tp::collectiveMovesData(CollectiveKind kind) {
  return kind != CollectiveKind::AllSlice;
}

bool mlir::tp::collectiveResultIsUniform(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllReduce:
  case CollectiveKind::AllGather:
    return true;
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllToAll:
  case CollectiveKind::AllSlice:
    return false;
  }
  llvm_unreachable("unknown collective kind");
}

double mlir::tp::elementBytes(Type type) {
  if (type.isIntOrFloat())
    return std::max<double>(1, type.getIntOrFloatBitWidth() / 8);
  if (isa<IndexType>(type))
    return 8;
  if (auto complex = dyn_cast<ComplexType>(type))
    return 2 * elementBytes(complex.getElementType());
  if (auto vector = dyn_cast<VectorType>(type); vector && !vector.isScalable())
    return static_cast<double>(vector.getNumElements()) *
           elementBytes(vector.getElementType());
  return 8;
}

double mlir::tp::shapedTypeBytes(ShapedType type) {
  double bytes = elementBytes(type.getElementType());
  for (int64_t size : type.getShape())
    bytes *= ShapedType::isDynamic(size) ? 1.0 : static_cast<double>(size);
  return bytes;
}
