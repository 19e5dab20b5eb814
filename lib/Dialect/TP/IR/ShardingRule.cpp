//===- ShardingRule.cpp - Ops described as factors ------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/IR/ShardingRule.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tp;

StringRef mlir::tp::stringifyFactorKind(FactorKind kind) {
  switch (kind) {
  case FactorKind::Parallel:
    return "parallel";
  case FactorKind::Reduction:
    return "reduction";
  case FactorKind::NeedReplication:
    return "need-replication";
  }
  llvm_unreachable("unknown factor kind");
}

int64_t ShardingRule::addFactor(int64_t size, FactorKind kind) {
  factorSizes.push_back(size);
  factorKinds.push_back(kind);
  return factorSizes.size() - 1;
}

/// i, j, k, ..., z, then f26, f27, ...
static std::string factorName(int64_t factor) {
  if (factor < 18)
    return std::string(1, static_cast<char>('i' + factor));
  return "f" + std::to_string(factor);
}

static void printTensors(llvm::raw_ostream &os,
                         ArrayRef<ShardingRule::TensorFactors> tensors) {
  os << "(";
  llvm::interleaveComma(tensors, os, [&](const ShardingRule::TensorFactors &t) {
    os << "[";
    llvm::interleaveComma(t, os, [&](const ShardingRule::DimFactors &dim) {
      if (dim.empty())
        os << "1";
      llvm::interleave(
          dim, os, [&](int64_t f) { os << factorName(f); }, "*");
    });
    os << "]";
  });
  os << ")";
}

std::string ShardingRule::str() const {
  std::string result;
  llvm::raw_string_ostream os(result);
  printTensors(os, operands);
  os << " -> ";
  printTensors(os, results);
  os << " {";
  for (unsigned f = 0; f < getNumFactors(); ++f) {
    if (f)
      os << ", ";
    os << factorName(f) << "=";
    if (ShapedType::isDynamic(factorSizes[f]))
      os << "?";
    else
      os << factorSizes[f];
    if (factorKinds[f] != FactorKind::Parallel)
      os << " " << stringifyFactorKind(factorKinds[f]);
  }
  os << "}";
  return result;
}
