//===- MixedIntegerProgram.h - The planner's integer programmes -*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The integer programmes of AutoPlan.cpp: built up column by column and row
// by row, loaded into CBC at once, or solved by the planner's own branch and
// bound over Clp's relaxations (small programmes, where CBC's setup and root
// processing cost more than the solve). Private to the planner; unit-tested
// in unittests/Dialect/TP/MixedIntegerProgramTest.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TP_LIB_DIALECT_TP_TRANSFORMS_MIXEDINTEGERPROGRAM_H
#define TP_LIB_DIALECT_TP_TRANSFORMS_MIXEDINTEGERPROGRAM_H

#include "CoinSolvers.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <limits>
#include <vector>

namespace mlir::tp {

/// A mixed-integer programme in CBC's terms, built up column by column and
/// row by row, then loaded into a model at once (Cbc_loadProblem).
struct MipBuilder {
  SmallVector<double> lower, upper, objective;
  SmallVector<int> integers;
  SmallVector<double> rowLower, rowUpper;
  struct Entry {
    int row, column;
    double coefficient;
  };
  std::vector<Entry> entries;

  void addColumn(double lb, double ub, double obj, bool integer) {
    if (integer)
      integers.push_back(lower.size());
    lower.push_back(lb);
    upper.push_back(ub);
    objective.push_back(obj);
  }
  /// A row over `n` columns: 'E' (= rhs), 'L' (<= rhs) or 'G' (>= rhs).
  void addRow(size_t n, const int *columns, const double *coefficients,
              char sense, double rhs) {
    constexpr double kInfinity = std::numeric_limits<double>::max();
    int row = rowLower.size();
    rowLower.push_back(sense == 'L' ? -kInfinity : rhs);
    rowUpper.push_back(sense == 'G' ? kInfinity : rhs);
    for (size_t k = 0; k < n; ++k)
      entries.push_back({row, columns[k], coefficients[k]});
  }
  /// The constraint matrix column-major (CSC), rows in the order they were
  /// added.
  struct Matrix {
    std::vector<CoinBigIndex> start;
    std::vector<int> index;
    std::vector<double> value;
  };
  Matrix matrix() const {
    int numColumns = lower.size();
    Matrix m;
    m.start.assign(numColumns + 1, 0);
    for (const Entry &e : entries)
      ++m.start[e.column + 1];
    for (int c = 0; c < numColumns; ++c)
      m.start[c + 1] += m.start[c];
    std::vector<CoinBigIndex> next(m.start.begin(), m.start.end() - 1);
    m.index.resize(entries.size());
    m.value.resize(entries.size());
    for (const Entry &e : entries) {
      CoinBigIndex k = next[e.column]++;
      m.index[k] = e.row;
      m.value[k] = e.coefficient;
    }
    return m;
  }
  void load(const CoinSolvers &coin, Cbc_Model *model, const Matrix &m) const {
    coin.Cbc_loadProblem(model, lower.size(), rowLower.size(), m.start.data(),
                         m.index.data(), m.value.data(), lower.data(),
                         upper.data(), objective.data(), rowLower.data(),
                         rowUpper.data());
    for (int c : integers)
      coin.Cbc_setInteger(model, c);
  }
  /// What branchAndBound ends with.
  enum class Outcome { Solved, NoneBelowCutoff, GaveUp };
  /// Solves the programme by branch and bound over its linear relaxation,
  /// depth first: Clp's dual simplex at each node, warm-started from the
  /// node above's basis; the most fractional integer column is branched on;
  /// a node whose relaxation costs no less than the best plan found (within
  /// `fractionGap` of it), or than `cutoff`, is cut off. Gives up after
  /// `maxNodes` relaxations or when the LP fails; otherwise the optimum is in
  /// `solution`, or no plan costs less than `cutoff`.
  Outcome branchAndBound(const CoinSolvers &coin, const Matrix &m,
                         double fractionGap, unsigned maxNodes, double cutoff,
                         std::vector<double> &solution) const;
  static constexpr double kIntegrality = 1e-7;
};

} // namespace mlir::tp

#endif // TP_LIB_DIALECT_TP_TRANSFORMS_MIXEDINTEGERPROGRAM_H
