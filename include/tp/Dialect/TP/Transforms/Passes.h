//===- Passes.h - tp dialect passes -----------------------------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_TRANSFORMS_PASSES_H
#define TP_DIALECT_TP_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tp {

#define GEN_PASS_DECL
#include "tp/Dialect/TP/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tp/Dialect/TP/Transforms/Passes.h.inc"

} // namespace mlir::tp

#endif // TP_DIALECT_TP_TRANSFORMS_PASSES_H
