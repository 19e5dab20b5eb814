//===- ShardingRule.h - Ops described as factors ----------------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A sharding rule describes an op einsum-style: the op iterates over a set of
// factors (the loops of a linalg op, the dimensions of an elementwise op, the
// pieces of a reshape's reassociation group), and every dimension of every
// tensor operand and result is a product of factors, major to minor. Sharding a
// factor over mesh axes splits every dimension it appears in:
//
//   matmul  (i, k), (k, j) -> (i, j)     i, j parallel; k reduction
//   collapse [B, S, H, D] -> [B*S, H*D]  each output dim holds two factors
//
// Propagation and partitioning read only these rules; a new op needs a rule,
// not a new pass.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_IR_SHARDINGRULE_H
#define TP_DIALECT_TP_IR_SHARDINGRULE_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include <string>

namespace mlir::tp {

/// How a factor may be split.
enum class FactorKind {
  /// Every tensor it appears in is split the same way; no communication.
  Parallel,
  /// Contracted: splitting it leaves each result a partial sum.
  Reduction,
  /// It cannot be split (softmax's reduced dimension, a sliced dimension).
  NeedReplication,
};

StringRef stringifyFactorKind(FactorKind kind);

class ShardingRule {
public:
  /// The factors of one tensor dimension, major to minor. Empty: the dimension
  /// has size 1 or is indexed by something other than a plain factor; it is
  /// never split.
  using DimFactors = SmallVector<int64_t, 2>;
  /// One entry per dimension; a non-tensor operand or result has none.
  using TensorFactors = SmallVector<DimFactors>;

  /// Adds a factor and returns its index.
  int64_t addFactor(int64_t size, FactorKind kind);

  unsigned getNumFactors() const { return factorSizes.size(); }
  int64_t getFactorSize(int64_t factor) const { return factorSizes[factor]; }
  FactorKind getFactorKind(int64_t factor) const { return factorKinds[factor]; }
  void setFactorKind(int64_t factor, FactorKind kind) {
    factorKinds[factor] = kind;
  }

  SmallVector<TensorFactors> &getOperands() { return operands; }
  SmallVector<TensorFactors> &getResults() { return results; }
  const SmallVector<TensorFactors> &getOperands() const { return operands; }
  const SmallVector<TensorFactors> &getResults() const { return results; }

  /// Readable form, e.g. `([i, k], [k, j]) -> ([i, j]) {i=16, j=2048,
  /// k=512 reduction}`; factors are named i, j, k, ... in order.
  std::string str() const;

private:
  SmallVector<int64_t> factorSizes;
  SmallVector<FactorKind> factorKinds;
  SmallVector<TensorFactors> operands;
  SmallVector<TensorFactors> results;
};

} // namespace mlir::tp

#endif // TP_DIALECT_TP_IR_SHARDINGRULE_H
