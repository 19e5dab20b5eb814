//===- Uniformity.h - Values equal on every device of a group ---*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// In local (SPMD) form every device runs the same program on its own shards.
// A value varies over a mesh axis when two devices whose coordinates differ
// only along that axis may hold different values. This forward dataflow
// analysis (MLIR's sparse dataflow framework, one function at a time) finds,
// for every value, the axes it may vary over:
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
// Calls to private functions whose every use is a call carry variance both
// ways through summaries: such a function's arguments vary over what its call
// sites pass (joined over them), a call's results over what the function
// returns. VarianceInfo runs the analysis and recomputes the summaries until
// they no longer change (each only grows, through a lattice a few axes high):
// a few linear passes over the module, where MLIR's interprocedural mode
// joins every call site again whenever one more is found, which is quadratic
// in the calls (a 1,024-layer driver: 1.6 s).
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_IR_UNIFORMITY_H
#define TP_DIALECT_TP_IR_UNIFORMITY_H

#include "mlir/Analysis/DataFlow/SparseAnalysis.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/CallInterfaces.h"

#include <memory>
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
  bool operator!=(const Variance &other) const { return !(*this == other); }
  void print(raw_ostream &os) const;

private:
  enum class State { Unknown, Axes, Everything };
  using MeshAxis = std::pair<StringAttr, StringAttr>;
  State state = State::Unknown;
  /// Sorted, unique.
  SmallVector<MeshAxis> axes;
};

using VarianceLattice = dataflow::Lattice<Variance>;

/// What crosses calls: the variance each summarized function's arguments
/// receive, and each call to one of them returns.
struct VarianceSummaries {
  DenseMap<Value, Variance> arguments;
  DenseMap<Operation *, SmallVector<Variance, 1>> callResults;

  bool operator==(const VarianceSummaries &other) const {
    return arguments == other.arguments && callResults == other.callResults;
  }
};

/// The analysis, over one function at a time (a solver configured as not
/// interprocedural), with the calls' `summaries`; load it into a
/// DataFlowSolver together with dataflow::DeadCodeAnalysis and
/// dataflow::SparseConstantPropagation. VarianceInfo does that.
class VarianceAnalysis
    : public dataflow::SparseForwardDataFlowAnalysis<VarianceLattice> {
public:
  VarianceAnalysis(DataFlowSolver &solver, const VarianceSummaries &summaries)
      : SparseForwardDataFlowAnalysis(solver), summaries(summaries) {}

  LogicalResult visitOperation(Operation *op,
                               ArrayRef<const VarianceLattice *> operands,
                               ArrayRef<VarianceLattice *> results) override;
  /// A loop's induction variables: they vary where its operands (bounds,
  /// steps) vary.
  void visitNonControlFlowArguments(Operation *op,
                                    const RegionSuccessor &successor,
                                    ArrayRef<VarianceLattice *> argLattices,
                                    unsigned firstIndex) override;
  /// A call: its summary, or every axis.
  void visitExternalCall(CallOpInterface call,
                         ArrayRef<const VarianceLattice *> arguments,
                         ArrayRef<VarianceLattice *> results) override;
  void setToEntryState(VarianceLattice *lattice) override;

private:
  const VarianceSummaries &summaries;
};

/// The variance of every value under `root` (a module, or a function and
/// what it calls), across calls.
class VarianceInfo {
public:
  VarianceInfo();
  ~VarianceInfo();

  /// Runs the analysis to its fixed point; fails where the dataflow solver
  /// does (then nothing is known).
  LogicalResult run(Operation *root);

  /// Whether `value` is the same on every device of a group over `axes` of
  /// `mesh` (false where the analysis did not reach `value`).
  bool isUniformOver(Value value, FlatSymbolRefAttr mesh,
                     ArrayRef<StringRef> axes) const;

private:
  std::unique_ptr<DataFlowSolver> solver;
  VarianceSummaries summaries;
};

} // namespace mlir::tp

#endif // TP_DIALECT_TP_IR_UNIFORMITY_H
