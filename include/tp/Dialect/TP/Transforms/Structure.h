//===- Structure.h - What propagation and partitioning can split -*- C++
//-*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_TRANSFORMS_STRUCTURE_H
#define TP_DIALECT_TP_TRANSFORMS_STRUCTURE_H

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

} // namespace mlir::tp

#endif // TP_DIALECT_TP_TRANSFORMS_STRUCTURE_H
