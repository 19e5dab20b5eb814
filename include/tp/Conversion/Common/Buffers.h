//===- Buffers.h - What the lowerings ask of a buffer ---------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Sizes and memory of bufferized values, shared by the passes that plan
// memory (tp-upload-constants, tp-plan-arena) and that map ops to kernels
// (tp-map-linalg-to-gpu, tp-fuse-attention, their cost attributes).
//
//===----------------------------------------------------------------------===//

#ifndef TP_CONVERSION_COMMON_BUFFERS_H
#define TP_CONVERSION_COMMON_BUFFERS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace mlir::tp {

/// Bytes of a statically shaped memref of int or float elements, as LLVM
/// stores them (an i1, a mask, takes a byte); nothing for a dynamic shape,
/// another element type, or elements of a fraction of a byte other than i1.
/// The layout is not looked at: the bytes of the elements, not of the span.
std::optional<int64_t> staticByteSize(MemRefType type);

/// The memory a buffer views: its root (an allocation, an argument, a
/// global) and, where the views are static and the buffer is identity-laid
/// out, the bytes of the root it spans.
struct BufferExtent {
  Value root;
  std::optional<int64_t> begin, end;
};
BufferExtent extentOf(Value buffer);

/// Whether two buffers of `func` may share memory. Distinct allocations,
/// globals and the arguments of a public function (an entry point's arrays)
/// do not; the arguments of a private function (a layer its callers pass
/// views to) may share memory with each other; views of one root share
/// memory unless both spans are static and disjoint.
bool mayAlias(Value a, Value b, func::FuncOp func);

} // namespace mlir::tp

#endif // TP_CONVERSION_COMMON_BUFFERS_H
