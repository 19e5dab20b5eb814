//===- Uniformity.h - Values equal on every device of a group ---*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// In local (SPMD) form every device runs the same program on its own shards.
// A value varies over a mesh axis when two devices whose coordinates differ
// only along that axis may hold different values. This forward dataflow
// analysis (MLIR's sparse dataflow framework, interprocedural through calls
// to private functions) finds, for every value, the axes it may vary over:
//
// - an entry function's argument varies over the axes its `tp.sharding`
//   splits a dimension over or leaves a pending sum over; an argument without
//   one, and the result of an op the analysis does not know, vary over every
//   axis;
// - `tp.axis_index` varies over its axes; `tp.all_slice`,
//   `tp.reduce_scatter` and `tp.all_to_all` over their operand's axes and
//   their own; `tp.all_reduce` and `tp.all_gather` over their operand's
//   axes less their own (every member of the group gets the same result);
// - any other op without memory effects over the union of its operands'
//   axes and those of the values its regions read from above; a loop's
//   induction variables over its operands' axes.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_IR_UNIFORMITY_H
#define TP_DIALECT_TP_IR_UNIFORMITY_H

#include "mlir/Analysis/DataFlow/SparseAnalysis.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <utility>

namespace mlir::tp {

/// The mesh axes a value may vary over: a lattice from "not yet known"
/// through sets of (mesh, axis) to "every axis".
class Variance {
public:
  /// Not yet known (the dataflow framework's starting point).
  Variance() = default;
  /// Varies over every axis of every mesh.
  static Variance everything();
  /// Varies over `axes` of `mesh` (none: the same on every device).
  static Variance over(FlatSymbolRefAttr mesh, ArrayRef<StringRef> axes);

  bool isKnown() const { return state != State::Unknown; }
  /// Whether two devices of one group over `axes` of `mesh` may hold
  /// different values.
  bool variesOver(FlatSymbolRefAttr mesh, ArrayRef<StringRef> axes) const;
  /// This variance, without `axes` of `mesh`.
  Variance without(FlatSymbolRefAttr mesh, ArrayRef<StringRef> axes) const;

  static Variance join(const Variance &lhs, const Variance &rhs);
  bool operator==(const Variance &other) const {
    return state == other.state && axes == other.axes;
  }
  void print(raw_ostream &os) const;

private:
  enum class State { Unknown, Axes, Everything };
  using MeshAxis = std::pair<StringAttr, StringAttr>;
  State state = State::Unknown;
  /// Sorted, unique.
  SmallVector<MeshAxis> axes;
};

using VarianceLattice = dataflow::Lattice<Variance>;

/// The analysis; load it into a DataFlowSolver together with
/// dataflow::DeadCodeAnalysis and dataflow::SparseConstantPropagation.
class VarianceAnalysis
    : public dataflow::SparseForwardDataFlowAnalysis<VarianceLattice> {
public:
  using SparseForwardDataFlowAnalysis::SparseForwardDataFlowAnalysis;

  LogicalResult visitOperation(Operation *op,
                               ArrayRef<const VarianceLattice *> operands,
                               ArrayRef<VarianceLattice *> results) override;
  /// A loop's induction variables: they vary where its operands (bounds,
  /// steps) vary.
  void visitNonControlFlowArguments(Operation *op,
                                    const RegionSuccessor &successor,
                                    ArrayRef<VarianceLattice *> argLattices,
                                    unsigned firstIndex) override;
  void setToEntryState(VarianceLattice *lattice) override;
};

/// Whether `value` is the same on every device of a group over `axes` of
/// `mesh`, by a solver that ran VarianceAnalysis (false when it did not
/// reach `value`).
bool isUniformOver(const DataFlowSolver &solver, Value value,
                   FlatSymbolRefAttr mesh, ArrayRef<StringRef> axes);

} // namespace mlir::tp

#endif // TP_DIALECT_TP_IR_UNIFORMITY_H
