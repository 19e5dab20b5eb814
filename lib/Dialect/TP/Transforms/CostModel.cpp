//===- CostModel.cpp - Communication cost of collectives ------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/CostModel.h"

#include "mlir/IR/BuiltinTypes.h"

#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace mlir::tp;

StringRef mlir::tp::stringifyCollectiveKind(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllToAll:
    return "all_to_all";
  case CollectiveKind::AllSlice:
    return "all_slice";
  }
  llvm_unreachable("unknown collective kind");
}

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
