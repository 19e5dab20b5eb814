//===- Passes.h - tp dialect passes -----------------------------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_TRANSFORMS_PASSES_H
#define TP_DIALECT_TP_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::tp {

#define GEN_PASS_DECL
#include "tp/Dialect/TP/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tp/Dialect/TP/Transforms/Passes.h.inc"

class MeshOp;
struct OpChoices;
class ShardingRuleCache;
namespace detail {
class ReshardInserter;
} // namespace detail

/// What decideReshards decided, kept to be inserted later without deciding
/// again, as long as the IR has not changed in between.
class DecidedReshards {
public:
  DecidedReshards();
  DecidedReshards(DecidedReshards &&);
  DecidedReshards &operator=(DecidedReshards &&);
  ~DecidedReshards();
  /// Whether it holds a decision.
  explicit operator bool() const { return bool(inserter); }
  /// Inserts the decided reshards, erases the producers no longer used and
  /// writes the final shardings: what insertReshards without a plan does on
  /// the same IR. The decision's diagnostics (remarks), held back, are given
  /// first. Leaves this empty.
  LogicalResult insert();

private:
  friend LogicalResult decideReshards(FunctionOpInterface, MeshOp,
                                      const InsertReshardsPassOptions &,
                                      OpChoices &, DecidedReshards &,
                                      ShardingRuleCache *);
  std::unique_ptr<detail::ReshardInserter> inserter;
  std::vector<Diagnostic> diagnostics;
};

/// Makes every op of `func` (propagated over `mesh`: `tp.sharding` on its
/// arguments, `tp.shardings` on its ops) read its operands in the shardings
/// its decision needs, inserting tp.reshard; what `--tp-insert-reshards` does
/// per function, and the last step of `--tp-propagate`.
/// With `plan` (auto-plan, search), an op it holds takes its planned
/// decision and carries on the pending sums the plan says (reducing every
/// other). With `made`, records every ruled op's decision and the pending
/// sums it carried on (what the fixed point's plan is, for the search to
/// cost). With `rules`, asks that cache for the ops' rules (shared with the
/// passes before, which have asked already) and keeps it true as ops are
/// erased.
LogicalResult insertReshards(FunctionOpInterface func, MeshOp mesh,
                             const InsertReshardsPassOptions &options,
                             const OpChoices *plan = nullptr,
                             OpChoices *made = nullptr,
                             ShardingRuleCache *rules = nullptr);
/// What `insertReshards` would choose for every ruled op of `func` (its
/// decision, the pending sums it carries on), the IR left as it is: the
/// fixed point's plan, for the search to cost. The decision is kept in
/// `kept`, its diagnostics held back, for DecidedReshards::insert to carry
/// out when nothing replaces it: the reshards are not decided twice. On
/// failure `kept` is empty and nothing is reported (the insertion reports
/// it when it runs).
LogicalResult decideReshards(FunctionOpInterface func, MeshOp mesh,
                             const InsertReshardsPassOptions &options,
                             OpChoices &made, DecidedReshards &kept,
                             ShardingRuleCache *rules = nullptr);

/// Options of the `tp-spmd` pipeline.
/// Parses `text`, --tp-propagate's option text (`auto-plan
/// memory-per-device=80GB`), over `options`: the options it names change,
/// the others keep their values. `given`, when not null, receives the names
/// of the options the text sets. On a bad option or value, fails with
/// `error` (the option parser's message).
LogicalResult parsePropagateOptions(StringRef text,
                                    PropagatePassOptions &options,
                                    llvm::StringSet<> *given,
                                    std::string &error);

/// --tp-spmd's options are --tp-propagate's, declared once in Passes.td; the
/// pipeline's defaults differ in one: the search is on, unless
/// sequence-parallel is (whose reduce-scatters it does not plan; asking for
/// both is an error). Parses `text` into `options` at those defaults;
/// `given`, when not null, receives the names the text sets.
LogicalResult parseSPMDOptions(StringRef text, PropagatePassOptions &options,
                               std::string &error,
                               llvm::StringSet<> *given = nullptr);

/// Global form -> local form: fold reshapes, propagate with `options`,
/// partition, optimize collectives, canonicalize.
void buildSPMDPipeline(OpPassManager &pm, const PropagatePassOptions &options);

/// Registers `tp-spmd`.
void registerTPPipelines();

} // namespace mlir::tp

#endif // TP_DIALECT_TP_TRANSFORMS_PASSES_H
