//===- TPOps.h - tp dialect operations --------------------------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_IR_TPOPS_H
#define TP_DIALECT_TP_IR_TPOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "tp/Dialect/TP/IR/Collectives.h"
#include "tp/Dialect/TP/IR/TPAttrs.h"
#include "tp/Dialect/TP/IR/TPDialect.h"

namespace mlir::tp {
class MeshOp;
} // namespace mlir::tp

namespace mlir::tp {
class MeshOp;
/// Memory effects of a data collective: none on tensors; on memrefs, a read
/// of the operand and a write of the `into` buffer.
void getCollectiveEffects(
    Operation *op,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects);
} // namespace mlir::tp

#define GET_OP_CLASSES
#include "tp/Dialect/TP/IR/TPOps.h.inc"

namespace mlir::tp {

/// True when `op` sits in a function in local (SPMD) form, i.e. one marked
/// `tp.spmd`: its tensor types are per-device shards.
bool isInLocalForm(Operation *op);

/// Checks `sharding` against the tensor (or, after bufferization, memref) type
/// it describes and the mesh it names, as seen from `anchor` (the op that holds
/// or uses it). In local form
/// (`local`), types are shards already and divisibility is not checked.
/// Reports through `emitError` and returns the mesh on success.
FailureOr<MeshOp>
verifyShardingFor(ShardingAttr sharding, Type type, Operation *anchor,
                  bool local, function_ref<InFlightDiagnostic()> emitError,
                  SymbolTableCollection *symbols = nullptr);

/// The sharding a tp.annotate or tp.reshard fixes for its result; null for
/// any other op.
ShardingAttr getOwnSharding(Operation *op);

/// Removes the discardable attributes whose names `drop` accepts from every
/// op under `root` (itself included) and from the arguments and results of
/// every function there.
void removeDiscardableAttrs(Operation *root,
                            function_ref<bool(StringRef)> drop);

/// `file:line:col` for a file location, the printed location otherwise.
std::string formatLocation(Location loc);

/// The per-device shape of a tensor of global shape `globalShape` split by
/// `sharding` over `mesh`. Dynamic dimensions stay dynamic. The sharding must
/// have been verified for that shape.
SmallVector<int64_t> getShardShape(ArrayRef<int64_t> globalShape,
                                   ShardingAttr sharding, MeshOp mesh);

/// The global shape of a tensor whose per-device shard has `shardShape`.
SmallVector<int64_t> getGlobalShape(ArrayRef<int64_t> shardShape,
                                    ShardingAttr sharding, MeshOp mesh);

} // namespace mlir::tp

#endif // TP_DIALECT_TP_IR_TPOPS_H
