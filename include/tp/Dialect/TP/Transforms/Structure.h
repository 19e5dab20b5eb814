//===- Structure.h - What propagation and partitioning split ----*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_TRANSFORMS_STRUCTURE_H
#define TP_DIALECT_TP_TRANSFORMS_STRUCTURE_H

#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::tp {

/// Checks that `func` is one block (structured control flow only); emits an
/// error on it otherwise. Propagation and partitioning refuse branches
/// between blocks rather than produce invalid IR.
LogicalResult checkSingleBlock(FunctionOpInterface func);

/// Checks that partitioning can split `func`: one block, and region control
/// flow (scf.for, scf.if, scf.while, ...) over tensors only where
/// propagation replicated it whole (no constraint or split sharding inside,
/// so the region runs unchanged on every device). Emits an error on the
/// offending op otherwise: such programs are refused, never
/// half-partitioned.
LogicalResult checkShardableStructure(FunctionOpInterface func);

/// The mesh that `func`'s constraints (argument and result `tp.sharding`,
/// tp.annotate, tp.reshard) name; an error names two places that disagree.
/// Null when the function names none.
FailureOr<MeshOp> findFunctionMesh(FunctionOpInterface func,
                                   SymbolTableCollection &symbols);

/// Where a block in program order holds the most: the values its ops make
/// are each live from their op to their last user's (a user inside a region
/// counts as the block's op around it; a value without users is not
/// counted), weighed by `bytesOf` (0: not counted). A reshape's result is a
/// view: its users keep its source live (nothing when that is an argument). The
/// peak's bytes and the values live there. What --tp-report prints and
/// auto-plan's memory model charges.
struct LivePeak {
  double bytes = 0;
  SmallVector<Value> values;
};
LivePeak findLivePeak(Block &body, function_ref<double(Value)> bytesOf);

/// findLivePeak in two steps: the live range of every value `body`'s ops
/// make (in positions of the block's ops; only values with users that are
/// their own storage), which depends on the block's structure alone, then
/// the peak of those ranges weighed by `bytesOf`.
struct LiveRange {
  Value value;
  unsigned from, to;
};
struct LiveRanges {
  std::vector<LiveRange> ranges;
  unsigned numOps = 0;
};
LiveRanges findLiveRanges(Block &body);
LivePeak findLivePeak(const LiveRanges &ranges,
                      function_ref<double(Value)> bytesOf);

/// Sets one discardable attribute (`tp.shardings`, `tp.origins`) on op after
/// op, as Operation::setAttr does, building each resulting attribute
/// dictionary once: the ops of a repeated layer share theirs.
class DiscardableAttrWriter {
public:
  explicit DiscardableAttrWriter(StringAttr name) : name(name) {}
  void set(Operation *op, Attribute value);

private:
  StringAttr name;
  DenseMap<std::pair<Attribute, Attribute>, DictionaryAttr> made;
};

} // namespace mlir::tp

#endif // TP_DIALECT_TP_TRANSFORMS_STRUCTURE_H
